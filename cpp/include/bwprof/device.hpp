// What a device is and what it can do (list_devices() and build_features() are in bwprof/api.hpp).
#pragma once
#include <map>
#include <string>

#include "bwprof/link.hpp"

namespace bwprof {

struct DeviceInfo {
  std::string id;       // "cpu", "gpu:0"
  std::string kind;     // "cpu" or "gpu"
  std::string name;     // "AMD EPYC ...", "NVIDIA H100 80GB HBM3"
  std::string vendor;   // "amd", "nvidia", "intel", ...
  std::string arch;     // "x86_64", "sm_90", "gfx942"
  std::string backend;  // "cpu", "cuda", "hip"
  int compute_units = 0;    // cores, SMs or CUs
  double clock_mhz = 0;
  double memory_clock_mhz = 0;
  int memory_bus_bits = 0;
  double memory_bytes = 0;
  double cache_bytes = 0;   // last-level cache (L3 on the CPU, L2 on a GPU)
  // Theoretical peaks (0 when not known for this device).
  double bandwidth_theoretical_gbs = 0;
  double fp32_gflops_theoretical = 0;
  double fp16_gflops_theoretical = 0;
  double fp16_matrix_gflops_theoretical = 0;
  // GPUs: where the device sits and the link to the host that its copies from and to host memory
  // cross (PCIe generation and width, or the chip-to-chip link), where the machine reports it.
  std::string pci_bus_id;  // "0000:1b:00.0"
  Link host_link;
  // Per arithmetic type, from the architecture table (absent where the device has no such unit):
  // matrix "fp16", "bf16", "tf32", "fp8", "int8"; vector "fp32", "fp16", "fp64".
  std::map<std::string, double> matrix_gflops_theoretical, vector_gflops_theoretical;
  // Per-core cache sizes where the system reports them (the CPU: L1 data and L2), bytes; 0 unknown.
  double l1_cache_bytes = 0, l2_cache_bytes = 0;
};

}  // namespace bwprof
