// Limits that keep a measurement from taking the machine (issue #12): every integer parameter in a
// declared range, the memory a problem needs (its family's footprint, held against what it really
// allocates) against what is available, the work of one launch against a time bound, and the
// interrupt check between launches.
#include "bwprof/limits.hpp"

#include <gtest/gtest.h>

#include "message_of.hpp"
#include "scoped_env.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "bwprof/api.hpp"
#include "bwprof/error.hpp"
#include "bwprof/host_tensor.hpp"
#include "bwprof/interrupt.hpp"
#include "test_util.hpp"

using namespace bwprof;

namespace {

using Params = std::map<std::string, std::string>;

// A suite shape as make_problem spells it: flags "true"/"false", other values their text.
Params as_words(const ParamList& l) {
  Params out;
  for (auto& kv : l) out[kv.first] = kv.second.is_bool() ? (kv.second.as_bool() ? "true" : "false") : kv.second.text();
  return out;
}

// Shapes of a kernel that run quickly on `info`: its --quick suite shapes, else its peaks runs
// there (a dtype of their own, or every dtype of the variant when empty).
std::vector<std::pair<std::string, Params>> quick_shapes(const KernelFamily& k, const DeviceInfo& info) {
  std::vector<std::pair<std::string, Params>> out;
  for (const SuiteConfig& c : k.suite) out.emplace_back("", as_words(c.quick));
  if (out.empty() && k.ceiling_runs)
    for (const CeilingRun& r : k.ceiling_runs(info)) out.emplace_back(r.dtype, r.params);
  if (out.empty() && k.ceiling_params) out.emplace_back("", k.ceiling_params(info));
  return out;
}

std::vector<std::string> dtypes_of(const KernelFamily& k, const Variant& v, const std::string& only) {
  std::vector<std::string> out;
  for (DType t : v.dtypes.empty() ? k.dtypes : v.dtypes)
    if (only.empty() || only == to_string(t)) out.push_back(to_string(t));
  return out;
}

}  // namespace

TEST(Limits, EveryIntegerParameterHasARangeHoldingItsDefault) {
  for (const KernelFamily& k : kernel_registry()) {
    for (const ParamSpec& s : k.params) {
      if (s.kind != ParamSpec::Kind::kInt) continue;
      EXPECT_LE(s.min, s.max) << k.name << "." << s.name;
      EXPECT_LE(s.max, kMaxElements) << k.name << "." << s.name << ": no bound at all";
      if (s.default_value.empty()) continue;
      if (s.allows_auto && s.default_value == "auto") continue;  // the kernel's own choice
      const long long d = std::atoll(s.default_value.c_str());
      EXPECT_TRUE(s.min <= d && d <= s.max) << k.name << "." << s.name << " default " << d;
    }
  }
}

TEST(Limits, AValueOutsideTheRangeNamesKernelParameterValueAndRange) {
  for (const KernelFamily& k : kernel_registry()) {
    // Every parameter at its maximum + 1 and its minimum - 1, the others valid (a suite shape, or
    // the defaults), refused by make_problem with the whole story in the message.
    if (k.variants.empty()) continue;  // nothing to make a problem for in this build
    const std::string kind = k.variants.front().backend;
    const Params base = k.suite.empty() ? Params{} : as_words(k.suite.front().quick);
    const std::string dtype = to_string((k.variants.front().dtypes.empty() ? k.dtypes : k.variants.front().dtypes)[0]);
    for (const ParamSpec& s : k.params) {
      if (s.kind != ParamSpec::Kind::kInt) continue;
      for (long long bad : {static_cast<long long>(s.max) + 1, static_cast<long long>(s.min) - 1}) {
        Params p = base;
        p[s.name] = std::to_string(bad);
        const std::string msg = message_of([&] { make_problem(k, kind, "", dtype, p); });
        EXPECT_NE(msg.find(s.name + ": " + std::to_string(bad) + " is out of range for kernel '" + k.name + "'"),
                  std::string::npos)
            << msg;
        EXPECT_NE(msg.find("between " + std::to_string(s.min) + " and " + std::to_string(s.max)), std::string::npos)
            << msg;
        EXPECT_THROW(make_problem(k, kind, "", dtype, p), InvalidArgument);
      }
    }
  }
  EXPECT_THROW(make_problem(find_kernel("stream_copy"), "cpu", "", "fp32", {{"n", "99999999999999999999999"}}),
               InvalidArgument);
}

TEST(Limits, EveryFamilyDeclaresItsFootprint) {
  for (const KernelFamily& k : kernel_registry()) EXPECT_TRUE(static_cast<bool>(k.footprint)) << k.name;
}

// The footprint is what an instance holds: never less than what it allocates (or the check would
// let an OOM through), and not much more (or it would refuse shapes that fit).
TEST(Limits, FootprintCoversWhatEveryCpuInstanceAllocates) {
  Backend& cpu = backend_for("cpu");
  int checked = 0;
  for (const KernelFamily& k : kernel_registry()) {
    for (const Variant& v : k.variants) {
      if (v.backend != "cpu") continue;
      for (const auto& [only, shape] : quick_shapes(k, cpu.info())) {
        for (const std::string& dtype : dtypes_of(k, v, only)) {
          const Problem p = make_problem(k, "cpu", v.name, dtype, shape);
          const Footprint f = footprint_of(k, p, "cpu");
          EXPECT_EQ(f.device_bytes, 0) << k.name;
          const std::size_t before = host_memory_counter().in_use();
          host_memory_counter().reset_peak();
          {
            auto inst = v.make(cpu, p);
            inst->launch();
            EXPECT_TRUE(inst->check().ok) << k.name << " " << p.shape();
          }
          const double used = double(host_memory_counter().peak() - before);
          EXPECT_LE(used, f.host_bytes) << k.name << "/" << v.name << " " << dtype << " " << p.shape();
          // Not much more either, where the instance holds its data in host tensors (the ceilings'
          // few buffers are plain vectors, which the counter does not see).
          if (used > 0) EXPECT_LE(f.host_bytes, 1.25 * used + (1 << 20)) << k.name << "/" << v.name << " " << p.shape();
          EXPECT_EQ(host_memory_counter().in_use(), before) << k.name << ": an instance left memory behind";
          ++checked;
        }
      }
    }
  }
  EXPECT_GT(checked, 40);
}

TEST(Limits, ArraysThatFitOneByOneButNotTogetherAreRefusedBeforeAnyAllocation) {
  // stream_add: three arrays of 32 MiB each fit under a 100 MB limit, all three do not.
  ScopedEnv limit("BWPROF_MEMORY_LIMIT", "100e6");
  const KernelFamily& k = find_kernel("stream_add");
  const std::size_t before = host_memory_counter().in_use();
  host_memory_counter().reset_peak();
  RunOptions opt;
  opt.min_repeats = 1;
  opt.min_time_s = 0;
  const std::string msg = message_of([&] { measure_kernel(backend_for("cpu"), k, "fp32", "", {{"n", "8388608"}}, opt); });
  EXPECT_NE(msg.find("out of host memory: kernel 'stream_add' fp32 n=8388608 needs 0.101 GB of host memory, 0.1 GB "
                     "available"),
            std::string::npos)
      << msg;
  EXPECT_THROW(measure_kernel(backend_for("cpu"), k, "fp32", "", {{"n", "8388608"}}, opt), OutOfMemory);
  EXPECT_EQ(host_memory_counter().peak(), before) << "allocated before refusing";
  // A third of it fits (measuring it would also take the peaks, whose own arrays need more).
  EXPECT_NO_THROW(check_memory(k, make_problem(k, "cpu", "", "fp32", {{"n", "2796202"}}), backend_for("cpu")));
}

TEST(Limits, MemoryLimitMustBeAPositiveNumber) {
  for (const char* bad : {"0", "-5", "lots", "1e9x", "nan"}) {
    ScopedEnv limit("BWPROF_MEMORY_LIMIT", bad);
    const std::string msg = message_of([] { available_host_bytes(); });
    EXPECT_EQ(msg, std::string("BWPROF_MEMORY_LIMIT=") + bad + ": expected a positive number");
  }
  ScopedEnv limit("BWPROF_MEMORY_LIMIT", "12345");
  EXPECT_EQ(available_host_bytes(), 12345);
}

TEST(Limits, OneLaunchIsBoundedByItsWorkEstimate) {
  const KernelFamily& k = find_kernel("intensity_sweep");
  const Variant& v = find_variant(k, "cpu", "");
  DeviceInfo cpu;
  cpu.id = cpu.kind = "cpu";
  cpu.compute_units = 2;
  // n * fmas * 2 FLOPs at 32 GFLOP/s a thread: 2^24 * 2^16 * 2 / 64e9 = 34.4 s, within 60 s;
  // 2^24 * 2^17 * 2 / 64e9 = 68.7 s, beyond.
  const Problem ok = make_problem(k, "cpu", "", "fp32", {{"n", "16777216"}, {"fmas", "65536"}});
  const Problem big = make_problem(k, "cpu", "", "fp32", {{"n", "16777216"}, {"fmas", "131072"}});
  EXPECT_NEAR(min_launch_seconds(k, v, ok, cpu), 34.36, 0.01);
  EXPECT_NO_THROW(check_work(k, v, ok, cpu));
  const std::string msg = message_of([&] { check_work(k, v, big, cpu); });
  EXPECT_NE(msg.find("shape: kernel 'intensity_sweep' fp32 n=16777216,fmas=131072 would take at least 68.7 s per "
                     "launch on cpu, more than the bound of 60 s (BWPROF_MAX_LAUNCH_S raises it)"),
            std::string::npos)
      << msg;
  EXPECT_THROW(check_work(k, v, big, cpu), InvalidArgument);
  {
    ScopedEnv bound("BWPROF_MAX_LAUNCH_S", "100");
    EXPECT_NO_THROW(check_work(k, v, big, cpu));
  }
  {
    ScopedEnv bound("BWPROF_MAX_LAUNCH_S", "inf");
    EXPECT_NO_THROW(check_work(k, v, make_problem(k, "cpu", "", "fp32", {{"n", "68719476736"}, {"fmas", "1048576"}}),
                               cpu));
  }
  {
    ScopedEnv bound("BWPROF_MAX_LAUNCH_S", "soon");
    EXPECT_THROW(check_work(k, v, ok, cpu), InvalidArgument);
  }
  // A GPU at its datasheet figures, 10 s: the bytes at 1000 GB/s or the FLOPs at 50 TFLOP/s.
  DeviceInfo gpu;
  gpu.id = "gpu:0";
  gpu.kind = "gpu";
  gpu.bandwidth_theoretical_gbs = 1000;
  gpu.fp32_gflops_theoretical = 50000;
  const Problem wide = make_problem(k, "cpu", "", "fp32", {{"n", "68719476736"}, {"fmas", "1"}});
  EXPECT_NEAR(min_launch_seconds(k, v, wide, gpu), 2.0 * 68719476736 * 4 / 1e12, 1e-6);
  EXPECT_NEAR(min_launch_seconds(k, v, big, gpu), 16777216.0 * 131072 * 2 / 5e13, 1e-6);
  EXPECT_EQ(max_launch_seconds(gpu), 10);
  EXPECT_EQ(max_launch_seconds(cpu), 60);
}

TEST(Limits, TheMeasureRefusesAnOverlongLaunchBeforeAllocating) {
  const std::size_t before = host_memory_counter().in_use();
  host_memory_counter().reset_peak();
  EXPECT_THROW(measure("intensity_sweep", "fp32", "cpu", "", {{"fmas", "1048576"}}, RunOptions{}), InvalidArgument);
  EXPECT_EQ(host_memory_counter().peak(), before);
}

// Issue 45: the bound on one launch did not bound a call of many (a CPU GEMM of 13 s a launch).
TEST(Limits, AWholeCallIsBoundedFromItsFirstLaunch) {
  EXPECT_NO_THROW(check_total_time(1.0, 0.5, 10, 10.0));  // about 6 s
  const std::string msg = message_of<InvalidArgument>([] { check_total_time(13.0, 13.0, 11, 120.0); });
  EXPECT_NE(msg.find("max_total_s"), std::string::npos) << msg;
  EXPECT_NE(msg.find("156 s"), std::string::npos) << msg;
  EXPECT_NE(msg.find("math.inf"), std::string::npos) << msg;
  EXPECT_NO_THROW(check_total_time(0, 1e9, 1000, std::numeric_limits<double>::infinity()));
  RunOptions opt;  // 10 repeats, 0.05 s of kernel time, at most 1000 launches or 2 s
  EXPECT_EQ(timed_launches_for(opt, 13.0), 10);
  EXPECT_EQ(timed_launches_for(opt, 1e-4), 500);
  opt.max_repeats = 100;
  EXPECT_EQ(timed_launches_for(opt, 1e-6), 100);
  // The first launch of a call bounded below its time stops it before the rest runs.
  RunOptions tight;
  tight.warmup = 3;
  tight.max_total_s = 1e-9;
  const std::string too_long =
      message_of<InvalidArgument>([&] { measure("stream_copy", "fp32", "cpu", "", {{"n", "65536"}}, tight); });
  EXPECT_NE(too_long.find("more are to come"), std::string::npos) << too_long;
  tight.warmup = 0;
  EXPECT_THROW(measure("stream_copy", "fp32", "cpu", "", {{"n", "65536"}}, tight), InvalidArgument);
  for (double bad : {0.0, -1.0, std::nan("")}) {
    tight.max_total_s = bad;
    EXPECT_THROW(measure("stream_copy", "fp32", "cpu", "", {{"n", "4096"}}, tight), InvalidArgument);
  }
}

TEST(Interrupt, TheCheckStopsAMeasurementBetweenLaunches) {
  int calls = 0;
  struct Stop : std::runtime_error {
    using std::runtime_error::runtime_error;
  };
  set_interrupt_check([&] {
    if (++calls == 3) throw Stop("stop");
  });
  RunOptions opt;
  opt.min_repeats = 1000000;
  opt.max_repeats = 1000000;
  opt.min_time_s = 1e9;
  opt.max_time_s = 1e9;  // without the check this would run for days
  EXPECT_THROW(measure("stream_copy", "fp32", "cpu", "", {{"n", "65536"}}, opt), Stop);
  EXPECT_EQ(calls, 3);
  set_interrupt_check({});
  opt.min_repeats = opt.max_repeats = 2;
  EXPECT_NO_THROW(measure("stream_copy", "fp32", "cpu", "", {{"n", "4096"}}, opt));
  EXPECT_EQ(calls, 3);  // removed: not called again
}

TEST(SuiteLabels, TemplatesTakeTheParametersOrTheirDefaults) {
  const KernelFamily& a = find_kernel("attention");
  const ParamList p = {{"heads", 14}, {"seq_q", 1}, {"seq_kv", 4096}};
  EXPECT_EQ(expand_label(a, "decode kv={seq_kv} b={batch}", p), "decode kv=4096 b=1");
  EXPECT_EQ(expand_label(a, "kv={seq_kv:bin}", p), "kv=4Ki");
  EXPECT_EQ(expand_label(a, "{heads:bin} heads", p), "14 heads");
  const KernelFamily& s = find_kernel("stream_copy");
  EXPECT_EQ(expand_label(s, "stream n={n:bin}", {{"n", 1 << 24}}), "stream n=16Mi");
  EXPECT_EQ(expand_label(s, "stream n={n:bin}", {{"n", 3 << 20}}), "stream n=3Mi");
  EXPECT_EQ(expand_label(s, "stream n={n:bin}", {{"n", 1000}}), "stream n=1000");
  EXPECT_EQ(expand_label(s, "stream n={n:bin}", {}), "stream n=16Mi");  // the default
  EXPECT_THROW(expand_label(s, "{m}", {}), Error);
  EXPECT_THROW(expand_label(s, "{n", {}), Error);
  EXPECT_THROW(expand_label(s, "{n:hex}", {}), Error);
  // The built-in suites' labels were written at registration, the quick ones from the quick shape.
  for (const KernelFamily& k : kernel_registry())
    for (const SuiteConfig& c : k.suite) {
      EXPECT_EQ(c.label.find('{'), std::string::npos) << k.name << ": " << c.label;
      EXPECT_EQ(c.quick_label.find('{'), std::string::npos) << k.name << ": " << c.quick_label;
    }
  const SuiteConfig& fill = find_kernel("fill").suite.front();
  EXPECT_EQ(fill.label, "fill n=16Mi");
  EXPECT_EQ(fill.quick_label, "fill n=1Mi");
}

// ---- the GPU (skipped without one) ------------------------------------------------------------

namespace {

}  // namespace

TEST(GpuLimits, FootprintCoversWhatEveryGpuInstanceAllocates) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  Backend& gpu = backend_for("gpu");
  const auto features = build_features();
  const bool amd = std::find(features.begin(), features.end(), "hip") != features.end();
  int checked = 0;
  for (const KernelFamily& k : kernel_registry()) {
    for (const Variant& v : k.variants) {
      if (v.backend != "gpu") continue;
      for (const auto& [only, shape] : quick_shapes(k, gpu.info())) {
        for (const std::string& dtype : dtypes_of(k, v, only)) {
          const Problem p = make_problem(k, "gpu", v.name, dtype, shape);
          const Footprint f = footprint_of(k, p, "gpu");
          MemoryCounter& host = host_memory_counter();
          MemoryCounter& dev = device_memory_counter();
          const std::size_t host0 = host.in_use(), dev0 = dev.in_use();
          host.reset_peak();
          dev.reset_peak();
          {
            std::unique_ptr<KernelInstance> inst;
            try {
              inst = v.make(gpu, p);
            } catch (const InvalidArgument& e) {
              // A family outside the default suite may need more than this node has (a peer copy
              // needs two GPUs); it says so, and its footprint is checked where it can run.
              if (k.default_suite) throw;
              std::cout << "[ skipped  ] " << k.name << " " << p.shape() << ": " << e.what() << "\n";
              continue;
            }
            inst->launch();
            gpu.synchronize();
            EXPECT_TRUE(inst->check().ok) << k.name << "/" << v.name << " " << p.shape();
          }
          const double host_used = double(host.peak() - host0), dev_used = double(dev.peak() - dev0);
          const std::string what = k.name + "/" + v.name + " " + dtype + " " + p.shape();
          EXPECT_LE(host_used, f.host_bytes) << what;
          EXPECT_LE(dev_used, f.device_bytes) << what;
          // Not much more either (rocBLAS keeps its workspace out of bwprof's buffers).
          const double slack = (1 << 20) + (k.family == "gemm" && amd ? 96.0 * (1 << 20) : 0.0);
          EXPECT_LE(f.device_bytes, 1.25 * dev_used + slack) << what;
          EXPECT_EQ(dev.in_use(), dev0) << what << ": device memory left behind";
          ++checked;
        }
      }
    }
  }
  EXPECT_GT(checked, 40);
}

TEST(GpuLimits, BuffersThatFitOneByOneButNotTogetherAreRefusedBeforeAnyAllocation) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  Backend& gpu = backend_for("gpu");
  const double free = available_device_bytes(gpu);
  ASSERT_GT(free, 1e9);
  RunOptions opt;
  opt.min_repeats = 1;
  opt.min_time_s = 0;
  MemoryCounter& dev = device_memory_counter();
  // GEMV with 1024 copies of an 8192 x 8192 FP32 W (268 MB each): any one fits, all of them do
  // not; the host holds one.
  {
    const std::size_t before = dev.in_use();
    dev.reset_peak();
    const Params p = {{"N", "8192"}, {"K", "8192"}, {"rotate", "1024"}};
    const std::string msg = message_of([&] { measure_kernel(gpu, find_kernel("gemv"), "fp32", "", p, opt); });
    EXPECT_NE(msg.find("out of device memory: kernel 'gemv' fp32 N=8192,K=8192,rotate=1024 needs 274.9 GB on gpu:"),
              std::string::npos)
        << msg;
    EXPECT_NE(msg.find("GB free"), std::string::npos) << msg;
    EXPECT_THROW(measure_kernel(gpu, find_kernel("gemv"), "fp32", "", p, opt), OutOfMemory);
    EXPECT_EQ(dev.peak(), before) << "allocated before refusing";
  }
  // stream_add with three arrays of 40 % of the free memory each, where the host could hold them.
  const std::int64_t n = static_cast<std::int64_t>(0.4 * free / 4);
  if (3.0 * 4 * n > 0.9 * available_host_bytes()) GTEST_SKIP() << "the host cannot hold stream_add's arrays";
  const std::string msg =
      message_of([&] { measure_kernel(gpu, find_kernel("stream_add"), "fp32", "", {{"n", std::to_string(n)}}, opt); });
  EXPECT_NE(msg.find("out of device memory: kernel 'stream_add'"), std::string::npos) << msg;
  // One third of it is allowed.
  EXPECT_NO_THROW(check_memory(find_kernel("stream_add"), make_problem(find_kernel("stream_add"), "gpu", "", "fp32",
                                                                       {{"n", std::to_string(n / 3)}}),
                               gpu));
}
