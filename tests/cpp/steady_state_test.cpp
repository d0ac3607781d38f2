// Steady-state timing (Timing::kGraph): how many input sets, the order they are launched in, and
// the CPU backend's rows in graph mode.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "bwprof/api.hpp"
#include "bwprof/error.hpp"
#include "bwprof/runner.hpp"

using namespace bwprof;

namespace {
// Records which set each launch used.
class Counting final : public KernelInstance {
 public:
  Counting(int id, std::vector<int>* log) : id_(id), log_(log) {}
  void launch() override { log_->push_back(id_); }
  Check check() override { return {}; }

 private:
  int id_;
  std::vector<int>* log_;
};
}  // namespace

TEST(SteadyState, RotationSetsExceedTwiceTheCacheWithinMemory) {
  DeviceInfo gpu;
  gpu.cache_bytes = 50e6;  // an H100's L2
  gpu.memory_bytes = 80e9;
  EXPECT_EQ(rotation_sets_for(33.5e6, gpu, true), 4);   // 3 sets cover 100 MB; one more
  EXPECT_EQ(rotation_sets_for(117e6, gpu, true), 2);    // one set is already 2x the L2
  EXPECT_EQ(rotation_sets_for(33.5e6, gpu, false), 1);  // hot: one set
  EXPECT_EQ(rotation_sets_for(4096, gpu, true), kMaxRotationSets);
  gpu.memory_bytes = 100e6;  // at most a quarter of memory in sets
  EXPECT_EQ(rotation_sets_for(10e6, gpu, true), 2);
  EXPECT_EQ(rotation_sets_for(30e6, gpu, true), 1);
  EXPECT_EQ(rotation_sets_for(0, gpu, true), 1);
  EXPECT_EQ(graph_launches_for(4), 20);
  EXPECT_EQ(graph_launches_for(3), 21);
  EXPECT_EQ(graph_launches_for(64), 64);
  EXPECT_EQ(graph_launches_for(1), kMinGraphLaunches);
}

TEST(SteadyState, SetsAreLaunchedInTurnWholeRotationsPerTimedRun) {
  std::vector<int> log;
  Counting a(0, &log), b(1, &log), c(2, &log);
  RunOptions opt;
  opt.warmup = 1;
  opt.min_repeats = 2;
  opt.max_repeats = 2;
  opt.min_time_s = 0;
  auto t = run_steady_state(backend_for("cpu"), {&a, &b, &c}, 6, opt);
  ASSERT_EQ(t.size(), 2u);
  // 1 warm-up + 2 timed runs of 6 slots, the sets in turn.
  ASSERT_EQ(log.size(), 3u * 6);
  for (std::size_t i = 0; i < log.size(); ++i) EXPECT_EQ(log[i], static_cast<int>(i % 3)) << i;
  EXPECT_THROW(run_steady_state(backend_for("cpu"), {&a, &b, &c}, 4, opt), Error);  // not whole rotations
  EXPECT_THROW(run_steady_state(backend_for("cpu"), {}, 4, opt), Error);
}

TEST(SteadyState, CpuRowsInGraphMode) {
  RunOptions opt;
  opt.timing = Timing::kGraph;
  opt.min_repeats = 3;
  opt.min_time_s = 0.001;
  const DeviceInfo& cpu = backend_for("cpu").info();
  Measurement m = measure("stream_triad", "fp32", "cpu", "", {{"n", "65536"}}, opt);
  EXPECT_TRUE(m.verified);
  EXPECT_EQ(m.timing, "graph");
  EXPECT_EQ(m.cache, "cold");
  EXPECT_EQ(m.rotation_sets, rotation_sets_for(m.bytes_read + m.bytes_written, cpu, true));
  EXPECT_EQ(m.graph_launches, graph_launches_for(m.rotation_sets));
  EXPECT_EQ(m.graph_launches % m.rotation_sets, 0);
  EXPECT_GT(m.time_us.median, 0);
  EXPECT_NEAR(m.bandwidth_gbs, (m.bytes_read + m.bytes_written) / (m.time_us.median * 1e-6) / 1e9, 1e-9);
  EXPECT_TRUE(std::isnan(m.sm_clock_mhz));  // the CPU backend reads no clock
  EXPECT_EQ(m.throttled_samples, 0);
  opt.cold = false;
  m = measure("stream_triad", "fp32", "cpu", "", {{"n", "65536"}}, opt);
  EXPECT_EQ(m.rotation_sets, 1);
  EXPECT_EQ(m.cache, "hot");
  opt.timing = Timing::kSingle;
  m = measure("stream_triad", "fp32", "cpu", "", {{"n", "4096"}}, opt);
  EXPECT_EQ(m.timing, "single");
  EXPECT_EQ(m.graph_launches, 1);
  EXPECT_EQ(m.rotation_sets, 1);
  EXPECT_EQ(parse_timing("graph"), Timing::kGraph);
  EXPECT_THROW(parse_timing("graphs"), InvalidArgument);
}
