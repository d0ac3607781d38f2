#include "gpu/clocks.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <memory>
#include <sstream>
#include <string>
#include <utility>

#include "bwprof/environment.hpp"

namespace bwprof {

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
}

// The few NVML entry points used, by their C signatures (nvml.h is not needed to build).
struct ClockReader::Nvml {
  using Device = void*;
  void* lib = nullptr;
  Device dev = nullptr;
  int (*clock_info)(Device, int, unsigned*) = nullptr;
  int (*reasons)(Device, unsigned long long*) = nullptr;
  int (*shutdown)() = nullptr;
  ~Nvml() {
    if (shutdown) shutdown();
    if (lib) dlclose(lib);
  }
};

ClockReader::ClockReader(std::string pci_bus_id, std::string vendor) : bus_(std::move(pci_bus_id)), vendor_(std::move(vendor)) {}
ClockReader::~ClockReader() = default;

const std::string& ClockReader::source() {
  if (!opened_) open();
  return source_;
}

void ClockReader::open() {
  opened_ = true;
  if (env::no_clocks()) return;  // for comparing runs with and without the sampling
  if (vendor_ == "nvidia") {
    auto n = std::make_unique<Nvml>();
    n->lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!n->lib) return;
    auto sym = [&](const char* name) { return dlsym(n->lib, name); };
    auto init = reinterpret_cast<int (*)()>(sym("nvmlInit_v2"));
    auto by_bus = reinterpret_cast<int (*)(const char*, Nvml::Device*)>(sym("nvmlDeviceGetHandleByPciBusId_v2"));
    n->clock_info = reinterpret_cast<int (*)(Nvml::Device, int, unsigned*)>(sym("nvmlDeviceGetClockInfo"));
    // The newer name first (NVML 12.2 renamed throttle reasons "clocks event reasons").
    void* r = sym("nvmlDeviceGetCurrentClocksEventReasons");
    if (!r) r = sym("nvmlDeviceGetCurrentClocksThrottleReasons");
    n->reasons = reinterpret_cast<int (*)(Nvml::Device, unsigned long long*)>(r);
    if (!init || !by_bus || !n->clock_info || init() != 0) return;
    n->shutdown = reinterpret_cast<int (*)()>(sym("nvmlShutdown"));
    if (by_bus(bus_.c_str(), &n->dev) != 0) return;
    nvml_ = std::move(n);
    source_ = "nvml";
  } else if (vendor_ == "amd") {
    std::string bus = bus_;
    std::transform(bus.begin(), bus.end(), bus.begin(), [](unsigned char c) { return std::tolower(c); });
    const std::string path = "/sys/bus/pci/devices/" + bus + "/pp_dpm_sclk";
    std::ifstream f(path);
    if (!f) return;
    sysfs_ = path;
    source_ = "sysfs";
  }
}

ClockSample ClockReader::sample() {
  if (!opened_) open();
  ClockSample s;
  if (nvml_) {
    unsigned mhz = 0;
    if (nvml_->clock_info(nvml_->dev, 1 /* NVML_CLOCK_SM */, &mhz) == 0) s.sm_mhz = mhz;
    unsigned long long reasons = 0;
    if (nvml_->reasons && nvml_->reasons(nvml_->dev, &reasons) == 0) s.throttled = (reasons & kNvmlThrottleMask) != 0;
  } else if (!sysfs_.empty()) {
    std::ifstream f(sysfs_);
    std::stringstream text;
    text << f.rdbuf();
    s.sm_mhz = parse_pp_dpm_sclk(text.str());
  }
  return s;
}

double parse_pp_dpm_sclk(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.find('*') == std::string::npos) continue;
    const std::size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    char* end = nullptr;
    const double mhz = std::strtod(line.c_str() + colon + 1, &end);
    if (end != line.c_str() + colon + 1 && mhz > 0) return mhz;
  }
  return kNaN;
}

}  // namespace bwprof
