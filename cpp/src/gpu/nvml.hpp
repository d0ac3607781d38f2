// NVML, NVIDIA's management library, opened at run time (dlopen of libnvidia-ml.so.1, which the
// driver installs): the few declarations bwprof needs, written here so that no NVML header is
// needed to build and a machine without it (AMD, CI) simply reports no NVML. Read-only queries.
#pragma once
#include <string>
#include <vector>

namespace bwprof {
namespace nvml {

// What NVML says about one GPU, found by its PCI bus id ("0000:1b:00.0").
struct GpuLinks {
  bool found = false;           // NVML is there and knows this GPU
  int pcie_generation = 0;      // the fastest the GPU and its slot can run (0: not reported)
  int pcie_width = 0;
  bool c2c = false;             // a chip-to-chip host link (Grace Hopper's NVLink-C2C)
  int nvlinks_active = 0;       // active NVLinks
  int nvlinks_to_switch = 0;    // of those, ending on an NVSwitch (every GPU on it is reachable)
  std::vector<std::string> nvlink_peers;  // per active link to a GPU: that GPU's bus id
};

// Empty `found` when NVML cannot be opened or does not know the GPU.
GpuLinks gpu_links(const std::string& pci_bus_id);

// "0000:1B:00.0" and "00000000:1b:00.0" name one device: domain, bus, device and function as numbers.
bool same_pci_device(const std::string& a, const std::string& b);

}  // namespace nvml
}  // namespace bwprof
