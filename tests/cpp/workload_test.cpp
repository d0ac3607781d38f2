// A workload's step plan (issue #15, bwprof/workload.hpp) on the CPU: every launch and byte counted
// from the families' own traffic, blocks of equal counts, the instance sets per op (auto, every
// layer, a count), the memory check before anything is allocated, bad ops named, and the step's
// calls in block order. Small shapes only: the whole file runs in well under a second.
#include "bwprof/workload.hpp"

#include <gtest/gtest.h>

#include "message_of.hpp"
#include "scoped_env.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "bwprof/api.hpp"
#include "bwprof/backend.hpp"
#include "bwprof/error.hpp"
#include "bwprof/limits.hpp"
#include "bwprof/registry.hpp"

using namespace bwprof;

namespace {

using Params = std::map<std::string, std::string>;


StepOp kernel_op(const std::string& name, const std::string& kernel, Params params, int count) {
  StepOp op;
  op.name = name;
  op.kernel = kernel;
  op.params = std::move(params);
  op.count = count;
  return op;
}

StepOp user_op(const std::string& name, std::function<void()> fn, int count, double bytes = 0) {
  StepOp op;
  op.name = name;
  op.fn = std::move(fn);
  op.count = count;
  op.bytes = bytes;
  return op;
}

// One launch's bytes (read + written) as the family's own traffic formula gives them.
double family_bytes(const StepOp& op) {
  load_builtins();
  const KernelFamily& k = find_kernel(op.kernel);
  const Problem p = make_problem(k, "cpu", op.variant, op.dtype, op.params);
  const Traffic t = k.traffic(p);
  return t.bytes_read + t.bytes_written;
}

// A layer of a small decoder: four ops repeated `layers` times, then one op once (the head).
std::vector<StepOp> small_step(int layers) {
  return {kernel_op("norm", "layernorm", {{"rows", "4"}, {"cols", "96"}}, layers),
          kernel_op("proj", "gemv", {{"N", "64"}, {"K", "96"}}, layers),
          kernel_op("act", "bias_act", {{"rows", "4"}, {"cols", "64"}, {"act", "silu"}}, layers),
          kernel_op("residual", "stream_add", {{"n", "384"}}, layers),
          kernel_op("head", "gemv", {{"N", "128"}, {"K", "96"}}, 1)};
}

}  // namespace

TEST(WorkloadPlan, CountsEveryLaunchAndByteFromTheFamilies) {
  const std::vector<StepOp> ops = small_step(5);
  const StepPlan plan = plan_step("cpu", ops, kSetsAuto);
  ASSERT_EQ(plan.ops.size(), ops.size());
  EXPECT_EQ(plan.launches, 4 * 5 + 1);
  double want = 0;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const StepPlanOp& r = plan.ops[i];
    EXPECT_EQ(r.name, ops[i].name);
    EXPECT_EQ(r.kernel, ops[i].kernel);
    EXPECT_EQ(r.dtype, "fp32");
    EXPECT_EQ(r.count, ops[i].count);
    EXPECT_FALSE(r.shape.empty());
    EXPECT_DOUBLE_EQ(r.bytes_read + r.bytes_written, family_bytes(ops[i])) << r.name;
    EXPECT_GT(r.host_bytes, 0) << r.name;
    EXPECT_EQ(r.device_bytes, 0) << r.name;  // the CPU holds nothing on a device
    want += r.count * (r.bytes_read + r.bytes_written);
  }
  EXPECT_DOUBLE_EQ(plan.bytes_per_step, want);
  // Consecutive ops of equal count are one block; the head is a block of its own.
  for (int i = 0; i < 4; ++i) EXPECT_EQ(plan.ops[i].block, 0);
  EXPECT_EQ(plan.ops[4].block, 1);
  EXPECT_GT(plan.host_available, 0);
  EXPECT_LT(plan.device_available, 0);  // no device memory to hold the step against on the CPU
}

TEST(WorkloadPlan, FP16HalvesTheBytesOfEveryOp) {
  std::vector<StepOp> ops = small_step(3);
  const StepPlan fp32 = plan_step("cpu", ops, 1);
  for (StepOp& op : ops) op.dtype = "fp16";
  const StepPlan fp16 = plan_step("cpu", ops, 1);
  for (std::size_t i = 0; i < ops.size(); ++i) {
    EXPECT_EQ(fp16.ops[i].dtype, "fp16");
    EXPECT_DOUBLE_EQ(fp16.ops[i].bytes_read + fp16.ops[i].bytes_written, family_bytes(ops[i])) << ops[i].name;
    EXPECT_LT(fp16.ops[i].bytes_read, fp32.ops[i].bytes_read) << ops[i].name;
  }
}

TEST(WorkloadPlan, SetsPerOpAutoEveryLayerOrACount) {
  const int layers = 6;
  const std::vector<StepOp> ops = small_step(layers);
  const StepPlan one = plan_step("cpu", ops, 1);
  const StepPlan three = plan_step("cpu", ops, 3);
  const StepPlan many = plan_step("cpu", ops, 100);
  const StepPlan every = plan_step("cpu", ops, kSetsEvery);
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const int count = ops[i].count;
    EXPECT_EQ(one.ops[i].sets, 1);
    EXPECT_EQ(three.ops[i].sets, std::min(count, 3));
    EXPECT_EQ(many.ops[i].sets, count);  // never more sets than launches
    EXPECT_EQ(every.ops[i].sets, count);
    // Every set is an instance of its own: the memory scales with them.
    EXPECT_NEAR(every.ops[i].host_bytes, count * one.ops[i].host_bytes, 1e-9 * every.ops[i].host_bytes);
  }
  EXPECT_NEAR(every.host_bytes, layers * (one.host_bytes - one.ops[4].host_bytes) + one.ops[4].host_bytes,
              1e-9 * every.host_bytes);
  // The bytes a step moves do not depend on how many instances hold them.
  EXPECT_DOUBLE_EQ(every.bytes_per_step, one.bytes_per_step);
}

TEST(WorkloadPlan, AutoSetsKeepEachLaunchOutOfTheLastLevelCache) {
  const double cache = backend_for("cpu").info().cache_bytes;
  const int count = 40;
  // A small block: its other iterations move far less than the cache, so every layer is distinct.
  const StepPlan small = plan_step("cpu", {kernel_op("add", "stream_add", {{"n", "1024"}}, count)}, kSetsAuto);
  const double small_bytes = small.ops[0].bytes_read + small.ops[0].bytes_written;
  const int want_small = cache > 0 ? static_cast<int>(std::min<double>(count, std::ceil(2 * cache / small_bytes) + 1)) : 1;
  EXPECT_EQ(small.ops[0].sets, want_small);
}

TEST(WorkloadPlan, AutoSetsAlternateTwoSetsOfABlockLargerThanTwiceTheCache) {
  const double cache = backend_for("cpu").info().cache_bytes;
  if (cache <= 0) GTEST_SKIP() << "the CPU's last-level cache is unknown here";
  const int count = 40;
  // One launch moves 12 bytes an element: n = cache / 4 is three times the cache, so two sets
  // alternate. Only planned, never made; a host too small for two such sets is a skip, not a fail.
  const std::string n = std::to_string(static_cast<long long>(cache / 4));
  StepPlan big, pair;
  try {
    big = plan_step("cpu", {kernel_op("add", "stream_add", {{"n", n}}, count)}, kSetsAuto);
    // Two ops of one block share the block's count of sets (the block's bytes decide it).
    pair = plan_step("cpu", {kernel_op("a", "stream_add", {{"n", "1024"}}, count),
                             kernel_op("b", "stream_add", {{"n", n}}, count)},
                     kSetsAuto);
  } catch (const OutOfMemory& e) {
    GTEST_SKIP() << "two sets of a block of three times the cache do not fit this host: " << e.what();
  }
  EXPECT_EQ(big.ops[0].sets, 2);
  EXPECT_EQ(pair.ops[0].sets, 2);
  EXPECT_EQ(pair.ops[1].sets, 2);
  EXPECT_EQ(pair.ops[0].block, pair.ops[1].block);
}

TEST(WorkloadPlan, UserOpsKeepTheirDeclaredBytesAndOneCallable) {
  const StepPlan plan = plan_step("cpu", {user_op("mine", [] {}, 7, 4096),
                                          kernel_op("add", "stream_add", {{"n", "256"}}, 7)},
                                  kSetsEvery);
  const StepPlanOp& u = plan.ops[0];
  EXPECT_EQ(u.kernel, "mine");
  EXPECT_EQ(u.variant, "user");
  EXPECT_EQ(u.sets, 1);  // the user's callable is the user's: bwprof makes no copies of it
  EXPECT_EQ(u.host_bytes, 0);
  EXPECT_DOUBLE_EQ(u.bytes_read + u.bytes_written, 4096);
  EXPECT_EQ(plan.ops[1].sets, 7);
  EXPECT_EQ(plan.launches, 14);
  EXPECT_DOUBLE_EQ(plan.bytes_per_step, 7 * 4096 + 7 * (plan.ops[1].bytes_read + plan.ops[1].bytes_written));
}

TEST(WorkloadPlan, BadOpsAreNamed) {
  auto plan = [](std::vector<StepOp> ops, int sets = kSetsAuto) {
    return [ops, sets] { plan_step("cpu", ops, sets); };
  };
  EXPECT_NE(message_of<InvalidArgument>(plan({})).find("at least one op"), std::string::npos);
  StepOp unnamed = kernel_op("", "stream_add", {{"n", "8"}}, 1);
  EXPECT_NE(message_of<InvalidArgument>(plan({unnamed})).find("name must not be empty"), std::string::npos);
  for (int count : {0, -3, 1000001}) {
    const std::string m = message_of<InvalidArgument>(plan({kernel_op("x", "stream_add", {{"n", "8"}}, count)}));
    EXPECT_NE(m.find("op 0 'x'"), std::string::npos) << m;
    EXPECT_NE(m.find("count"), std::string::npos) << m;
  }
  const std::string unknown = message_of<InvalidArgument>(
      plan({kernel_op("ok", "stream_add", {{"n", "8"}}, 1), kernel_op("typo", "no_such_kernel", {}, 1)}));
  EXPECT_NE(unknown.find("op 1 'typo'"), std::string::npos) << unknown;
  const std::string param = message_of<InvalidArgument>(plan({kernel_op("p", "stream_add", {{"n", "0"}}, 1)}));
  EXPECT_NE(param.find("op 0 'p'"), std::string::npos) << param;
  EXPECT_NE(param.find("n"), std::string::npos) << param;
  StepOp both = user_op("both", [] {}, 1);
  both.kernel = "stream_add";
  EXPECT_NE(message_of<InvalidArgument>(plan({both})).find("not both"), std::string::npos);
  for (double bytes : {-1.0, std::nan(""), HUGE_VAL})
    EXPECT_NE(message_of<InvalidArgument>(plan({user_op("u", [] {}, 1, bytes)})).find("bytes"), std::string::npos);
  EXPECT_NE(message_of<InvalidArgument>(plan({kernel_op("x", "stream_add", {{"n", "8"}}, 1)}, -2)).find("sets"),
            std::string::npos);
  // More than 10^7 launches a step, however they are spread.
  std::vector<StepOp> lots(11, kernel_op("x", "stream_add", {{"n", "8"}}, 1000000));
  for (std::size_t i = 0; i < lots.size(); ++i) lots[i].name = "x" + std::to_string(i);
  EXPECT_NE(message_of<InvalidArgument>(plan(lots, 1)).find("10^7 launches"), std::string::npos);
}

TEST(WorkloadPlan, MemoryIsCheckedBeforeAnythingIsMade) {
  ScopedEnv limit("BWPROF_MEMORY_LIMIT", "4000000");  // 4 MB "available"
  // 24 layers of an 8 MB add each, every layer distinct: far more than the limit.
  const std::vector<StepOp> ops{kernel_op("small", "layernorm", {{"rows", "2"}, {"cols", "8"}}, 24),
                                kernel_op("big_add", "stream_add", {{"n", "1000000"}}, 24)};
  const std::string m = message_of<OutOfMemory>([&] { plan_step("cpu", ops, kSetsEvery); });
  EXPECT_NE(m.find("host memory"), std::string::npos) << m;
  EXPECT_NE(m.find("big_add 24 x"), std::string::npos) << m;  // the largest op first, with its sets
  EXPECT_NE(m.find("available"), std::string::npos) << m;
  // time_step() checks the same plan before it makes an instance.
  StepOptions opt;
  opt.sets = kSetsEvery;
  EXPECT_THROW(time_step("cpu", ops, opt), OutOfMemory);
  // With one set of each op the step fits.
  EXPECT_NO_THROW(plan_step("cpu", {kernel_op("small", "layernorm", {{"rows", "2"}, {"cols", "8"}}, 24)}, 1));
}

TEST(WorkloadStep, RunsEachBlockLayerByLayerAndChecksTheOutputs) {
  std::string calls;
  const std::vector<StepOp> ops{user_op("a", [&] { calls += 'a'; }, 2), user_op("b", [&] { calls += 'b'; }, 2),
                                kernel_op("norm", "layernorm", {{"rows", "3"}, {"cols", "17"}}, 2),
                                user_op("c", [&] { calls += 'c'; }, 1)};
  StepOptions opt;
  opt.warmup = 0;
  opt.min_repeats = 3;
  opt.max_repeats = 3;
  opt.min_time_s = 0;
  opt.sets = kSetsEvery;
  const StepResult r = time_step("cpu", ops, opt);
  EXPECT_EQ(r.mode, "cpu");
  EXPECT_EQ(r.plan.launches, 7);
  EXPECT_EQ(r.time_us.count, 3);
  EXPECT_GT(r.time_us.median, 0);
  // Layer 0's ops, then layer 1's, then the single op: whole steps, never a part of one.
  const std::string step = "ababc";
  ASSERT_FALSE(calls.empty());
  ASSERT_EQ(calls.size() % step.size(), 0u) << calls;
  for (std::size_t i = 0; i < calls.size(); i += step.size()) EXPECT_EQ(calls.substr(i, step.size()), step);
  EXPECT_GE(calls.size() / step.size(), 3u + 1u);  // the timed repeats and at least one warm-up
  // The kernel op's first and last set (two layers, two instances) checked against the reference.
  EXPECT_EQ(r.checked, 2);
  EXPECT_TRUE(r.verified);
  EXPECT_LE(r.max_rel_error, 1e-5);
}

TEST(WorkloadStep, BadRepeatsAreRejected) {
  StepOptions opt;
  opt.min_repeats = 0;
  EXPECT_THROW(time_step("cpu", {kernel_op("x", "stream_add", {{"n", "8"}}, 1)}, opt), InvalidArgument);
  opt.min_repeats = 5;
  opt.max_repeats = 4;
  EXPECT_THROW(time_step("cpu", {kernel_op("x", "stream_add", {{"n", "8"}}, 1)}, opt), InvalidArgument);
}
