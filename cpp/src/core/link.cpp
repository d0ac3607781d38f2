#include "bwprof/link.hpp"

#include <cstdio>
#include <cstdlib>
#include <unistd.h>

#include <climits>

#include "bwprof/arch.hpp"

namespace bwprof {

double pcie_lane_gbs(int generation) {
  switch (generation) {
    case 1: return 2.5 * 8 / 10 / 8;
    case 2: return 5.0 * 8 / 10 / 8;
    case 3: return 8.0 * 128 / 130 / 8;
    case 4: return 16.0 * 128 / 130 / 8;
    case 5: return 32.0 * 128 / 130 / 8;
    case 6: return 64.0 * 242 / 256 / 8;
    default: return 0;
  }
}

int pcie_generation_of(double gts) {
  const double rates[] = {2.5, 5, 8, 16, 32, 64};
  for (int g = 0; g < 6; ++g)
    if (gts > 0.9 * rates[g] && gts < 1.1 * rates[g]) return g + 1;
  return 0;
}

Link pcie_link(int generation, int width) {
  Link l;
  l.kind = "pcie";
  l.name = "PCIe";
  if (generation < 1 || generation > 6 || width < 1) return l;
  char buf[32];
  std::snprintf(buf, sizeof buf, "PCIe %d.0 x%d", generation, width);
  l.name = buf;
  l.gbs = pcie_lane_gbs(generation) * width;
  return l;
}

double parse_link_speed_gts(const std::string& text) {
  const char* s = text.c_str();
  char* end = nullptr;
  const double v = std::strtod(s, &end);
  if (end == s || !(v > 0)) return 0;
  return v;
}

namespace {

// C stdio, not iostreams (see host_tensor.cpp: iostreams' numeric facets crashed next to the CUDA
// runtime on the GPU machine).
std::string read_line(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "r");
  if (!f) return "";
  char buf[128] = {0};
  const bool ok = std::fgets(buf, sizeof buf, f) != nullptr;
  std::fclose(f);
  return ok ? std::string(buf) : std::string();
}

// The device's own maximum link (speed in GT/s, width in lanes), from one sysfs folder.
bool max_link(const std::string& dir, double& gts, int& width) {
  gts = parse_link_speed_gts(read_line(dir + "/max_link_speed"));
  width = std::atoi(read_line(dir + "/max_link_width").c_str());
  return gts > 0 && width > 0;
}

}  // namespace

Link pcie_link_from_sysfs(const std::string& sysfs_root, const std::string& bus_id) {
  const std::string dev = sysfs_root + "/bus/pci/devices/" + bus_id;
  double gts = 0;
  int width = 0;
  if (!max_link(dev, gts, width)) return {};
  // The upstream port: the folder above the device's real path (/sys/devices/pci0000:00/0000:00:01.0/
  // 0000:01:00.0 -> 0000:00:01.0). A root complex folder (pci0000:00) has no link files.
  char real[PATH_MAX];
  if (::realpath(dev.c_str(), real)) {
    std::string up = real;
    up = up.substr(0, up.find_last_of('/'));
    double ugts = 0;
    int uwidth = 0;
    if (max_link(up, ugts, uwidth)) {
      if (ugts < gts) gts = ugts;
      if (uwidth < width) width = uwidth;
    }
  }
  return pcie_link(pcie_generation_of(gts), width);
}

double nvlink_gbs_per_link(const std::string& arch) {
  const int cc = sm_version(arch);
  if (cc >= 70 && cc < 100) return 25.0;  // NVLink 2 (V100), 3 (A100), 4 (H100/H200): 25 GB/s each way
  if (cc >= 100 && cc < 110) return 50.0;  // NVLink 5 (B200): 50 GB/s each way
  return 0;
}

Link c2c_link() { return Link{"c2c", "NVLink-C2C", 450.0}; }

}  // namespace bwprof
