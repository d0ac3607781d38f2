// NVML through dlopen: declarations of the calls used, copied in shape from NVML's public API.
#include "gpu/nvml.hpp"

#include <dlfcn.h>

#include <cstdio>
#include <mutex>

namespace bwprof {
namespace nvml {

namespace {

using Return = int;  // nvmlReturn_t: NVML_SUCCESS = 0
struct DeviceSt;
using Device = DeviceSt*;  // nvmlDevice_t

// nvmlPciInfo_t (NVML 11+): the bus id as text, then its numbers.
struct PciInfo {
  char bus_id_legacy[16];
  unsigned int domain, bus, device, pci_device_id, pci_subsystem_id;
  char bus_id[32];
  char room[256];  // should a later NVML write a longer struct, it lands here, not on the stack
};
struct C2cModeInfo {  // nvmlC2cModeInfo_v1_t
  unsigned int is_c2c_enabled;
};
constexpr int kNvlinkMaxLinks = 18;     // NVML_NVLINK_MAX_LINKS
constexpr unsigned kEnabled = 1;        // NVML_FEATURE_ENABLED
constexpr unsigned kRemoteSwitch = 2;   // NVML_NVLINK_DEVICE_TYPE_SWITCH

struct Api {
  bool ok = false;
  Return (*init)() = nullptr;
  Return (*by_bus_id)(const char*, Device*) = nullptr;
  Return (*max_gen)(Device, unsigned*) = nullptr;
  Return (*max_width)(Device, unsigned*) = nullptr;
  Return (*nvlink_state)(Device, unsigned, unsigned*) = nullptr;
  Return (*nvlink_remote_pci)(Device, unsigned, PciInfo*) = nullptr;
  Return (*nvlink_remote_type)(Device, unsigned, unsigned*) = nullptr;
  Return (*c2c_mode)(Device, C2cModeInfo*) = nullptr;
};

template <class F>
void bind(void* lib, F& f, const char* name) {
  f = reinterpret_cast<F>(dlsym(lib, name));
}

// Opened once and kept for the process (NVML is never shut down: other libraries in the process,
// PyTorch's among them, may hold it too).
const Api& api() {
  static Api a;
  static std::once_flag once;
  std::call_once(once, [] {
    void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return;
    bind(lib, a.init, "nvmlInit_v2");
    bind(lib, a.by_bus_id, "nvmlDeviceGetHandleByPciBusId_v2");
    bind(lib, a.max_gen, "nvmlDeviceGetMaxPcieLinkGeneration");
    bind(lib, a.max_width, "nvmlDeviceGetMaxPcieLinkWidth");
    bind(lib, a.nvlink_state, "nvmlDeviceGetNvLinkState");
    bind(lib, a.nvlink_remote_pci, "nvmlDeviceGetNvLinkRemotePciInfo_v2");
    bind(lib, a.nvlink_remote_type, "nvmlDeviceGetNvLinkRemoteDeviceType");
    bind(lib, a.c2c_mode, "nvmlDeviceGetC2cModeInfoV");
    a.ok = a.init && a.by_bus_id && a.init() == 0;
  });
  return a;
}

bool parse_bus_id(const std::string& s, unsigned v[4]) {
  return std::sscanf(s.c_str(), "%x:%x:%x.%x", &v[0], &v[1], &v[2], &v[3]) == 4;
}

}  // namespace

bool same_pci_device(const std::string& a, const std::string& b) {
  unsigned x[4], y[4];
  if (!parse_bus_id(a, x) || !parse_bus_id(b, y)) return false;
  return x[0] == y[0] && x[1] == y[1] && x[2] == y[2] && x[3] == y[3];
}

GpuLinks gpu_links(const std::string& pci_bus_id) {
  GpuLinks out;
  const Api& a = api();
  Device dev = nullptr;
  if (!a.ok || a.by_bus_id(pci_bus_id.c_str(), &dev) != 0) return out;
  out.found = true;
  unsigned gen = 0, width = 0;
  if (a.max_gen && a.max_gen(dev, &gen) == 0) out.pcie_generation = static_cast<int>(gen);
  if (a.max_width && a.max_width(dev, &width) == 0) out.pcie_width = static_cast<int>(width);
  C2cModeInfo c2c{0};
  if (a.c2c_mode && a.c2c_mode(dev, &c2c) == 0) out.c2c = c2c.is_c2c_enabled != 0;
  if (!a.nvlink_state) return out;
  for (unsigned link = 0; link < static_cast<unsigned>(kNvlinkMaxLinks); ++link) {
    unsigned state = 0;
    if (a.nvlink_state(dev, link, &state) != 0 || state != kEnabled) continue;
    ++out.nvlinks_active;
    unsigned type = 0;
    if (a.nvlink_remote_type && a.nvlink_remote_type(dev, link, &type) == 0 && type == kRemoteSwitch) {
      ++out.nvlinks_to_switch;
      continue;
    }
    PciInfo pci{};
    if (a.nvlink_remote_pci && a.nvlink_remote_pci(dev, link, &pci) == 0) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%04x:%02x:%02x.0", pci.domain, pci.bus, pci.device);
      out.nvlink_peers.push_back(buf);
    }
  }
  return out;
}

}  // namespace nvml
}  // namespace bwprof
