#include "bwprof/measurement.hpp"

#include <gtest/gtest.h>

#include <cmath>

using namespace bwprof;

namespace {
Measurement row(double bytes, double flops, double median_us, double peak_bw, double peak_gflops) {
  Measurement m;
  m.dtype = "fp32";
  m.bytes_read = bytes / 2;
  m.bytes_written = bytes / 2;
  m.flops = flops;
  m.time_us.median = median_us;
  m.peaks.bandwidth_gbs = peak_bw;
  m.peaks.gflops = peak_gflops;
  return m;
}
}  // namespace

TEST(DeriveRates, OneGigabyteInOneMillisecondIsOneThousandGBs) {
  Measurement m = row(1e9, 0, 1000.0, 2000.0, 10000.0);
  derive_rates(m, AccessPattern::kCoalesced);
  EXPECT_DOUBLE_EQ(m.bandwidth_gbs, 1000.0);
  EXPECT_DOUBLE_EQ(m.bandwidth_pct_peak, 50.0);
  EXPECT_TRUE(std::isnan(m.bandwidth_pct_theoretical));  // no theoretical peak given
  EXPECT_DOUBLE_EQ(m.gflops, 0.0);
  EXPECT_DOUBLE_EQ(m.intensity_flop_per_byte, 0.0);
  EXPECT_EQ(m.bound, "memory");
  EXPECT_EQ(m.grade, "fair");
  EXPECT_EQ(m.access_pattern, "coalesced");
}

TEST(DeriveRates, FlopsIntensityAndRoofline) {
  // 2e9 flops over 1e8 bytes in 1 ms: 2000 GFLOP/s, 100 GB/s, intensity 20 flop/byte.
  Measurement m = row(1e8, 2e9, 1000.0, 1000.0, 10000.0);
  derive_rates(m, AccessPattern::kCoalesced);
  EXPECT_DOUBLE_EQ(m.gflops, 2000.0);
  EXPECT_DOUBLE_EQ(m.bandwidth_gbs, 100.0);
  EXPECT_DOUBLE_EQ(m.intensity_flop_per_byte, 20.0);
  // Ridge at 10 flop/byte: 20 is on the compute side; attainable = 10000 GFLOP/s.
  EXPECT_DOUBLE_EQ(m.attainable_gflops, 10000.0);
  EXPECT_DOUBLE_EQ(m.compute_pct_peak, 20.0);
  EXPECT_DOUBLE_EQ(m.roofline_efficiency_pct, 20.0);
  EXPECT_EQ(m.bound, "latency");  // 20 % of the roof: neither roof explains the time
}

TEST(DeriveRates, MemorySideOfTheRidge) {
  // Intensity 2 flop/byte under a ridge of 10: attainable = 2 x 1000 = 2000 GFLOP/s.
  Measurement m = row(1e9, 2e9, 1250.0, 1000.0, 10000.0);
  derive_rates(m, AccessPattern::kStrided);
  EXPECT_DOUBLE_EQ(m.bandwidth_gbs, 800.0);
  EXPECT_DOUBLE_EQ(m.attainable_gflops, 2000.0);
  EXPECT_DOUBLE_EQ(m.roofline_efficiency_pct, 80.0);
  EXPECT_EQ(m.bound, "memory");
  EXPECT_EQ(m.grade, "excellent");
  EXPECT_NE(m.bottleneck.find("memory-bound at 80 % of peak"), std::string::npos) << m.bottleneck;
  EXPECT_NE(m.bottleneck.find("strided access: expect \u2264 60 %"), std::string::npos) << m.bottleneck;
}

TEST(DeriveRates, ComputeBound) {
  Measurement m = row(1e8, 7e9, 1000.0, 1000.0, 10000.0);  // 7000 of 10000 GFLOP/s
  derive_rates(m, AccessPattern::kCoalesced);
  EXPECT_EQ(m.bound, "compute");
  EXPECT_EQ(m.grade, "good");
  EXPECT_NE(m.bottleneck.find("compute-bound at 70 %"), std::string::npos) << m.bottleneck;
}

TEST(DeriveRates, TinyKernelIsLatencyBoundWithAReason) {
  Measurement m = row(4096, 0, 5.0, 3000.0, 50000.0);
  derive_rates(m, AccessPattern::kStrided);
  EXPECT_EQ(m.bound, "latency");
  EXPECT_NE(m.bottleneck.find("too little work"), std::string::npos) << m.bottleneck;
}

TEST(DeriveRates, AboveTheoreticalPeakIsFlagged) {
  Measurement m = row(1e9, 0, 100.0, 3000.0, 0);  // 10 TB/s
  m.peaks.bandwidth_theoretical_gbs = 3350.0;
  derive_rates(m, AccessPattern::kCoalesced);
  EXPECT_TRUE(m.above_peak);
  EXPECT_NE(m.bottleneck.find("stayed in cache"), std::string::npos);
}

TEST(DeriveRates, NoPeaksKnown) {
  Measurement m = row(1e9, 0, 1000.0, 0, 0);
  derive_rates(m, AccessPattern::kCoalesced);
  EXPECT_DOUBLE_EQ(m.bandwidth_gbs, 1000.0);
  EXPECT_EQ(m.bound, "unknown");
}

TEST(Grade, Thresholds) {
  EXPECT_EQ(grade(80.0), "excellent");
  EXPECT_EQ(grade(79.9), "good");
  EXPECT_EQ(grade(60.0), "good");
  EXPECT_EQ(grade(59.9), "fair");
  EXPECT_EQ(grade(30.0), "fair");
  EXPECT_EQ(grade(29.9), "poor");
  EXPECT_EQ(grade(NAN), "n/a");
}

TEST(AccessPattern, ExpectedEfficiencies) {
  EXPECT_DOUBLE_EQ(expected_efficiency(AccessPattern::kStrided), 0.60);
  EXPECT_DOUBLE_EQ(expected_efficiency(AccessPattern::kGather), 0.30);
  EXPECT_GT(expected_efficiency(AccessPattern::kCoalesced), expected_efficiency(AccessPattern::kStrided));
}

TEST(Record, ColumnsInSchemaOrder) {
  auto cols = Measurement::columns();
  ASSERT_GE(cols.size(), 24u);
  EXPECT_EQ(cols.front(), "kernel");
  EXPECT_EQ(cols.back(), "schema_version");
  for (const char* c : {"time_median_us", "bandwidth_gbs", "bandwidth_pct_peak", "gflops", "compute_pct_peak",
                        "intensity_flop_per_byte", "grade", "bottleneck", "verified", "max_rel_error"}) {
    EXPECT_NE(std::find(cols.begin(), cols.end(), c), cols.end()) << c;
  }
}

TEST(DeriveRates, UnknownFlopsAreNaNInTheRowAndSaidSo) {
  Measurement m = row(1e8, 0, 1000.0, 1000.0, 10000.0);  // 100 GB/s: 10 % of the roof
  m.flops_source = "unknown";
  derive_rates(m, AccessPattern::kCoalesced);
  EXPECT_TRUE(std::isnan(m.flops));
  EXPECT_TRUE(std::isnan(m.gflops));
  EXPECT_TRUE(std::isnan(m.intensity_flop_per_byte));
  EXPECT_EQ(m.bound, "unknown");
  EXPECT_EQ(m.bottleneck.rfind("FLOPs unknown: at 10.0 % of the memory roof", 0), 0u) << m.bottleneck;
  // A NaN count is unknown whatever the source said.
  Measurement n = row(1e8, NAN, 1000.0, 1000.0, 10000.0);
  derive_rates(n, AccessPattern::kCoalesced);
  EXPECT_EQ(n.flops_source, "unknown");
  EXPECT_EQ(n.bound, "unknown");
  // Declared 0 (bwprof's own copies): judged by bandwidth as before.
  Measurement z = row(1e8, 0, 1000.0, 1000.0, 10000.0);
  derive_rates(z, AccessPattern::kCoalesced);
  EXPECT_EQ(z.flops_source, "declared");
  EXPECT_EQ(z.bound, "latency");
}

TEST(Record, FlopsSourceFollowsBytesSourceAndTheSchemaIsVersionFour) {
  auto cols = Measurement::columns();
  auto at = [&](const char* c) { return std::find(cols.begin(), cols.end(), c) - cols.begin(); };
  EXPECT_EQ(at("flops_source"), at("bytes_source") + 1);
  // Version 4 (issue #45): the spread target beside the spread, the re-takes beside the throttled count.
  EXPECT_EQ(at("target_rel_spread"), at("unstable") + 1);
  EXPECT_EQ(at("spread_target_met"), at("target_rel_spread") + 1);
  EXPECT_EQ(at("throttled_retaken"), at("throttled_samples") + 1);
  // 4 (issue #45): the arithmetic whose roof judged the row, beside that roof.
  EXPECT_EQ(at("peak_compute_arithmetic"), at("peak_gflops") + 1);
  EXPECT_EQ(kSchemaVersion, 4);
}
