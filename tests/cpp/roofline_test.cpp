// The one roofline judgement, against rows worked out by hand.
#include "bwprof/roofline.hpp"

#include <gtest/gtest.h>

#include <cmath>

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
bool has(const std::string& text, const char* what) { return text.find(what) != std::string::npos; }
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
  use_matrix_roof(p, 990e3, "fp16");
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
  use_matrix_roof(p, 1070530, "fp16");  // nothing measured: the architecture table's
  EXPECT_EQ(p.gflops, 1070530);
  EXPECT_EQ(p.compute_source, "theoretical:fp16_matrix_units");
  Peaks m;
  m.matrix_gflops = 820000;
  m.matrix_gflops_theoretical = 1070530;
  m.matrix_source = "measured:mma_peak_fp16";
  use_matrix_roof(m, 999, "fp16");
  EXPECT_EQ(m.gflops, 820000);
  EXPECT_EQ(m.gflops_theoretical, 1070530);
  EXPECT_EQ(m.compute_source, "measured:mma_peak_fp16 (matrix units)");
  EXPECT_EQ(roofs_from(m, "fp16", 0.0).compute_name, "fp16 matrix");
}
