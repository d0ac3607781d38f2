// Profiling the user's own code with bwprof's method: the same warm-up, repeats and median, the
// same cold caches (the L2 flushed on the stream the work runs on), the same peaks and the same
// roofline judgement as bwprof's own kernels, and the same row. The user declares the minimal
// traffic (each input read once, each output written once) and, optionally, the FLOPs.
//
//   bwprof::Profiler prof("my_kernel", "gpu");
//   prof.set_bytes(bytes_read, bytes_written).set_flops(flops);
//   bwprof::Measurement m = prof.measure([&](bwprof::Stream s) { my_launch(s.as<cudaStream_t>()); });
//   std::printf("%.1f GB/s, %s\n", m.bandwidth_gbs, m.bottleneck.c_str());
//
// A whole step made of parts bwprof cannot see into (an engine's GEMM, attention and KV-cache
// calls), each marked by a scoped region with the traffic it declares; on the CPU its report is
// the time inside each region against the step's wall time (Python's bwprof.region and
// profile_step give the same rows):
//
//   bwprof::StepReport r = prof.measure_step([&] {
//     { bwprof::Profiler::Region g(prof, "gemm", a_bytes + b_bytes, c_bytes, 2.0 * m * n * k); gemm(); }
//     { bwprof::Profiler::Region n(prof, "norm", x_bytes, y_bytes, 5.0 * rows * cols); norm(); }
//   });
//   std::printf("%s\n", r.verdict_text.c_str());
#pragma once
#include <cstddef>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bwprof/device.hpp"
#include "bwprof/measurement.hpp"
#include "bwprof/runner.hpp"

namespace bwprof {

class Backend;

// A GPU stream as an opaque handle: a cudaStream_t or hipStream_t as a pointer (nullptr is the
// default stream). On the CPU it is ignored.
struct Stream {
  void* handle = nullptr;
  template <class T>
  T as() const { return reinterpret_cast<T>(handle); }  // s.as<cudaStream_t>()
};

// What a region of a step declares per call; NaN: not declared (unknown, not 0).
struct RegionTraffic {
  double bytes_read = std::numeric_limits<double>::quiet_NaN();
  double bytes_written = std::numeric_limits<double>::quiet_NaN();
  double flops = std::numeric_limits<double>::quiet_NaN();
  std::string dtype = "fp32";  // the compute roof it is judged against
  bool matrix_units = false;   // FP16/BF16 work judged against the matrix units' roof
};

// One row of a step's report: a region, as bwprof's row (`row`: kernel = the region's name,
// family "region", the traffic it declared per call, time_us over every call of every timed run,
// judged by the core's one judgement) and its place in the step (medians over the timed runs).
// The names are those of the Python step report's columns.
struct StepRegion {
  Measurement row;
  double calls_per_step = 0;
  double time_per_step_us = 0;  // the region's calls summed within a run
  double step_share_pct = 0;    // time_per_step_us / the step's wall_us
};

// A step measured by Profiler::measure_step: its regions, largest time_per_step_us first, and the
// summary (the Python step report's keys): the wall time, the time inside regions (busy) and outside
// them (idle) in the run of median wall time, region calls per step, and the verdict.
struct StepReport {
  std::string name, device;
  std::vector<StepRegion> regions;
  double wall_us = 0, busy_us = 0, idle_us = 0, busy_pct = 0;
  double region_calls = 0;  // per step, median
  int repeats = 0, warmup = 0;
  // "host-bound" when the regions take under half the step (kHostBoundBusyPct), else the bound
  // that holds the most region time ("memory-bound", ...); the sentence with its numbers.
  std::string verdict, verdict_text;
};

// Under this share of the step inside regions, the step's time is the unmarked host code's.
constexpr double kHostBoundBusyPct = 50.0;

class Profiler {
 public:
  // A scoped region of the step being measured by measure_step (the C++ twin of Python's
  // bwprof.region): its constructor starts the clock, its destructor stops it. Bytes and FLOPs are
  // per call; NaN: not declared. Regions do not nest (an InvalidArgument naming both); outside
  // measure_step a region does nothing.
  class Region {
   public:
    Region(Profiler& profiler, std::string name, double bytes_read = std::numeric_limits<double>::quiet_NaN(),
           double bytes_written = std::numeric_limits<double>::quiet_NaN(),
           double flops = std::numeric_limits<double>::quiet_NaN());
    Region(Profiler& profiler, std::string name, const RegionTraffic& traffic);
    ~Region();
    Region(const Region&) = delete;
    Region& operator=(const Region&) = delete;

   private:
    Profiler* profiler_ = nullptr;  // null: nothing recorded (outside measure_step)
  };

  // `name` becomes the row's `kernel` column; `device` is a bwprof device id ("auto", "cpu",
  // "gpu", "gpu:0"). An unknown device or an empty name: InvalidArgument.
  explicit Profiler(std::string name, const std::string& device = "auto");

  // The minimal traffic in bytes (finite, >= 0) and how it was found ("declared", "inferred" or
  // "mixed": the row's bytes_source column). With "unknown", a side bwprof could not find is NaN.
  // Never set, the bytes are unknown: the row has its time, no bandwidth, and says to set them.
  Profiler& set_bytes(double bytes_read, double bytes_written, const std::string& source = "declared");
  // Floating-point operations per call (multiply-add = 2) and how they were found ("declared",
  // "inferred" or "counters": the row's flops_source column); 0: pure data movement, judged by
  // bandwidth alone. Never set, the FLOPs are unknown: the row is judged by bandwidth only where
  // bandwidth proves it memory-bound, and otherwise says to set them.
  Profiler& set_flops(double flops, const std::string& source = "declared");
  // The storage type whose compute roof judges the row: "fp32" (default) or "fp16"; with
  // matrix_units, FP16 work is judged against the matrix units' roof (tensor cores, MFMA).
  Profiler& set_dtype(const std::string& dtype, bool matrix_units = false);
  Profiler& set_shape(std::string shape);  // the row's shape column: free text
  Profiler& set_access_pattern(AccessPattern pattern);
  // "cold" (default: caches flushed before every timed call) or "hot".
  Profiler& set_cache(const std::string& cache);
  // Warm-up calls, then timed calls until at least min_repeats and min_time_s (RunOptions).
  Profiler& set_warmup(int warmup);
  Profiler& set_repeats(int min_repeats, double min_time_s = 0.05, int max_repeats = 1000, double max_time_s = 2.0);
  // Repeats go on past set_repeats()' minimum until the samples' relative spread (time_cv) is at
  // most `fraction`, within its maxima (RunOptions::target_rel_spread; 0: none). measure() refuses
  // one outside (0, 1].
  Profiler& set_target_rel_spread(double fraction) {
    opt_.target_rel_spread = fraction;
    return *this;
  }
  // The bound on the whole measure() call (RunOptions::max_total_s; infinite: none; measure()
  // refuses one that is not > 0).
  Profiler& set_max_total_s(double seconds) {
    opt_.max_total_s = seconds;
    return *this;
  }
  // The stream measure() hands its callable and times (GPU). Default: bwprof's own stream.
  Profiler& set_stream(Stream stream);
  // How a timed call waits for the host to queue its work: "block" (default for measure(): the
  // stream is held until the call returns, so the host's launch overhead is not timed; a call
  // that makes the host wait on the GPU times out after a second and is then timed behind the
  // spin) or "spin" (~20 us of busy GPU ahead of the start; the default for start()/stop()).
  Profiler& set_stream_hold(const std::string& how);
  // Host memory the code touches (CPU): a cold run evicts exactly these lines. Without them a cold
  // CPU run streams a buffer twice the last-level cache instead.
  Profiler& set_host_buffers(std::vector<std::pair<const void*, std::size_t>> buffers);

  const DeviceInfo& device() const;
  // The stream measure() passes: the one set, else bwprof's own (nullptr on the CPU).
  Stream stream() const;

  // Times `fn` (CPU code, or GPU work it queues on the set stream, else the default stream) and
  // derives the row.
  Measurement measure(const std::function<void()>& fn);
  // Times `fn`, which queues its GPU work on the stream it is given (stream()).
  Measurement measure(const std::function<void(Stream)>& fn);

  // The single-shot form, around code that cannot be wrapped: start() flushes (cold) and starts
  // the clock on `stream` (default: the set stream, else the default stream); stop() stops it and
  // returns the row over every start/stop pair so far (its `repeats` counts them); reset() forgets
  // them.
  void start();
  void start(Stream stream);
  Measurement stop();
  void reset();

  // Runs `step` set_warmup() times, then set_repeats()' minimum times, timing each run's wall time
  // and each Region inside it on the host clock, and returns the report: one row per region name,
  // judged against the device's peaks. The CPU backend only (on a GPU, time the parts with
  // measure(), or profile the step with Python's bwprof.profile_step): InvalidArgument. A step that
  // runs no region, a region opened inside another or left open: InvalidArgument naming it; the
  // step's own exception propagates unchanged.
  StepReport measure_step(const std::function<void()>& step);

 private:
  // `hold`: how the timed runs waited for the host ("" on the CPU); `host_waited`: a hold gave up.
  Measurement row(const std::vector<double>& times_us, int warmup, const std::string& hold, bool host_waited) const;
  Measurement run(const std::function<void()>& fn, void* stream);

  Backend* backend_;
  std::string name_, shape_, dtype_ = "fp32", cache_ = "cold", bytes_source_ = "unknown";
  std::string flops_source_ = "unknown";
  double bytes_read_ = std::numeric_limits<double>::quiet_NaN(), bytes_written_ = bytes_read_;
  double flops_ = std::numeric_limits<double>::quiet_NaN();
  bool matrix_units_ = false;
  AccessPattern pattern_ = AccessPattern::kCoalesced;
  RunOptions opt_;
  std::optional<Stream> stream_;
  std::optional<std::string> hold_;
  std::vector<std::pair<const void*, std::size_t>> buffers_;
  bool buffers_set_ = false;
  // measure_step's state: the region calls of the timed runs (host clock, ns).
  struct RegionCall {
    std::string name;
    int repeat = 0;
    long long start_ns = 0, end_ns = 0;
    RegionTraffic traffic;
  };
  void open_region(const std::string& name, const RegionTraffic& traffic);
  void close_region();
  bool stepping_ = false;
  int step_repeat_ = -1;  // -1: a warm-up run (its calls are not kept)
  std::optional<RegionCall> open_call_;
  std::vector<RegionCall> calls_;
  // The single-shot form's state.
  bool open_ = false;
  void* open_stream_ = nullptr;
  std::string saved_hold_;
  std::vector<double> shots_us_;
};

}  // namespace bwprof
