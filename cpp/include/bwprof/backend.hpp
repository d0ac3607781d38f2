// A backend runs kernel instances on one device and times them. Its achievable peaks are the
// peaks policy's (bwprof/peaks.hpp); the backend for a device id is the api's backend_for().
#pragma once
#include "bwprof/device.hpp"
#include "bwprof/kernel.hpp"

namespace bwprof {

class Backend {
 public:
  virtual ~Backend() = default;
  virtual const DeviceInfo& info() const = 0;
  // Time one launch of `k` in microseconds: device events on a GPU, the steady clock on the CPU.
  virtual double time_launch_us(KernelInstance& k, int launches = 1) = 0;
  // Evict what the kernel will read from the caches (not timed).
  virtual void flush_cache(KernelInstance& k) = 0;
  virtual void synchronize() = 0;
  // Free memory of a device that has its own (the runtime's answer, now); negative for a
  // backend that runs in host memory (the CPU).
  virtual double free_device_bytes() { return -1; }
};

}  // namespace bwprof
