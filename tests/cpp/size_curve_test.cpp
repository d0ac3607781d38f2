// The size-aware memory ceiling: the fit against curves made by hand, the judgement's words for
// it, and the CPU backend's measured curve.
#include "bwprof/size_curve.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "bwprof/api.hpp"
#include "bwprof/peaks.hpp"
#include "bwprof/roofline.hpp"

using namespace bwprof;

namespace {
// t(B) = t0 + B / bw for bytes from 4 KB doubling up to `to`, by one kernel.
std::vector<SizePoint> line(double t0_us, double bw_gbs, double to = 2e9, const char* kernel = "stream_copy") {
  std::vector<SizePoint> pts;
  for (double b = 4096; b <= to; b *= 2) pts.push_back({kernel, b, t0_us + b / (bw_gbs * 1e3)});
  return pts;
}
bool has(const std::string& text, const char* what) { return text.find(what) != std::string::npos; }
}  // namespace

TEST(SizeCurve, FitRecoversAFixedCostAndTheAsymptote) {
  // The H100 figure: a read after a flush takes about 4 us + B / 3.26 TB/s.
  const SizeCurve c = fit_size_curve(line(4.0, 3260.0));
  ASSERT_TRUE(c.known());
  EXPECT_NEAR(c.t0_us, 4.0, 1e-6);
  EXPECT_NEAR(c.bandwidth_gbs, 3260.0, 1e-3);
  EXPECT_LT(c.residual_pct, 1e-6);
  EXPECT_EQ(c.fitted_points, 19);  // 4 KB .. 1 GiB
  // 33.5 MB: 10.28 us of bytes after 4 us of fixed cost.
  EXPECT_NEAR(c.time_us(33.5e6), 4.0 + 33.5e6 / 3.26e6, 1e-6);
  EXPECT_NEAR(c.attainable_gbs(33.5e6), 33.5e6 / (4.0 + 33.5e6 / 3.26e6) / 1e3, 1e-6);
  EXPECT_LT(c.attainable_gbs(4096), 1.1);  // 4 KB in ~4 us: about 1 GB/s
  EXPECT_TRUE(std::isnan(c.time_us(0)));
}

TEST(SizeCurve, TheFastestKernelAtEachSizeIsTheCeiling) {
  auto pts = line(4.0, 3000.0, 1e9, "stream_copy");
  // A slower kernel at (nearly) the same sizes changes nothing: the envelope is the fastest.
  for (const SizePoint& p : line(6.0, 2500.0, 1e9, "stream_dot")) pts.push_back({p.kernel, p.bytes + 4, p.time_us});
  const SizeCurve c = fit_size_curve(pts);
  EXPECT_NEAR(c.t0_us, 4.0, 1e-6);
  EXPECT_NEAR(c.bandwidth_gbs, 3000.0, 1e-3);
  EXPECT_EQ(c.points.size(), pts.size());  // every measured point is kept
  EXPECT_EQ(c.fitted_points, static_cast<int>(pts.size() / 2));
}

TEST(SizeCurve, RelativeWeightsKeepSmallSizesInTheFit) {
  // 5 % noise on every point: an unweighted fit would let the GB-sized points decide t0 alone.
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-0.05, 0.05);
  auto pts = line(4.0, 3260.0);
  for (auto& p : pts) p.time_us *= 1 + u(rng);
  const SizeCurve c = fit_size_curve(pts);
  EXPECT_NEAR(c.t0_us, 4.0, 0.4);
  EXPECT_NEAR(c.bandwidth_gbs, 3260.0, 200.0);
  EXPECT_GT(c.residual_pct, 0.5);
  EXPECT_LT(c.residual_pct, 5.0);
}

TEST(SizeCurve, NoNegativeFixedCostAndUnknownWithoutTwoSizes) {
  // Points that extrapolate to a negative t0 are fitted through the origin.
  const SizeCurve c = fit_size_curve({{"k", 1e6, 1.0}, {"k", 2e6, 2.5}, {"k", 4e6, 5.5}});
  ASSERT_TRUE(c.known());
  EXPECT_EQ(c.t0_us, 0.0);
  EXPECT_GT(c.bandwidth_gbs, 0);
  EXPECT_FALSE(fit_size_curve({}).known());
  EXPECT_FALSE(fit_size_curve({{"k", 4096, 4.0}}).known());
  EXPECT_FALSE(fit_size_curve({{"k", 4096, 4.0}, {"j", 4097, 3.0}}).known());  // one size
  EXPECT_FALSE(fit_size_curve({{"k", 4096, 4.0}, {"k", 8192, 2.0}}).known());  // faster when larger
  EXPECT_FALSE(fit_size_curve({{"k", 0, 4.0}, {"k", 8192, -1.0}, {"k", 1e6, NAN}}).known());
  EXPECT_TRUE(std::isnan(SizeCurve().attainable_gbs(1e6)));
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
  EXPECT_GE(c.t0_us, 0);
  EXPECT_GT(c.bandwidth_gbs, 0);
  EXPECT_TRUE(std::isfinite(c.residual_pct));
  // Read (the dot product) and copy, from 4 KB to a few hundred MB.
  int copy = 0, dot = 0;
  double lo = 1e30, hi = 0;
  for (const SizePoint& s : c.points) {
    copy += s.kernel == "stream_copy";
    dot += s.kernel == "stream_dot";
    lo = std::min(lo, s.bytes);
    hi = std::max(hi, s.bytes);
    EXPECT_GT(s.time_us, 0);
  }
  EXPECT_GE(copy, 6);
  EXPECT_EQ(copy, dot);
  EXPECT_LE(lo, 4100);
  EXPECT_GE(hi, 250e6);
  EXPECT_GE(c.fitted_points, 6);
  // A measured row carries the curve and its figures at the row's bytes.
  RunOptions opt;
  opt.min_repeats = 3;
  opt.min_time_s = 0.001;
  Measurement m = measure("stream_copy", "fp32", "cpu", "", {{"n", "65536"}}, opt);
  // (The device's curve, or a newer one: a row clearly above a measured peak retakes the peaks.)
  const SizeCurve& mc = m.peaks.size_curve;
  ASSERT_TRUE(mc.known());
  EXPECT_NEAR(m.attainable_bandwidth_gbs, mc.attainable_gbs(m.bytes_read + m.bytes_written), 1e-9);
  EXPECT_NEAR(m.bandwidth_pct_attainable, 100 * m.bandwidth_gbs / m.attainable_bandwidth_gbs, 1e-9);
}
