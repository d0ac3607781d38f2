// The size-aware memory ceiling: the fit against curves made by hand, the judgement's words for
// it, and the CPU backend's measured curve.
#include "bwprof/size_curve.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <variant>

#include "bwprof/api.hpp"
#include "bwprof/peaks.hpp"
#include "bwprof/roofline.hpp"
#include "test_util.hpp"

using namespace bwprof;

namespace {
// t(B) = t0 + B / bw for bytes from 4 KB doubling up to `to`, by one kernel writing `w` of its bytes.
std::vector<SizePoint> line(double t0_us, double bw_gbs, double to = 2e9, const char* kernel = "stream_copy",
                            double w = 0.5) {
  std::vector<SizePoint> pts;
  for (double b = 4096; b <= to; b *= 2) pts.push_back({kernel, b, t0_us + b / (bw_gbs * 1e3), w});
  return pts;
}
}  // namespace

TEST(SizeCurve, FitRecoversAFixedCostAndTheAsymptote) {
  // The H100 figure: a read after a flush takes about 4 us + B / 3.26 TB/s.
  const SizeCurve c = fit_size_curve(line(4.0, 3260.0, 2e9, "stream_read", 0.0));
  ASSERT_TRUE(c.known());
  ASSERT_EQ(c.lines.size(), 1u);
  const SizeLine l = c.line(0.0);
  EXPECT_EQ(l.pattern, "read");
  EXPECT_EQ(l.kernels, "stream_read");
  EXPECT_NEAR(l.t0_us, 4.0, 1e-6);
  EXPECT_NEAR(l.bandwidth_gbs, 3260.0, 1e-3);
  EXPECT_LT(l.residual_pct, 1e-6);
  EXPECT_LT(l.max_error_pct, 1e-6);
  EXPECT_EQ(l.fitted_points, 19);  // 4 KB .. 1 GiB
  EXPECT_EQ(c.fitted_points(), 19);
  // 33.5 MB: 10.28 us of bytes after 4 us of fixed cost.
  EXPECT_NEAR(l.time_us(33.5e6), 4.0 + 33.5e6 / 3.26e6, 1e-6);
  EXPECT_NEAR(l.attainable_gbs(33.5e6), 33.5e6 / (4.0 + 33.5e6 / 3.26e6) / 1e3, 1e-6);
  EXPECT_LT(l.attainable_gbs(4096), 1.1);  // 4 KB in ~4 us: about 1 GB/s
  EXPECT_TRUE(std::isnan(l.time_us(0)));
  // One line: every pattern is judged against it.
  EXPECT_EQ(c.line(0.5).t0_us, l.t0_us);
  EXPECT_EQ(c.line(1.0).bandwidth_gbs, l.bandwidth_gbs);
}

TEST(SizeCurve, TheFastestKernelOfAPatternAtEachSizeIsItsLine) {
  auto pts = line(4.0, 3000.0, 1e9, "stream_copy");
  // A slower kernel of the same pattern at (nearly) the same sizes changes nothing: the envelope
  // is the fastest.
  for (const SizePoint& p : line(6.0, 2500.0, 1e9, "stream_add")) pts.push_back({p.kernel, p.bytes + 4, p.time_us, 0.504});
  const SizeCurve c = fit_size_curve(pts);
  ASSERT_EQ(c.lines.size(), 1u);
  EXPECT_NEAR(c.lines[0].t0_us, 4.0, 1e-6);
  EXPECT_NEAR(c.lines[0].bandwidth_gbs, 3000.0, 1e-3);
  EXPECT_EQ(c.lines[0].pattern, "copy");
  EXPECT_EQ(c.lines[0].kernels, "stream_copy");  // the slower kernel is never the fastest
  EXPECT_EQ(c.points.size(), pts.size());        // every measured point is kept
  EXPECT_EQ(c.fitted_points(), static_cast<int>(pts.size() / 2));
}

TEST(SizeCurve, EachAccessPatternHasItsOwnLine) {
  // A copy whose writes end in a cache runs faster than a read of the same bytes: one line through
  // both would promise a read the copy's time. Two patterns, two lines.
  auto pts = line(4.0, 3000.0, 1e9, "stream_read", 0.0001);
  for (const SizePoint& p : line(3.5, 3400.0, 1e9, "stream_copy", 0.5)) pts.push_back(p);
  const SizeCurve c = fit_size_curve(pts);
  ASSERT_EQ(c.lines.size(), 2u);
  EXPECT_EQ(c.lines[0].pattern, "read");
  EXPECT_EQ(c.lines[1].pattern, "copy");
  const SizeLine read = c.line(0.0), copy = c.line(0.5);
  EXPECT_NEAR(read.t0_us, 4.0, 1e-6);
  EXPECT_NEAR(read.bandwidth_gbs, 3000.0, 1e-3);
  EXPECT_NEAR(copy.t0_us, 3.5, 1e-6);
  EXPECT_NEAR(copy.bandwidth_gbs, 3400.0, 1e-3);
  EXPECT_NEAR(c.line(1.0).t0_us, 3.5, 1e-6);  // past the copy: the copy's line
  // A third of the bytes written (stream_add): two thirds of the way from the read to the copy,
  // in the fixed cost and in the time per byte.
  const double w = 1.0 / 3;
  const SizeLine add = c.line(w);
  const double f = (w - 0.0001) / (0.5 - 0.0001);
  EXPECT_NEAR(add.t0_us, 4.0 + f * (3.5 - 4.0), 1e-9);
  EXPECT_NEAR(1 / add.bandwidth_gbs, (1 - f) / 3000.0 + f / 3400.0, 1e-15);
  EXPECT_NEAR(add.time_us(33.5e6), (1 - f) * read.time_us(33.5e6) + f * copy.time_us(33.5e6), 1e-9);
  EXPECT_EQ(add.pattern, "write 33 %");
  EXPECT_LT(c.residual_pct(), 1e-6);
}

TEST(SizeCurve, TheWorstPointIsReportedBesideTheRms) {
  // 20 exact points and one 38 % slower: the RMS spreads it over all, the worst point does not.
  auto pts = line(4.0, 3260.0, 2e9, "stream_read", 0.0);
  pts[10].time_us *= 1.38;
  const SizeCurve c = fit_size_curve(pts);
  ASSERT_TRUE(c.known());
  EXPECT_LT(c.residual_pct(), 15.0);
  EXPECT_GT(c.max_error_pct(), 20.0);
  EXPECT_GT(c.max_error_pct(), 2 * c.residual_pct());
  // The worst of two lines is the curve's.
  auto both = pts;
  for (const SizePoint& p : line(3.5, 3400.0, 1e9, "stream_copy", 0.5)) both.push_back(p);
  const SizeCurve c2 = fit_size_curve(both);
  ASSERT_EQ(c2.lines.size(), 2u);
  EXPECT_DOUBLE_EQ(c2.residual_pct(), c2.lines[0].residual_pct);
  EXPECT_DOUBLE_EQ(c2.max_error_pct(), c2.lines[0].max_error_pct);
  EXPECT_LT(c2.lines[1].max_error_pct, 1e-6);
}

TEST(SizeCurve, RelativeWeightsKeepSmallSizesInTheFit) {
  // 5 % noise on every point: an unweighted fit would let the GB-sized points decide t0 alone.
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-0.05, 0.05);
  auto pts = line(4.0, 3260.0);
  for (auto& p : pts) p.time_us *= 1 + u(rng);
  const SizeCurve c = fit_size_curve(pts);
  ASSERT_TRUE(c.known());
  EXPECT_NEAR(c.lines[0].t0_us, 4.0, 0.4);
  EXPECT_NEAR(c.lines[0].bandwidth_gbs, 3260.0, 200.0);
  EXPECT_GT(c.residual_pct(), 0.5);
  EXPECT_LT(c.residual_pct(), 5.0);
  EXPECT_GE(c.max_error_pct(), c.residual_pct());
  EXPECT_LT(c.max_error_pct(), 12.0);
}

TEST(SizeCurve, NoNegativeFixedCostAndUnknownWithoutTwoSizes) {
  // Points that extrapolate to a negative t0 are fitted through the origin.
  const SizeCurve c = fit_size_curve({{"k", 1e6, 1.0}, {"k", 2e6, 2.5}, {"k", 4e6, 5.5}});
  ASSERT_TRUE(c.known());
  EXPECT_EQ(c.lines[0].t0_us, 0.0);
  EXPECT_GT(c.lines[0].bandwidth_gbs, 0);
  EXPECT_FALSE(fit_size_curve({}).known());
  EXPECT_FALSE(fit_size_curve({{"k", 4096, 4.0}}).known());
  EXPECT_FALSE(fit_size_curve({{"k", 4096, 4.0}, {"j", 4097, 3.0}}).known());  // one size
  EXPECT_FALSE(fit_size_curve({{"k", 4096, 4.0}, {"k", 8192, 2.0}}).known());  // faster when larger
  EXPECT_FALSE(fit_size_curve({{"k", 0, 4.0}, {"k", 8192, -1.0}, {"k", 1e6, NAN}}).known());
  // Two patterns of one size each: no line (a read's point never completes a copy's line).
  EXPECT_FALSE(fit_size_curve({{"k", 4096, 4.0, 0.0}, {"j", 8192, 5.0, 0.5}}).known());
  // A pattern that cannot be fitted is left out; the other stays.
  auto pts = line(4.0, 3000.0, 1e8, "stream_read", 0.0);
  pts.push_back({"stream_copy", 4096, 4.0, 0.5});
  const SizeCurve one = fit_size_curve(pts);
  ASSERT_EQ(one.lines.size(), 1u);
  EXPECT_EQ(one.lines[0].pattern, "read");
  EXPECT_EQ(one.line(0.5).pattern, "read");
  EXPECT_TRUE(std::isnan(SizeCurve().line(0).attainable_gbs(1e6)));
  EXPECT_TRUE(std::isnan(SizeCurve().residual_pct()));
}

TEST(SizeCurve, ARowIsJudgedAgainstTheLineOfItsPattern) {
  Peaks p;
  auto pts = line(4.0, 3000.0, 1e9, "stream_read", 0.0);
  for (const SizePoint& s : line(3.5, 3400.0, 1e9, "stream_copy", 0.5)) pts.push_back(s);
  p.size_curve = fit_size_curve(pts);
  const Roofs read = roofs_from(p, "fp16", 0.0), copy = roofs_from(p, "fp16", 0.5);
  EXPECT_NEAR(read.size_t0_us, 4.0, 1e-6);
  EXPECT_NEAR(read.size_bandwidth_gbs, 3000.0, 1e-3);
  EXPECT_NEAR(copy.size_t0_us, 3.5, 1e-6);
  EXPECT_NEAR(copy.size_bandwidth_gbs, 3400.0, 1e-3);
  // A GEMV of 33.5 MB (8 KB written) in 14 us: against the read line, not the faster copy's.
  Measurement m;
  m.bytes_read = 33.5e6 - 8192;
  m.bytes_written = 8192;
  m.time_us.median = 14.0;
  m.dtype = "fp16";
  m.peaks = p;
  derive_rates(m, AccessPattern::kCoalesced);
  const double t_read = 4.0 + 33.5e6 / 3.0e6;
  EXPECT_NEAR(m.bandwidth_pct_attainable, 100 * t_read / 14.0, 0.05);
  bool found = false;
  for (const auto& kv : m.record())
    if (kv.first == "size_bandwidth_gbs") {
      found = true;
      EXPECT_NEAR(std::get<double>(kv.second), 3000.0, 1.0);
    }
  EXPECT_TRUE(found);
}

TEST(SizeCurve, TheJudgementSaysWhatAnyKernelOfThisSizeReaches) {
  Roofs r;
  r.bandwidth_gbs = 3350;  // the stream peak
  r.bandwidth_theoretical_gbs = 3352;
  r.size_t0_us = 4.0;
  r.size_bandwidth_gbs = 3260;
  Work w;
  w.bytes = 33.5e6;
  w.dtype = "fp16";
  w.cache = "cold";
  const double ceiling_us = 4.0 + 33.5e6 / 3.26e6;
  w.time_us = ceiling_us / 0.94;  // 94 % of the size-aware ceiling
  Judgement j = judge(w, r);
  EXPECT_NEAR(j.attainable_bandwidth_gbs, 33.5e6 / ceiling_us / 1e3, 1e-9);
  EXPECT_NEAR(j.bandwidth_pct_attainable, 94.0, 1e-9);
  EXPECT_NEAR(j.fixed_cost_pct, 100 * 4.0 / ceiling_us, 1e-9);
  EXPECT_EQ(j.bound, "memory");  // 66 % of the asymptotic roof: the roofs decide the bound
  EXPECT_TRUE(has(j.bottleneck, "at 94 % of what any kernel moving 33.5 MB reaches on this device; the fixed "
                                "cost is 28 % of the time")) << j.bottleneck;

  // 64 KB in 6 us: 1 % of the roof, but 76 % of what any 64 KB kernel reaches: the size.
  w.bytes = 65536;
  w.time_us = (4.0 + 65536 / 3.26e6) / 0.76;
  j = judge(w, r);
  EXPECT_EQ(j.bound, "latency");
  EXPECT_NEAR(j.bandwidth_pct_attainable, 76.0, 1e-9);
  EXPECT_TRUE(has(j.bottleneck, "at 76 % of what any kernel moving 65.5 KB reaches")) << j.bottleneck;
  EXPECT_TRUE(has(j.bottleneck, "its size, not the kernel, sets the time")) << j.bottleneck;
  // The same bytes five times slower: the kernel itself waits.
  w.time_us *= 5;
  j = judge(w, r);
  EXPECT_FALSE(has(j.bottleneck, "its size, not the kernel")) << j.bottleneck;
  EXPECT_TRUE(has(j.bottleneck, "neither roof explains the time")) << j.bottleneck;

  // Without a curve: no figures, and the text of before.
  r.size_bandwidth_gbs = 0;
  j = judge(w, r);
  EXPECT_TRUE(std::isnan(j.attainable_bandwidth_gbs));
  EXPECT_TRUE(std::isnan(j.bandwidth_pct_attainable));
  EXPECT_TRUE(std::isnan(j.fixed_cost_pct));
  EXPECT_FALSE(has(j.bottleneck, "any kernel moving")) << j.bottleneck;
}

TEST(SizeCurve, TheCpuBackendMeasuresOneWithItsPeaks) {
  const Peaks p = device_peaks(backend_for("cpu"), DType::kF32);
  const SizeCurve& c = p.size_curve;
  ASSERT_TRUE(c.known()) << c.points.size() << " points";
  EXPECT_TRUE(std::isfinite(c.residual_pct()));
  // The clean read and the copy, from 4 KB to a few hundred MB; a line each.
  int copy = 0, read = 0;
  double lo = 1e30, hi = 0;
  for (const SizePoint& s : c.points) {
    copy += s.kernel == "stream_copy";
    read += s.kernel == "stream_read";
    EXPECT_EQ(s.kernel == "stream_copy" ? 0.5 : 0.0, std::round(s.write_fraction * 100) / 100) << s.kernel;
    lo = std::min(lo, s.bytes);
    hi = std::max(hi, s.bytes);
    EXPECT_GT(s.time_us, 0);
  }
  EXPECT_GE(copy, 6);
  EXPECT_GE(read, 6);
  EXPECT_EQ(copy + read, static_cast<int>(c.points.size()));  // the dot is not on the curve
  EXPECT_LE(lo, 4100);
  EXPECT_GE(hi, 250e6);
  ASSERT_EQ(c.lines.size(), 2u);
  EXPECT_EQ(c.lines[0].kernels, "stream_read");
  EXPECT_EQ(c.lines[1].kernels, "stream_copy");
  for (const SizeLine& l : c.lines) {
    EXPECT_GE(l.t0_us, 0);
    EXPECT_GT(l.bandwidth_gbs, 0);
    EXPECT_GE(l.fitted_points, 6);
  }
  // A measured row carries the line of its pattern and its figures at the row's bytes.
  RunOptions opt;
  opt.min_repeats = 3;
  opt.min_time_s = 0.001;
  for (const char* k : {"stream_copy", "stream_read"}) {
    Measurement m = measure(k, "fp32", "cpu", "", {{"n", "65536"}}, opt);
    // (The device's curve, or a newer one: a row clearly above a measured peak retakes the peaks.)
    const SizeLine ml = m.peaks.size_curve.line(m.write_fraction());
    ASSERT_TRUE(ml.known());
    EXPECT_EQ(ml.kernels, k);
    EXPECT_NEAR(m.attainable_bandwidth_gbs, ml.attainable_gbs(m.bytes_read + m.bytes_written), 1e-9);
    EXPECT_NEAR(m.bandwidth_pct_attainable, 100 * m.bandwidth_gbs / m.attainable_bandwidth_gbs, 1e-9);
    EXPECT_TRUE(m.verified) << k;
  }
}
