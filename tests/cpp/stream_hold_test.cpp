// A hold that gives up mid-run (issue #43): the runner keeps no sample taken under the hold beside
// the ones timed behind the spin, says so in its log, and the judgement names the host's wait.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "bwprof/backend.hpp"
#include "bwprof/roofline.hpp"
#include "bwprof/runner.hpp"
#include "fake_gpu.hpp"

using namespace bwprof;
using bwprof::fakes::Nothing;

namespace {

// A GPU-like backend whose held launches take `held_us` until launch number `gives_up_at` (0-based,
// counting timed launches), which the hold cannot hold: from there each launch is timed behind the
// spin and takes `spin_us`, as GpuBackend::time_launch_us does after a hold's timeout.
class ScriptedHold final : public fakes::FakeGpu {
 public:
  ScriptedHold(int gives_up_at, double held_us, double spin_us)
      : gives_up_at_(gives_up_at), held_us_(held_us), spin_us_(spin_us) {}
  double time_launch_us(KernelInstance& k, int) override {
    k.launch();
    const int n = launches_++;
    if (block_ && n == gives_up_at_) {
      block_ = false;
      gave_up_ = true;
    }
    return block_ ? held_us_ : spin_us_;
  }
  bool take_hold_gave_up() override {
    const bool g = gave_up_;
    gave_up_ = false;
    return g;
  }
  const char* stream_hold() const override { return block_ ? "block" : "spin"; }

 private:
  int gives_up_at_;
  double held_us_, spin_us_;
  bool block_ = true, gave_up_ = false;
};

RunOptions repeats(int n) {
  RunOptions o;
  o.warmup = 0;
  o.min_repeats = n;
  o.max_repeats = 100;
  o.min_time_s = 0;
  return o;
}

}  // namespace

TEST(StreamHold, AHoldThatGivesUpRestartsTheRunBehindTheSpin) {
  ScriptedHold b(3, 10.0, 1000.0);  // three held samples of 10 us, then the call waits on the GPU
  Nothing k;
  RunLog log;
  const std::vector<double> t = run_repeats(b, k, repeats(5), &log);
  // The held samples are gone; the run counts its repeats again from the first spin sample.
  EXPECT_EQ(t, std::vector<double>(5, 1000.0));
  EXPECT_EQ(b.launches(), 3 + 5);
  EXPECT_TRUE(log.host_waited);
  EXPECT_EQ(log.clock_mhz.size(), 5u);  // one clock sample a kept run
  EXPECT_STREQ(b.stream_hold(), "spin");
}

TEST(StreamHold, AHoldThatHoldsKeepsEverySample) {
  ScriptedHold b(1000, 10.0, 1000.0);
  Nothing k;
  RunLog log;
  EXPECT_EQ(run_repeats(b, k, repeats(4), &log), std::vector<double>(4, 10.0));
  EXPECT_FALSE(log.host_waited);
  // Giving up on the very first timed launch keeps that (re-timed) launch.
  ScriptedHold first(0, 10.0, 1000.0);
  RunLog log2;
  EXPECT_EQ(run_repeats(first, k, repeats(2), &log2), std::vector<double>(2, 1000.0));
  EXPECT_TRUE(log2.host_waited);
}

TEST(StreamHold, TheJudgementOfAHostWaitNamesNoKernelCause) {
  Work w;
  w.bytes = 3.85e9;
  w.flops = 0;  // judged by bandwidth: 3.85 GB in 41.5 ms is 2 % of a 4.6 TB/s roof
  w.time_us = 41500;
  w.host_waited = true;
  Roofs r;
  r.bandwidth_gbs = 4600;
  r.gflops = 60000;
  Judgement j = judge(w, r);
  EXPECT_EQ(j.bound, "latency");
  EXPECT_NE(j.bottleneck.find("the call made the host wait on the GPU inside it"), std::string::npos) << j.bottleneck;
  EXPECT_EQ(j.bottleneck.find("occupancy"), std::string::npos) << j.bottleneck;
  EXPECT_EQ(j.bottleneck.find("dependencies"), std::string::npos) << j.bottleneck;
  // A memory-bound figure holds, with the note that the host's time is in it.
  w.time_us = 1000;
  j = judge(w, r);  // 3.85 TB/s: 84 % of the roof
  EXPECT_EQ(j.bound, "memory");
  EXPECT_NE(j.bottleneck.find("; the call made the host wait"), std::string::npos) << j.bottleneck;
}
