// The CPU backend: the steady clock, cache eviction with clflush, peaks measured by bwprof's own
// stream and FMA-chain kernels.
#include "cpu_backend.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <mutex>
#include <thread>

#if defined(__x86_64__) || defined(__i386__)
#include <emmintrin.h>
#define BWPROF_HAVE_CLFLUSH 1
#endif

#include "bwprof/error.hpp"
#include "bwprof/parallel.hpp"
#include "bwprof/runner.hpp"

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

// Independent FMA chains, enough of them to cover the FMA latency on every vector port.
constexpr int kChains = 128;
__attribute__((noinline)) float fma_chain(long iters, float a, float b) {
  float acc[kChains];
  for (int k = 0; k < kChains; ++k) acc[k] = static_cast<float>(k) * 1e-3f;
  for (long it = 0; it < iters; ++it)
    for (int k = 0; k < kChains; ++k) acc[k] = acc[k] * a + b;
  float s = 0;
  for (int k = 0; k < kChains; ++k) s += acc[k];
  return s;
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

  void flush_cache(KernelInstance& k) override {
#ifdef BWPROF_HAVE_CLFLUSH
    // Evict exactly the kernel's own data from every cache level: cheaper and more certain than
    // streaming a buffer through a last-level cache that may be hundreds of MB.
    for (auto& buf : k.host_buffers()) {
      const char* p = static_cast<const char*>(buf.first);
      const std::size_t n = buf.second;
      parallel_for(n / 64 + 1, 1 << 14, [&](std::size_t lo, std::size_t hi) {
        for (std::size_t line = lo; line < hi; ++line) _mm_clflush(p + std::min(line * 64, n - 1));
      });
    }
    _mm_mfence();
#else
    (void)k;
    const std::size_t n = static_cast<std::size_t>(std::max(2.0 * info_.cache_bytes, 64e6));
    if (scrub_.size() < n) scrub_.assign(n, 0);
    for (std::size_t i = 0; i < n; i += 64) scrub_[i]++;
#endif
  }

  void synchronize() override {}

  void forget_peaks() override {
    std::lock_guard<std::mutex> g(m_);
    measured_ = false;
    peaks_ = Peaks();
  }

  Peaks peaks(DType dtype) override {
    std::lock_guard<std::mutex> g(m_);
    if (!measured_) measure_peaks();
    Peaks p = peaks_;
    (void)dtype;  // FP16 is stored as half but computed in FP32 on the CPU: one compute roof
    return p;
  }

 private:
  void measure_peaks() {
    RunOptions opt;
    opt.cold = true;
    opt.warmup = 1;
    opt.min_repeats = 5;
    opt.min_time_s = 0.02;
    opt.max_time_s = 1.0;
    opt.verify = false;
    measure_stream_peaks(*this, "cpu", 8 << 20, opt, peaks_);  // 32 MB per array, evicted every run

    // FMA chains on every thread.
    const int threads = cpu_threads();
    long iters = 1 << 14;
    double seconds = 0;
    for (;;) {
      auto t0 = std::chrono::steady_clock::now();
      std::vector<float> sink(threads);
      parallel_for(threads, 1, [&](std::size_t lo, std::size_t hi) {
        for (std::size_t t = lo; t < hi; ++t) sink[t] = fma_chain(iters, 0.999999f, 1e-7f);
      });
      seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (seconds > 0.05 || iters > (1L << 30)) break;
      iters *= 4;
    }
    peaks_.gflops = 2.0 * kChains * double(iters) * threads / seconds / 1e9;
    peaks_.compute_source = "measured:fma_chain_fp32";
    measured_ = true;
  }

  DeviceInfo info_;
  std::mutex m_;
  bool measured_ = false;
  Peaks peaks_;
  std::vector<char> scrub_;
};

}  // namespace

std::unique_ptr<Backend> make_cpu_backend() { return std::make_unique<CpuBackend>(); }

}  // namespace bwprof
