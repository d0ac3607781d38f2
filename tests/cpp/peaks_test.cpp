// The peaks policy on the CPU: the best of the memory ceilings, the FMA chains for compute, FP16
// taking FP32's roof where the backend has no FP16 chain, cached per device until refreshed.
#include "bwprof/peaks.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "bwprof/api.hpp"

using namespace bwprof;

TEST(Peaks, CpuFiguresSourcesAndCache) {
  Backend& cpu = backend_for("cpu");
  const Peaks f32 = device_peaks(cpu, DType::kF32);
  ASSERT_EQ(f32.bandwidth_by_kernel.size(), 6u);  // the five STREAM kernels and the clean read
  std::string best;
  double best_gbs = 0;
  for (auto& kv : f32.bandwidth_by_kernel) {
    EXPECT_EQ(kv.first.rfind("stream_", 0), 0u) << kv.first;
    EXPECT_GT(kv.second, 0);
    if (kv.second > best_gbs) best_gbs = kv.second, best = kv.first;
  }
  EXPECT_EQ(f32.bandwidth_gbs, best_gbs);
  EXPECT_EQ(f32.bandwidth_source, "measured:" + best);
  EXPECT_GT(f32.gflops, 0);
  EXPECT_EQ(f32.compute_source, "measured:fma_chain_fp32");
  // The CPU computes FP16 data in FP32: the same roof, from the same source.
  const Peaks f16 = device_peaks(cpu, DType::kF16);
  EXPECT_EQ(f16.gflops, f32.gflops);
  EXPECT_EQ(f16.compute_source, "measured:fma_chain_fp32");
  EXPECT_EQ(f16.bandwidth_gbs, f32.bandwidth_gbs);
  // Cached: the very same figures; refreshed: measured again, the same sources.
  EXPECT_EQ(device_peaks(cpu, DType::kF32).bandwidth_by_kernel, f32.bandwidth_by_kernel);
  const Peaks again = device_peaks(cpu, DType::kF32, true);
  EXPECT_EQ(again.compute_source, f32.compute_source);
  EXPECT_NE(again.bandwidth_by_kernel, f32.bandwidth_by_kernel);  // new timings
  EXPECT_EQ(device_peaks(cpu, DType::kF32).bandwidth_by_kernel, again.bandwidth_by_kernel);
  // The api's peaks() is the same policy.
  EXPECT_EQ(peaks("cpu", "fp32").bandwidth_by_kernel, again.bandwidth_by_kernel);
}

// The compute roof device_peaks gives a dtype is that of what its rows compute in (FP32), named.
TEST(Peaks, EachDtypesRoofIsThatOfItsDefaultArithmetic) {
  Backend& cpu = backend_for("cpu");
  for (DType t : {DType::kF32, DType::kF16, DType::kBF16}) {
    const Peaks p = device_peaks(cpu, t);
    EXPECT_EQ(p.compute_arithmetic, "fp32 vector") << to_string(t);
    EXPECT_EQ(p.gflops, p.vector.at("fp32").gflops) << to_string(t);
  }
}

