// The one roofline judgement, against rows worked out by hand.
#include "bwprof/roofline.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "bwprof/error.hpp"
#include "test_util.hpp"

using namespace bwprof;

namespace {
Roofs roofs(double bw, double bw_theo, double fl, double fl_theo, const char* name = "fp32 vector") {
  Roofs r;
  r.bandwidth_gbs = bw;
  r.bandwidth_theoretical_gbs = bw_theo;
  r.gflops = fl;
  r.gflops_theoretical = fl_theo;
  r.compute_name = name;
  return r;
}
Work work(double bytes, double flops, double us, const char* cache = "cold") {
  Work w;
  w.bytes = bytes;
  w.flops = flops;
  w.time_us = us;
  w.dtype = "fp32";
  w.cache = cache;
  return w;
}
}  // namespace

TEST(Judge, DerivesRatesFromTimeWhenNotGiven) {
  Judgement j = judge(work(1e9, 0, 1000.0), roofs(2000, 0, 1e4, 0));
  EXPECT_DOUBLE_EQ(j.bandwidth_gbs, 1000.0);
  EXPECT_DOUBLE_EQ(j.bandwidth_pct_peak, 50.0);
  EXPECT_EQ(j.bound, "memory");
}

TEST(Judge, AboveTheMeasuredPeakIsFlaggedEvenWhenADatasheetFigureIsKnown) {
  // 2x the measured bandwidth but under a (wrong, generous) datasheet figure: still flagged.
  Judgement j = judge(work(1e9, 0, 1000.0), roofs(500, 5000, 0, 0));
  EXPECT_TRUE(j.above_peak) << j.bottleneck;
  // 9 % above the measured peak is noise in that peak, not a cache figure.
  j = judge(work(1.09e9, 0, 1000.0), roofs(1000, 0, 0, 0));
  EXPECT_FALSE(j.above_peak) << j.bottleneck;
  j = judge(work(1.11e9, 0, 1000.0), roofs(1000, 0, 0, 0));
  EXPECT_TRUE(j.above_peak) << j.bottleneck;
}

TEST(Judge, ComputeAboveTheMeasuredPeakIsFlaggedWithoutADatasheet) {
  // 195 % of a measured compute roof that was taken during a slow patch.
  Judgement j = judge(work(1e6, 1.95e9, 1000.0), roofs(1000, 0, 1000, 0));
  EXPECT_TRUE(j.above_peak);
  EXPECT_EQ(j.grade, "n/a");  // no utilization grade for a figure the roof cannot explain
  EXPECT_TRUE(has(j.bottleneck, "above the measured fp32 vector roof (1 TFLOP/s)")) << j.bottleneck;
  EXPECT_TRUE(has(j.bottleneck, "refresh=True")) << j.bottleneck;
}

TEST(Judge, TheAboveText_IsTrueOfAColdAndOfAHotRow) {
  // The figure quoted is the device's peak, not the kernel's own, and a cold row is not told to
  // measure cold.
  Judgement cold = judge(work(8e6, 0, 100.0, "cold"), roofs(72, 0, 0, 0));
  EXPECT_TRUE(cold.above_peak);
  EXPECT_TRUE(has(cold.bottleneck, "80 GB/s is above the device's measured peak bandwidth (72 GB/s)")) << cold.bottleneck;
  EXPECT_FALSE(has(cold.bottleneck, "measure with cache='cold'")) << cold.bottleneck;
  EXPECT_TRUE(has(cold.bottleneck, "flushed")) << cold.bottleneck;
  Judgement hot = judge(work(8e6, 0, 100.0, "hot"), roofs(72, 0, 0, 0));
  EXPECT_TRUE(has(hot.bottleneck, "measure with cache='cold'")) << hot.bottleneck;
  Judgement theo = judge(work(1e9, 0, 100.0, "hot"), roofs(3000, 3350, 0, 0));
  EXPECT_TRUE(has(theo.bottleneck, "theoretical memory bandwidth (3.35 TB/s)")) << theo.bottleneck;
}

TEST(Judge, LatencyTextNamesTheRoofs) {
  // 1 FLOP/byte, 0.9 GFLOP/s against roofs 100 GB/s and 1000 GFLOP/s: 0.9 % of the memory roof.
  Judgement j = judge(work(1e9, 1e9, 1.0e6 / 0.9), roofs(100, 0, 1000, 0));
  EXPECT_EQ(j.bound, "latency");
  EXPECT_TRUE(has(j.bottleneck, "latency-bound: 0.9 % of the memory roof and 0.1 % of the fp32 vector roof"))
      << j.bottleneck;
  EXPECT_TRUE(has(j.bottleneck, "occupancy")) << j.bottleneck;
}

TEST(Judge, MatrixRoofForMatrixUnitWork) {
  Peaks p;
  p.bandwidth_gbs = 3000;
  p.gflops = 100e3;  // the vector roof
  use_compute_roof(p, "fp16 matrix", "fp16", 990e3);
  Roofs r = roofs_from(p, "fp16", 0.0);
  EXPECT_EQ(r.compute_name, "fp16 matrix (theoretical)");
  EXPECT_DOUBLE_EQ(r.gflops, 990e3);
  EXPECT_EQ(p.compute_source, "theoretical:fp16_matrix_units");
  // 600 TFLOP/s is 61 % of the matrix roof, and far above the vector one.
  Judgement j = judge(work(1e8, 6e11, 1000.0), r);
  EXPECT_EQ(j.bound, "compute");
  EXPECT_FALSE(j.above_peak);
  EXPECT_TRUE(has(j.bottleneck, "compute-bound at 61 % of the fp16 matrix (theoretical) roof")) << j.bottleneck;
}

TEST(Judge, UnknownTimeOrRoofs) {
  Judgement j = judge(work(1e9, 0, NAN), roofs(0, 0, 0, 0));
  EXPECT_EQ(j.bound, "unknown");
  EXPECT_FALSE(j.above_peak);
}

TEST(Judge, SaysWhenOnlyAMeasuredPeakIsExceeded) {
  // Above the measured bandwidth, no datasheet: a second look at the peak may settle it.
  EXPECT_TRUE(judge(work(2e9, 0, 1000.0), roofs(1000, 0, 0, 0)).above_measured_only);
  // Above the datasheet: no new measurement of the peak changes that.
  Judgement j = judge(work(4e9, 0, 1000.0), roofs(1000, 3350, 0, 0));
  EXPECT_TRUE(j.above_peak);
  EXPECT_FALSE(j.above_measured_only);
  EXPECT_FALSE(judge(work(1e9, 0, 1000.0), roofs(1000, 0, 0, 0)).above_measured_only);
}

TEST(Judge, AboveDramTheTextNamesTheLevelThatCanServeIt) {
  // 8 MB in 1.5 us (5.6 TB/s) hot, on a device whose DRAM roof is 3 TB/s and L2 roof 7.1 TB/s.
  Roofs r = roofs(3000, 3350, 0, 0);
  r.l2_gbs = 7100;
  r.l1_gbs = 30000;
  Judgement j = judge(work(8.4e6, 0, 1.5, "hot"), r);
  EXPECT_TRUE(j.above_peak);
  EXPECT_EQ(j.bottleneck.rfind("above DRAM: L2 can serve it (L2 roof 7.1 TB/s); 5.6 TB/s is above", 0), 0u) << j.bottleneck;
  EXPECT_TRUE(has(j.bottleneck, "measure with cache='cold'")) << j.bottleneck;
  // Faster than the L2 (within 10 % counts as the L2): L1 / shared memory serves it.
  j = judge(work(8.4e6, 0, 0.7, "hot"), r);
  EXPECT_EQ(j.bottleneck.rfind("above DRAM: L1/shared memory can serve it (L1/shared memory roof 30 TB/s); ", 0), 0u)
      << j.bottleneck;
  j = judge(work(7.8e6, 0, 1.0, "hot"), r);  // 7.8 TB/s: within 10 % of the L2 roof
  EXPECT_TRUE(has(j.bottleneck, "L2 can serve it")) << j.bottleneck;
  // Above every level: the declared bytes cannot be right.
  j = judge(work(8.4e6, 0, 0.1, "hot"), r);
  EXPECT_TRUE(has(j.bottleneck, "above every measured memory roof (the fastest, L1/shared memory, 30 TB/s)"))
      << j.bottleneck;
  // Without levels: the text it always had.
  j = judge(work(8.4e6, 0, 1.5, "hot"), roofs(3000, 3350, 0, 0));
  EXPECT_EQ(j.bottleneck.rfind("5.6 TB/s is above the device's theoretical memory bandwidth", 0), 0u) << j.bottleneck;
  EXPECT_EQ(serving_level(2000, r).first, "L2");
  EXPECT_EQ(serving_level(1e6, r).first, "");
}

TEST(Judge, MatrixRowsTakeTheMeasuredMatrixRoof) {
  Peaks p;
  p.gflops = 120000;
  use_compute_roof(p, "fp16 matrix", "fp16", 1070530);  // nothing measured: the architecture table's
  EXPECT_EQ(p.gflops, 1070530);
  EXPECT_EQ(p.compute_source, "theoretical:fp16_matrix_units");
  Peaks m;
  m.matrix_gflops = 820000;
  m.matrix_gflops_theoretical = 1070530;
  m.matrix_source = "measured:mma_peak_fp16";
  use_compute_roof(m, "fp16 matrix", "fp16", 999);
  EXPECT_EQ(m.gflops, 820000);
  EXPECT_EQ(m.gflops_theoretical, 1070530);
  EXPECT_EQ(m.compute_source, "measured:mma_peak_fp16 (matrix units)");
  EXPECT_EQ(roofs_from(m, "fp16", 0.0).compute_name, "fp16 matrix");
}

// FLOPs unknown (issue #43): bandwidth alone judges a row only where it proves it memory-bound.
namespace {
constexpr double kUnknown = std::numeric_limits<double>::quiet_NaN();
}

TEST(JudgeUnknownFlops, AGemmAtSixPercentOfTheMemoryRoofIsNotLatencyBound) {
  // 8192^3 FP16 GEMM: 402.7 MB in 1.429 ms against a 4.6 TB/s roof = 6.1 % of it; it is
  // compute-bound in truth (770 TFLOP/s), which bandwidth alone cannot tell.
  Judgement j = judge(work(402.653184e6, kUnknown, 1429.0), roofs(4600, 4800, 989000, 989000, "fp16 matrix"));
  EXPECT_EQ(j.bound, "unknown");
  EXPECT_EQ(j.grade, "n/a");
  EXPECT_NEAR(j.bandwidth_pct_peak, 100.0 * 402.653184e6 / 1429e-6 / 1e9 / 4600, 1e-9);
  EXPECT_TRUE(std::isnan(j.gflops));
  EXPECT_TRUE(std::isnan(j.compute_pct_peak));
  EXPECT_TRUE(std::isnan(j.intensity_flop_per_byte));
  EXPECT_TRUE(std::isnan(j.attainable_gflops));
  EXPECT_TRUE(std::isnan(j.roofline_efficiency_pct));
  EXPECT_FALSE(j.above_peak);
  EXPECT_EQ(j.bottleneck,
            "FLOPs unknown: at 6.1 % of the memory roof, bandwidth does not explain the time; pass flops= to judge "
            "it against the compute roof");
  EXPECT_FALSE(has(j.bottleneck, "latency")) << j.bottleneck;
}

TEST(JudgeUnknownFlops, DeclaredZeroIsPureDataMovementJudgedAsBefore) {
  // The same bytes and time with 0 FLOPs declared: a copy at 6.1 % of the roof is latency-bound.
  Judgement j = judge(work(402.653184e6, 0, 1429.0), roofs(4600, 4800, 989000, 989000));
  EXPECT_EQ(j.bound, "latency");
  EXPECT_DOUBLE_EQ(j.gflops, 0.0);
  EXPECT_DOUBLE_EQ(j.intensity_flop_per_byte, 0.0);
  EXPECT_DOUBLE_EQ(j.roofline_efficiency_pct, j.bandwidth_pct_peak);
}

TEST(JudgeUnknownFlops, BandwidthProvesMemoryBoundFromHalfTheRoof) {
  // 1 GB in 1 ms against 2000 GB/s: exactly 50 % of the roof is memory-bound whatever it computes.
  Judgement j = judge(work(1e9, kUnknown, 1000.0), roofs(2000, 0, 1e4, 0));
  EXPECT_DOUBLE_EQ(j.bandwidth_pct_peak, kOneRoofProvesPct);
  EXPECT_EQ(j.bound, "memory");
  EXPECT_EQ(j.grade, "fair");
  EXPECT_DOUBLE_EQ(j.roofline_efficiency_pct, 50.0);
  EXPECT_TRUE(std::isnan(j.gflops));
  EXPECT_TRUE(has(j.bottleneck, "memory-bound at 50 % of peak bandwidth (fair), whatever its FLOPs (not known)"))
      << j.bottleneck;
  // Just under it: not judged.
  j = judge(work(0.998e9, kUnknown, 1000.0), roofs(2000, 0, 1e4, 0));
  EXPECT_EQ(j.bound, "unknown");
  EXPECT_TRUE(has(j.bottleneck, "FLOPs unknown: at 49.9 % of the memory roof")) << j.bottleneck;
}

TEST(JudgeUnknownFlops, TheHintAndTheSizeCeilingShowInTheText) {
  Work w = work(1e6, kUnknown, 10.0);  // 100 GB/s: 5 % of 2000 GB/s
  w.flops_hint = "collect FLOP counters (--counters bandwidth)";
  Roofs r = roofs(2000, 0, 1e4, 0);
  r.size_t0_us = 8.0;  // t(1 MB) = 8 + 0.5 us: 117.6 GB/s attainable, 85 % of it reached
  r.size_bandwidth_gbs = 2000;
  Judgement j = judge(w, r);
  EXPECT_EQ(j.bound, "unknown");
  EXPECT_TRUE(has(j.bottleneck, "FLOPs unknown: at 5.0 % of the memory roof but at 85 % of what any kernel moving "
                                "1 MB reaches on this device"))
      << j.bottleneck;
  EXPECT_TRUE(has(j.bottleneck, "its size may set the time; collect FLOP counters (--counters bandwidth) to judge "
                                "it against the compute roof"))
      << j.bottleneck;
}

TEST(JudgeUnknownFlops, AboveThePeakAndNoPeakKeepTheirOwnTexts) {
  Judgement above = judge(work(1e9, kUnknown, 100.0, "hot"), roofs(3000, 3350, 1e4, 0));
  EXPECT_TRUE(above.above_peak);
  EXPECT_TRUE(has(above.bottleneck, "measure with cache='cold'")) << above.bottleneck;
  Judgement none = judge(work(1e9, kUnknown, 100.0), roofs(0, 0, 0, 0));
  EXPECT_EQ(none.bound, "unknown");
  EXPECT_TRUE(has(none.bottleneck, "no peak is known")) << none.bottleneck;
  // A transfer moves data only: its link judges it whatever the FLOPs say.
  Roofs link = roofs(64, 64, 0, 0);
  link.link = "PCIe 5.0 x16";
  Judgement t = judge(work(64e6, kUnknown, 1250.0), link);  // 51.2 GB/s: 80 % of the link
  EXPECT_EQ(t.bound, "link");
}

TEST(JudgeUnknownBytes, OnlyTheTimeUnlessComputeProvesIt) {
  // Bytes and FLOPs unknown: nothing but the time.
  Judgement j = judge(work(kUnknown, kUnknown, 125.0), roofs(2000, 0, 1e4, 0));
  EXPECT_EQ(j.bound, "unknown");
  EXPECT_TRUE(std::isnan(j.bandwidth_gbs) && std::isnan(j.bandwidth_pct_peak) && std::isnan(j.gflops));
  EXPECT_EQ(j.bottleneck,
            "bytes and FLOPs unknown: only the time (125 us) is measured; pass bytes_read= and bytes_written= (and "
            "flops=) to judge it against the roofs");
  // FLOPs known at 12 % of the compute roof: not judged.
  j = judge(work(kUnknown, 1.2e9, 1000.0), roofs(2000, 0, 1e4, 0));  // 1200 GFLOP/s of 10000
  EXPECT_EQ(j.bound, "unknown");
  EXPECT_TRUE(has(j.bottleneck, "bytes unknown: at 12.0 % of the fp32 vector roof, compute does not explain the time"))
      << j.bottleneck;
  // At 80 % of it: compute-bound whatever its bytes.
  j = judge(work(kUnknown, 8e9, 1000.0), roofs(2000, 0, 1e4, 0));
  EXPECT_EQ(j.bound, "compute");
  EXPECT_EQ(j.grade, "excellent");
  EXPECT_TRUE(has(j.bottleneck, "compute-bound at 80 % of the fp32 vector roof (excellent), whatever its bytes"))
      << j.bottleneck;
}

// Every row judged against the roof of the arithmetic it does (issue #45).
namespace {
Peaks device_like() {
  Peaks p;
  p.bandwidth_gbs = 100;
  p.vector["fp32"] = ComputePeak{1000, 1100, "measured:fma_chain_fp32"};
  p.vector["fp64"] = ComputePeak{500, 550, "measured:fma_chain_fp64"};
  p.vector["fp16"] = ComputePeak{0, 2200, "none"};  // only the architecture table knows it
  // As device_peaks gives them: the default arithmetic's roof on top.
  p.gflops = 1000;
  p.gflops_theoretical = 1100;
  p.compute_source = "measured:fma_chain_fp32";
  p.compute_arithmetic = "fp32 vector";
  return p;
}
}  // namespace

TEST(JudgeArithmetic, TheDefaultIsFp32OnTheVectorUnitsAndTheDtypeOnTheMatrixUnits) {
  for (const char* dt : {"fp32", "fp16", "bf16"}) EXPECT_EQ(default_arithmetic(dt, false), "fp32 vector");
  EXPECT_EQ(default_arithmetic("bf16", true), "bf16 matrix");
}

TEST(JudgeArithmetic, EachArithmeticTakesItsOwnRoofMeasuredElseTheTablesElseNone) {
  Peaks f64 = device_like();
  use_compute_roof(f64, "fp64 vector", "fp32");
  EXPECT_EQ(f64.gflops, 500);
  EXPECT_EQ(f64.gflops_theoretical, 550);
  EXPECT_EQ(f64.compute_source, "measured:fma_chain_fp64");
  EXPECT_EQ(f64.compute_arithmetic, "fp64 vector");
  Roofs r = roofs_from(f64, "fp32", 0.0);
  EXPECT_EQ(r.compute_name, "fp64 vector");
  EXPECT_FALSE(r.compute_missing);
  // FP64 FMAs at 450 GFLOP/s: 90 % of the FP64 roof, not 45 % of the FP32 one.
  Judgement j = judge(work(0, 4.5e8, 1000.0), r);
  EXPECT_DOUBLE_EQ(j.compute_pct_peak, 90.0);
  EXPECT_TRUE(has(j.bottleneck, "compute-bound at 90 % of the fp64 vector roof")) << j.bottleneck;

  Peaks f16 = device_like();
  use_compute_roof(f16, "fp16 vector", "fp16");  // not measured: the architecture table's
  EXPECT_EQ(f16.gflops, 2200);
  EXPECT_EQ(f16.compute_source, "theoretical:fp16_vector");
  EXPECT_EQ(roofs_from(f16, "fp16", 0.0).compute_name, "fp16 vector (theoretical)");

  Peaks bf16 = device_like();
  use_compute_roof(bf16, "bf16 vector", "bf16");  // neither: no roof, and none of another arithmetic
  EXPECT_EQ(bf16.gflops, 0);
  EXPECT_EQ(bf16.gflops_theoretical, 0);
  EXPECT_EQ(bf16.compute_source.rfind("none: no bf16 vector roof", 0), 0u) << bf16.compute_source;
  EXPECT_TRUE(roofs_from(bf16, "bf16", 0.0).compute_missing);

  Peaks same = device_like();
  use_compute_roof(same, "fp32 vector", "fp16");  // the roof the peaks carry
  EXPECT_EQ(same.gflops, 1000);
  EXPECT_EQ(same.compute_source, "measured:fma_chain_fp32");
  EXPECT_THROW(use_compute_roof(same, "fp64", "fp32"), InvalidArgument);
}

TEST(JudgeArithmetic, APeaksDictThatNamesNoArithmeticIsItsDtypesVectorRoof) {
  Peaks old;  // an older or hand-made dict: one compute roof, that of its dtype's vector units
  old.gflops = 700;
  old.compute_source = "measured:fma_chain_fp16";
  Peaks a = old;
  use_compute_roof(a, "fp16 vector", "fp16");
  EXPECT_EQ(a.gflops, 700);
  Peaks b = old;
  use_compute_roof(b, "fp32 vector", "fp16");  // not FP32's: unknown
  EXPECT_EQ(b.gflops, 0);
  EXPECT_EQ(b.compute_source.rfind("none", 0), 0u);
}

TEST(JudgeArithmetic, NoRoofForTheArithmeticLeavesTheFlopsUnjudged) {
  Peaks p = device_like();
  use_compute_roof(p, "bf16 vector", "bf16");
  const Roofs r = roofs_from(p, "bf16", 0.0);
  // Pure FLOPs (a chain): nothing proves a bound; the text says which roof is missing.
  Judgement j = judge(work(0, 1e9, 1000.0), r);
  EXPECT_EQ(j.bound, "unknown");
  EXPECT_EQ(j.grade, "n/a");
  EXPECT_TRUE(std::isnan(j.compute_pct_peak));
  EXPECT_EQ(j.bottleneck.rfind("no bf16 vector roof is measured or known for this device", 0), 0u) << j.bottleneck;
  // Bytes at 80 % of the memory roof prove it memory-bound, whatever its FLOPs' roof.
  j = judge(work(8e7, 1e6, 1000.0), r);
  EXPECT_EQ(j.bound, "memory");
  EXPECT_TRUE(has(j.bottleneck, "no bf16 vector roof is known, so its FLOPs are not judged")) << j.bottleneck;
  // At 10 % of it: not judged (never "latency-bound" from a roof it does not have).
  j = judge(work(1e7, 1e6, 1000.0), r);
  EXPECT_EQ(j.bound, "unknown");
  EXPECT_TRUE(has(j.bottleneck, "at 10.0 % of the memory roof")) << j.bottleneck;
}
