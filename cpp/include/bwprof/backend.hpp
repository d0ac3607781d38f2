// A backend runs kernel instances on one device and times them.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "bwprof/device.hpp"
#include "bwprof/kernel.hpp"
#include "bwprof/measurement.hpp"

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
  // Achievable peaks for `dtype`, measured by bwprof's own kernels once per process.
  virtual Peaks peaks(DType dtype) = 0;
  // Forget the measured peaks, so the next peaks() call measures them again.
  virtual void forget_peaks() = 0;
};

// The backend for a device id ("auto", "cpu", "gpu", "gpu:0"); kept open for the process.
// Unknown or absent devices: InvalidArgument listing what is there.
Backend& backend_for(const std::string& device_id);

}  // namespace bwprof
