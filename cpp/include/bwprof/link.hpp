// Links: what carries a transfer that leaves one GPU's memory (the host's PCIe or chip-to-chip
// link, NVLink or xGMI between GPUs, the network between nodes), and the theoretical bandwidth
// that judges it. A transfer row is bound by its link, not by device memory (bwprof/roofline.hpp).
// The rate tables are here; reading a machine's links (sysfs, NVML, the runtime) is the GPU
// backend's (cpp/src/gpu/links.cpp).
#pragma once
#include <string>

namespace bwprof {

struct Link {
  std::string kind;  // "pcie", "c2c", "nvlink", "xgmi", "network"; empty: no link (device memory)
  std::string name;  // as printed: "PCIe 5.0 x16", "NVLink x18", "NVLink-C2C"
  double gbs = 0;    // theoretical bandwidth in one direction, GB/s (10^9 B/s); 0 when unknown
  bool known() const { return gbs > 0; }
};

// Bytes per second per lane in one direction, after line coding, for PCIe generations 1 to 6
// (2.5, 5, 8, 16, 32, 64 GT/s; 8b/10b to gen 2, 128b/130b to gen 5, FLIT 242/256 for gen 6).
// 0 for an unknown generation.
double pcie_lane_gbs(int generation);
// The generation of a link running at `gts` GT/s (2.5 -> 1, ..., 64 -> 6); 0 when unknown.
int pcie_generation_of(double gts);
// "PCIe 5.0 x16" and its one-direction bandwidth; a link with an unknown generation or width
// keeps its name ("PCIe") and no bandwidth.
Link pcie_link(int generation, int width);

// The PCIe link of the PCI device `bus_id` ("0000:1b:00.0") as Linux reports it under
// `sysfs_root` ("/sys"): the slower of the device's maximum link and its upstream port's, since a
// GPU idles its link down and trains it back up under load (current_link_speed would read low at
// rest). Empty Link when the files are not there.
Link pcie_link_from_sysfs(const std::string& sysfs_root, const std::string& bus_id);
// "8.0 GT/s PCIe", "32.0 GT/s" -> 8, 32 (GT/s); 0 when unreadable.
double parse_link_speed_gts(const std::string& text);

// One NVLink's bandwidth in one direction on architecture `arch` ("sm_90"): 25 GB/s for NVLink 2
// to 4 (Volta, Ampere, Hopper), 50 GB/s for NVLink 5 (Blackwell); 0 when unknown.
double nvlink_gbs_per_link(const std::string& arch);
// The chip-to-chip link of a Grace Hopper superchip (NVLink-C2C: 450 GB/s each way).
Link c2c_link();

}  // namespace bwprof
