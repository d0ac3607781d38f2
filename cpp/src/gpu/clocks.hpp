// The SM clock and the throttle state of one GPU, read through what its driver exposes and found
// at run time: NVML (libnvidia-ml.so.1, opened with dlopen: no header and no link-time dependency)
// on NVIDIA; on AMD the amdgpu driver's sysfs file pp_dpm_sclk, which rocm-smi itself reads (no
// ROCm library whose structures change between releases). Absent: NaN, never an error.
#pragma once
#include <memory>
#include <string>

#include "bwprof/backend.hpp"

namespace bwprof {

class ClockReader {
 public:
  // `pci_bus_id` as the runtime gives it ("0000:65:00.0"), `vendor` "nvidia" or "amd".
  ClockReader(std::string pci_bus_id, std::string vendor);
  ~ClockReader();
  ClockReader(const ClockReader&) = delete;
  ClockReader& operator=(const ClockReader&) = delete;
  // The clock now; opens the driver's interface on the first call.
  ClockSample sample();
  // What answers: "nvml", "sysfs" or "" (nothing: every sample is NaN).
  const std::string& source();

 private:
  struct Nvml;
  void open();
  std::string bus_, vendor_, source_, sysfs_;
  bool opened_ = false;
  std::unique_ptr<Nvml> nvml_;
};

// NVML's clock event (throttle) reasons that mean thermal or power limits: SW power cap, HW
// slowdown, SW and HW thermal slowdown, HW power brake (not idle, application clocks, sync boost).
constexpr unsigned long long kNvmlThrottleMask = 0x4ull | 0x8ull | 0x20ull | 0x40ull | 0x80ull;
// The current level of an amdgpu pp_dpm_sclk text ("0: 500Mhz\n1: 1700Mhz *\n"): MHz, NaN if none.
double parse_pp_dpm_sclk(const std::string& text);

}  // namespace bwprof
