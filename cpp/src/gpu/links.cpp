#include "gpu/links.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "bwprof/arch.hpp"
#include "bwprof/environment.hpp"
#include "common/gpu_runtime.hpp"
#include "gpu/nvml.hpp"

namespace bwprof {

namespace {

std::string arch_of(int ordinal) {
  hipDeviceProp_t p{};
  if (hipGetDeviceProperties(&p, ordinal) != hipSuccess) {
    (void)hipGetLastError();
    return "";
  }
#ifdef BWPROF_HIP
  return p.gcnArchName;
#else
  return "sm_" + std::to_string(p.major) + std::to_string(p.minor);
#endif
}

// The slower of two links (a copy between two GPUs over PCIe runs at the slower slot's rate).
Link slower(const Link& a, const Link& b) {
  if (!a.known()) return a;  // an unknown end leaves the pair unknown
  if (!b.known()) return b;
  return a.gbs <= b.gbs ? a : b;
}

}  // namespace

std::string gpu_pci_bus_id(int ordinal) {
  char buf[64] = {0};
  if (hipDeviceGetPCIBusId(buf, sizeof buf, ordinal) != hipSuccess) {
    (void)hipGetLastError();
    return "";
  }
  std::string s = buf;
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

Link host_link_of(int ordinal, const std::string& bus_id, const std::string& arch) {
  if (bus_id.empty()) return Link{"pcie", "PCIe", 0};
#ifndef BWPROF_HIP
  const nvml::GpuLinks n = nvml::gpu_links(bus_id);
  if (n.c2c) return c2c_link();
  if (n.pcie_generation > 0 && n.pcie_width > 0) return pcie_link(n.pcie_generation, n.pcie_width);
#endif
  const char* root = env::sysfs_root();  // tests point it at a fake tree
  Link l = pcie_link_from_sysfs(root ? root : "/sys", bus_id);
  return l.kind.empty() ? Link{"pcie", "PCIe", 0} : l;
}

Link peer_link(int a, int b, bool* direct) {
  int can = 0;
  if (hipDeviceCanAccessPeer(&can, a, b) != hipSuccess) {
    (void)hipGetLastError();
    can = 0;
  }
  if (direct) *direct = can != 0;
  const std::string ba = gpu_pci_bus_id(a), bb = gpu_pci_bus_id(b);
  const Link pcie = slower(host_link_of(a, ba, arch_of(a)), host_link_of(b, bb, arch_of(b)));
  if (!can) {
    Link l = pcie;
    l.name = pcie.name + " through host memory";
    return l;
  }
#ifdef BWPROF_HIP
  std::uint32_t type = 0, hops = 0;
  if (hipExtGetLinkTypeAndHopCount(a, b, &type, &hops) == hipSuccess) {
    if (type == 4) return Link{"xgmi", hops > 1 ? "xGMI (" + std::to_string(hops) + " hops)" : "xGMI", 0};  // HSA_AMD_LINK_INFO_TYPE_XGMI
  } else {
    (void)hipGetLastError();
  }
  return pcie;
#else
  const nvml::GpuLinks n = nvml::gpu_links(ba);
  int links = 0;
  std::string via;
  if (n.nvlinks_to_switch > 0) {
    links = n.nvlinks_to_switch;
    via = " via NVSwitch";
  } else {
    for (auto& peer : n.nvlink_peers)
      if (nvml::same_pci_device(peer, bb)) ++links;
  }
  if (links > 0) {
    const double per = nvlink_gbs_per_link(arch_of(a));
    return Link{"nvlink", "NVLink x" + std::to_string(links) + via, per * links};
  }
  if (n.found) return pcie;  // NVML knows both ends and sees no NVLink between them
  return Link{"p2p", "peer access (link type unknown: no NVML)", 0};
#endif
}

}  // namespace bwprof
