// Memory and work limits (see limits.hpp): one check of each, before an instance is made.
#include "bwprof/limits.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>

#include "bwprof/error.hpp"
#include "bwprof/environment.hpp"

namespace bwprof {

namespace {

std::string gb(double bytes) {
  char buf[64];
  std::snprintf(buf, sizeof buf, bytes >= 1e9 ? "%.1f GB" : "%.3g GB", bytes / 1e9);
  return buf;
}

std::string what(const KernelFamily& k, const Problem& p) {
  return "kernel '" + k.name + "' " + to_string(p.dtype) + " " + p.shape();
}

}  // namespace

double available_host_bytes() {
  double avail = -1;
  // C stdio rather than iostreams: the numeric facets of a libstdc++ linked into a module next
  // to the CUDA runtime crashed on the GPU machine.
  if (std::FILE* f = std::fopen("/proc/meminfo", "r")) {
    char line[256];
    double kb = 0;
    while (std::fgets(line, sizeof line, f)) {
      if (std::sscanf(line, "MemAvailable: %lf kB", &kb) == 1) {
        avail = kb * 1024.0;
        break;
      }
    }
    std::fclose(f);
  }
  if (avail < 0) {
    const long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    avail = pages > 0 && page > 0 ? double(pages) * double(page) : 1e18;
  }
  return std::min(avail, env::memory_limit_bytes().value_or(1e300));
}

double available_device_bytes(Backend& backend) {
  const double free = backend.free_device_bytes();
  return free < 0 ? free : std::min(free, env::memory_limit_bytes().value_or(1e300));
}

Footprint footprint_of(const KernelFamily& k, const Problem& p, const std::string& backend_kind) {
  if (k.footprint) return k.footprint(p, backend_kind);
  const Traffic t = k.traffic(p);
  const double bytes = t.bytes_read + t.bytes_written;
  return Footprint{bytes, backend_kind == "cpu" ? 0.0 : bytes};
}

void check_memory(const KernelFamily& k, const Problem& p, Backend& backend) {
  const std::string kind = backend.info().kind == "cpu" ? "cpu" : "gpu";
  const Footprint f = footprint_of(k, p, kind);
  // Margins: the process itself and the page cache must survive on the host; the GPU runtime
  // rounds every allocation up to its granularity.
  const double host = available_host_bytes();
  if (f.host_bytes > 0.9 * host)
    throw OutOfMemory("out of host memory: " + what(k, p) + " needs " + gb(f.host_bytes) + " of host memory, " +
                      gb(host) + " available");
  if (kind == "cpu" || f.device_bytes <= 0) return;
  const double device = available_device_bytes(backend);
  if (device >= 0 && f.device_bytes > 0.95 * device)
    throw OutOfMemory("out of device memory: " + what(k, p) + " needs " + gb(f.device_bytes) + " on " +
                      backend.info().id + ", " + gb(device) + " free");
}

double min_launch_seconds(const KernelFamily& k, const Variant& v, const Problem& p, const DeviceInfo& info) {
  const Traffic t = k.traffic(p);
  double gbs = 0, gflops = 0;
  if (info.kind == "cpu") {
    const double threads = std::max(1, info.compute_units);
    gbs = kCpuGbsPerThread * threads;
    gflops = kCpuGflopsPerThread * threads;
  } else {
    // Unknown figures: above any GPU's (8 TB/s, 2.5 PFLOP/s), so only a sure overrun is refused.
    gbs = info.bandwidth_theoretical_gbs > 0 ? info.bandwidth_theoretical_gbs : 8000;
    // The faster rate of a 16-bit type (packed FP16 or BF16 chains), so the bound stays a lower one.
    const bool matrix = v.matrix_units && p.dtype == DType::kF16;
    gflops = matrix ? info.fp16_matrix_gflops_theoretical
             : p.dtype != DType::kF32 ? std::max(info.fp16_gflops_theoretical, info.fp32_gflops_theoretical)
                                      : info.fp32_gflops_theoretical;
    if (!(gflops > 0)) gflops = 2.5e6;
  }
  return std::max((t.bytes_read + t.bytes_written) / (gbs * 1e9), t.flops / (gflops * 1e9));
}

double max_launch_seconds(const DeviceInfo& info) {
  return env::max_launch_seconds().value_or(info.kind == "cpu" ? 60.0 : 10.0);
}

void check_work(const KernelFamily& k, const Variant& v, const Problem& p, const DeviceInfo& info) {
  const double need = min_launch_seconds(k, v, p, info), bound = max_launch_seconds(info);
  if (need <= bound) return;
  char buf[160];
  std::snprintf(buf, sizeof buf, " would take at least %.3g s per launch on %s, more than the bound of %g s",
                need, info.id.c_str(), bound);
  BWPROF_INVALID("shape: " + what(k, p) + buf + " (BWPROF_MAX_LAUNCH_S raises it)");
}

void check_total_time(double elapsed_s, double first_s, int launches_left, double bound_s) {
  const double estimate = elapsed_s + first_s * std::max(0, launches_left);
  if (!(estimate > bound_s)) return;
  char buf[400];
  std::snprintf(buf, sizeof buf,
                "max_total_s: this call would take about %.3g s (a launch took %.3g s and %d more are to come: "
                "the warm-up and the repeats), more than max_total_s=%g s; pass a larger max_total_s= "
                "(math.inf lifts the bound) or fewer warmup=/repeats=",
                estimate, first_s, launches_left, bound_s);
  BWPROF_INVALID(buf);
}

void MemoryCounter::add(std::size_t bytes) {
  const std::size_t now = in_use_ += bytes;
  std::size_t peak = peak_.load();
  while (now > peak && !peak_.compare_exchange_weak(peak, now)) {
  }
}

MemoryCounter& host_memory_counter() {
  static auto* c = new MemoryCounter();  // never destroyed: buffers may be freed during exit
  return *c;
}

MemoryCounter& device_memory_counter() {
  static auto* c = new MemoryCounter();
  return *c;
}

void admit(Backend& backend, const KernelFamily& k, const Variant& v, const Problem& p) {
  check_memory(k, p, backend);  // first: a shape that cannot be held is told so, whatever its time
  check_work(k, v, p, backend.info());
}

}  // namespace bwprof
