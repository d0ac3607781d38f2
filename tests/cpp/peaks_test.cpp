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

// The hierarchy's order (issue #45): injected figures, so the policy is tested whatever the machine.
namespace {
Peaks levels(double dram, double l2, double l1, double shared = 0) {
  Peaks p;
  p.bandwidth_gbs = dram;
  p.bandwidth_source = "measured:stream_copy";
  p.bandwidth_by_kernel["stream_copy"] = dram;
  auto put = [&](const char* name, double gbs) {
    if (gbs > 0) p.levels[name] = LevelPeak{gbs, 0, 4096, std::string("measured:") + name + "_bandwidth"};
  };
  put("l2", l2);
  put("l1", l1);
  put("shared", shared);
  return p;
}
}  // namespace

TEST(Hierarchy, FindingsNameEachInnerLevelSlowerThanTheNextOneOut) {
  EXPECT_TRUE(hierarchy_findings(levels(30, 280, 400)).empty());
  auto f = hierarchy_findings(levels(30, 284, 125));  // the CPU's L1 kernel that did not measure L1
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].inner, "l1");
  EXPECT_EQ(f[0].outer, "l2");
  EXPECT_EQ(f[0].text(), "l1 125 GB/s < l2 284 GB/s");
  f = hierarchy_findings(levels(300, 200, 0, 150));  // shared below L2, L2 below DRAM
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0].inner + "<" + f[0].outer, "shared<l2");
  EXPECT_EQ(f[1].inner + "<" + f[1].outer, "l2<dram");
  f = hierarchy_findings(levels(300, 0, 200));  // no L2 measured: L1 against DRAM
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].outer, "dram");
  EXPECT_TRUE(hierarchy_findings(levels(0, 0, 100)).empty());  // nothing to compare with
}

TEST(Hierarchy, InOrderIsNotMeasuredAgain) {
  Peaks p = levels(30, 280, 400);
  int calls = 0;
  settle_hierarchy(p, [&] { ++calls; return Peaks{}; });
  EXPECT_EQ(calls, 0);
  EXPECT_TRUE(p.hierarchy_disorder.empty());
}

TEST(Hierarchy, OutOfOrderIsMeasuredAgainOnceAndKeepsTheBetterTake) {
  Peaks p = levels(30, 284, 125);
  int calls = 0;
  settle_hierarchy(p, [&] { ++calls; return levels(25, 250, 410); });  // the L1 measured right this time
  EXPECT_EQ(calls, 1);
  EXPECT_TRUE(p.hierarchy_disorder.empty());
  EXPECT_EQ(p.levels.at("l1").read_gbs, 410);
  EXPECT_EQ(p.levels.at("l2").read_gbs, 284);  // the better of 284 and 250
  EXPECT_EQ(p.bandwidth_gbs, 30);
}

TEST(Hierarchy, StillOutOfOrderIsFlaggedNeverKeptSilently) {
  Peaks p = levels(30, 284, 125);
  int calls = 0;
  settle_hierarchy(p, [&] { ++calls; return levels(31, 280, 130); });
  EXPECT_EQ(calls, 1);
  ASSERT_EQ(p.hierarchy_disorder.size(), 1u);
  EXPECT_EQ(p.hierarchy_disorder[0].text(), "l1 130 GB/s < l2 284 GB/s");
  EXPECT_EQ(p.bandwidth_gbs, 31);
  EXPECT_EQ(p.bandwidth_by_kernel.at("stream_copy"), 31);
}

// This machine's own hierarchy, as the policy measured it: each level faster than the next one out,
// or (a busy machine) flagged after the second measurement; never out of order and unflagged.
TEST(Hierarchy, TheCpuPeaksAreInOrderOrFlagged) {
  const Peaks p = device_peaks(backend_for("cpu"), DType::kF32);
  const auto now = hierarchy_findings(p);
  ASSERT_EQ(now.size(), p.hierarchy_disorder.size());
  for (std::size_t i = 0; i < now.size(); ++i) EXPECT_EQ(now[i].text(), p.hierarchy_disorder[i].text());
}
