// A backend runs kernel instances on one device and times them. Its achievable peaks are the
// peaks policy's (bwprof/peaks.hpp); the backend for a device id is the api's backend_for().
#pragma once
#include <functional>
#include <limits>
#include <memory>
#include <string>

#include "bwprof/device.hpp"
#include "bwprof/kernel.hpp"

namespace bwprof {

// The device's SM clock at one moment and whether it was throttled for thermal or power reasons.
struct ClockSample {
  double sm_mhz = std::numeric_limits<double>::quiet_NaN();  // NaN: the runtime does not say
  bool throttled = false;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual const DeviceInfo& info() const = 0;
  // Time one launch of `k` in microseconds: device events on a GPU, the steady clock on the CPU.
  virtual double time_launch_us(KernelInstance& k, int launches = 1) = 0;
  // Evict what the kernel will read from the caches (not timed).
  virtual void flush_cache(KernelInstance& k) = 0;
  virtual void synchronize() = 0;
  // Makes this device the calling thread's current one (a GPU runtime's current device), before
  // anything is allocated or launched for it; a process that drives several GPUs switches often.
  virtual void activate() {}
  // Free memory of a device that has its own (the runtime's answer, now); negative for a
  // backend that runs in host memory (the CPU).
  virtual double free_device_bytes() { return -1; }
  // The launches `body` makes, as one instance whose launch() makes them all back to back: on a
  // GPU captured once into a graph (CUDA/HIP graphs) and replayed; on the CPU, `body` itself.
  // InvalidArgument naming the cause when the work cannot be captured.
  virtual std::unique_ptr<KernelInstance> capture(std::function<void()> body) = 0;
  // The clock now, where the runtime exposes it (NVML, the AMD driver's sysfs); NaN otherwise.
  virtual ClockSample sample_clock() { return {}; }

  // ---- timed regions on a given stream (the user's code: bwprof/profiler.hpp) ------------------
  // The stream that timing, cache flushes and the stream hold go on, as an opaque handle (a
  // cudaStream_t / hipStream_t; nullptr is the default stream); bwprof's own stream until set.
  // The CPU has no streams: it ignores them.
  virtual void* timing_stream() const { return nullptr; }
  virtual void set_timing_stream(void* stream) { (void)stream; }
  virtual void reset_timing_stream() {}
  // How a timed run waits for the host to queue its work: "spin" or "block" (see the GPU
  // backend); "" where nothing waits (the CPU).
  virtual const char* stream_hold() const { return ""; }
  virtual void set_stream_hold(const std::string& how) { (void)how; }
  // One timed region around work the caller queues on the timing stream: begin_region() starts
  // the clock (after the hold or spin), end_region_us() stops it, waits for the work and returns
  // its microseconds. time_launch_us() is a region around launches of a kernel instance.
  virtual void begin_region() = 0;
  virtual double end_region_us() = 0;
  // Whether the last region's block hold gave up waiting for the host (the work made the host
  // wait on the GPU, so that region's time includes the wait).
  virtual bool region_hold_timed_out() const { return false; }
  // Whether a time_launch_us() since the last ask gave up holding the stream: the work made the host
  // wait on the GPU inside it, so the backend re-timed that launch, and times the rest, behind the
  // spin. The runner then drops the samples it took under the hold. Asking clears it.
  virtual bool take_hold_gave_up() { return false; }
};

}  // namespace bwprof
