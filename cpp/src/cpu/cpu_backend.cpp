// The CPU backend: the steady clock, and cache eviction with clflush.
#include "cpu_backend.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <emmintrin.h>
#define BWPROF_HAVE_CLFLUSH 1
#endif

#include "bwprof/error.hpp"
#include "bwprof/parallel.hpp"

namespace bwprof {

namespace {

std::string cpu_model_name() {
  std::string name = "CPU";
  if (std::FILE* f = std::fopen("/proc/cpuinfo", "r")) {
    char line[512];
    while (std::fgets(line, sizeof line, f)) {
      std::string l = line;
      if (l.rfind("model name", 0) == 0 || l.rfind("Model", 0) == 0) {
        auto colon = l.find(':');
        if (colon == std::string::npos) continue;
        std::string v = l.substr(colon + 1);
        v.erase(0, v.find_first_not_of(" \t"));
        v.erase(v.find_last_not_of(" \t\n") + 1);
        if (!v.empty()) {
          name = v;
          break;
        }
      }
    }
    std::fclose(f);
  }
  return name;
}

std::string cpu_vendor(const std::string& name) {
  std::string n = name;
  std::transform(n.begin(), n.end(), n.begin(), ::tolower);
  if (n.find("amd") != std::string::npos) return "amd";
  if (n.find("intel") != std::string::npos) return "intel";
  return "unknown";
}

class Sequence final : public KernelInstance {
 public:
  explicit Sequence(std::function<void()> body) : body_(std::move(body)) {}
  void launch() override { body_(); }
  Check check() override { return {}; }

 private:
  std::function<void()> body_;
};
// The size of cpu0's data or unified cache of `level` (1 or 2) in bytes: sysconf where glibc
// knows it, else /sys/devices/system/cpu/cpu0/cache/index*/ ("48K"); 0 when neither says.
double cpu_cache_bytes(int level) {
  long v = sysconf(level == 1 ? _SC_LEVEL1_DCACHE_SIZE : _SC_LEVEL2_CACHE_SIZE);
  if (v > 0) return double(v);
  for (int i = 0; i < 8; ++i) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/";
    auto read = [&](const char* name) {
      std::string out;
      if (std::FILE* f = std::fopen((dir + name).c_str(), "r")) {
        char buf[64] = {0};
        if (std::fgets(buf, sizeof buf, f)) out = buf;
        std::fclose(f);
      }
      while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
      return out;
    };
    const std::string lvl = read("level"), type = read("type"), size = read("size");
    if (lvl.empty()) break;
    if (std::atoi(lvl.c_str()) != level || type == "Instruction" || size.empty()) continue;
    double bytes = std::atof(size.c_str());
    if (size.back() == 'K') bytes *= 1024;
    if (size.back() == 'M') bytes *= 1024 * 1024;
    return bytes;
  }
  return 0;
}

class CpuBackend final : public Backend {
 public:
  CpuBackend() {
    info_.id = "cpu";
    info_.kind = "cpu";
    info_.backend = "cpu";
    info_.name = cpu_model_name();
    info_.vendor = cpu_vendor(info_.name);
#if defined(__x86_64__)
    info_.arch = "x86_64";
#elif defined(__aarch64__)
    info_.arch = "aarch64";
#else
    info_.arch = "unknown";
#endif
    info_.compute_units = cpu_threads();
    long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE), l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    info_.cache_bytes = l3 > 0 ? double(l3) : (l2 > 0 ? double(l2) : 0);
    info_.l1_cache_bytes = cpu_cache_bytes(1);
    info_.l2_cache_bytes = cpu_cache_bytes(2);
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    info_.memory_bytes = pages > 0 && page > 0 ? double(pages) * page : 0;
  }

  const DeviceInfo& info() const override { return info_; }

  double time_launch_us(KernelInstance& k, int launches) override {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < launches; ++i) k.launch();
    auto t1 = std::chrono::steady_clock::now();
    return std::chrono::duration<double, std::micro>(t1 - t0).count();
  }

  void begin_region() override { region_start_ = std::chrono::steady_clock::now(); }
  double end_region_us() override {
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - region_start_).count();
  }

  void flush_cache(KernelInstance& k) override {
    if (!k.names_its_buffers()) {
      // Work that cannot name its buffers (user code that declared none): stream a buffer twice
      // the last-level cache through every level instead.
      scrub();
      return;
    }
    const auto buffers = k.host_buffers();
#ifdef BWPROF_HAVE_CLFLUSH
    // Evict exactly the kernel's own data from every cache level: cheaper and more certain than
    // streaming a buffer through a last-level cache that may be hundreds of MB.
    for (auto& buf : buffers) {
      const char* p = static_cast<const char*>(buf.first);
      const std::size_t n = buf.second;
      parallel_for(n / 64 + 1, 1 << 14, [&](std::size_t lo, std::size_t hi) {
        for (std::size_t line = lo; line < hi; ++line) _mm_clflush(p + std::min(line * 64, n - 1));
      });
    }
    _mm_mfence();
#else
    scrub();
#endif
  }

  void synchronize() override {}

  // Nothing to capture on the CPU: the sequence is the calls themselves, back to back.
  std::unique_ptr<KernelInstance> capture(std::function<void()> body) override {
    return std::make_unique<Sequence>(std::move(body));
  }

 private:
  void scrub() {
    const std::size_t n = static_cast<std::size_t>(std::max(2.0 * info_.cache_bytes, 64e6));
    if (scrub_.size() < n) scrub_.assign(n, 0);
    for (std::size_t i = 0; i < n; i += 64) scrub_[i]++;
  }

  DeviceInfo info_;
  std::vector<char> scrub_;
  std::chrono::steady_clock::time_point region_start_;
};

}  // namespace

std::unique_ptr<Backend> make_cpu_backend() { return std::make_unique<CpuBackend>(); }

}  // namespace bwprof
