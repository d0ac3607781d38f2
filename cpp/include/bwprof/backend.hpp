// A backend runs kernel instances on one device and times them. Its achievable peaks are the
// peaks policy's (bwprof/peaks.hpp); the backend for a device id is the api's backend_for().
#pragma once
#include <functional>
#include <limits>
#include <memory>

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
  // The launches `body` makes, as one instance whose launch() makes them all back to back: on a
  // GPU captured once into a graph (CUDA/HIP graphs) and replayed; on the CPU, `body` itself.
  // InvalidArgument naming the cause when the work cannot be captured.
  virtual std::unique_ptr<KernelInstance> capture(std::function<void()> body) = 0;
  // The clock now, where the runtime exposes it (NVML, the AMD driver's sysfs); NaN otherwise.
  virtual ClockSample sample_clock() { return {}; }
};

}  // namespace bwprof
