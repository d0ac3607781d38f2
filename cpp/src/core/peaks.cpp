// The peaks policy (see peaks.hpp). The run options are those each backend kind used when it
// measured its own peaks: the GPU's stream kernels over 1 GiB arrays flushed before each run and
// its FMA chains hot with the upper median of their runs; the CPU's stream kernels over 32 MB
// arrays evicted every run and its FMA chains timed once by the steady clock, grown until one run
// takes 50 ms.
#include "bwprof/peaks.hpp"

#include <algorithm>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "bwprof/error.hpp"
#include "bwprof/registry.hpp"
#include "bwprof/runner.hpp"

namespace bwprof {

namespace {

struct DevicePeaks {
  Peaks memory;                      // bandwidth figures, no compute
  std::map<DType, double> gflops;    // per dtype
  std::map<DType, std::string> source;
};

std::mutex g_mutex;
std::map<std::string, DevicePeaks>* g_cache = new std::map<std::string, DevicePeaks>();  // lives to exit

std::string kind_of(const DeviceInfo& info) { return info.kind == "cpu" ? "cpu" : "gpu"; }

RunOptions memory_options(const std::string& kind) {
  RunOptions opt;
  opt.cold = true;
  opt.verify = false;
  if (kind == "cpu") {
    opt.warmup = 1;
    opt.min_repeats = 5;
    opt.min_time_s = 0.02;
    opt.max_time_s = 1.0;
  } else {
    opt.warmup = 2;
    opt.min_repeats = 10;
    opt.min_time_s = 0.02;
    opt.max_time_s = 2.0;
  }
  return opt;
}

bool takes(const KernelFamily& k, const Variant& v, DType t) {
  const auto& d = v.dtypes.empty() ? k.dtypes : v.dtypes;
  return std::find(d.begin(), d.end(), t) != d.end();
}

std::map<std::string, std::string> ceiling_params(const KernelFamily& k, const DeviceInfo& info) {
  if (!k.ceiling_params) throw Error("internal: ceiling kernel '" + k.name + "' declares no ceiling parameters");
  return k.ceiling_params(info);
}

// The best GB/s of the memory ceilings, FP32, and each one's figure.
Peaks measure_memory(Backend& backend) {
  const DeviceInfo& info = backend.info();
  const std::string kind = kind_of(info);
  const RunOptions opt = memory_options(kind);
  Peaks out;
  double best = 0;
  std::string best_name;
  for (const KernelFamily& k : registry().families()) {
    for (const Variant& v : k.variants) {
      if (v.ceiling != Ceiling::kMemory || v.backend != kind) continue;
      Problem p = make_problem(k, kind, v.name, "fp32", ceiling_params(k, info));
      auto inst = v.make(backend, p);
      const TimingStats s = summarize(run_repeats(backend, *inst, opt));
      const Traffic t = k.traffic(p);
      const double gbs = (t.bytes_read + t.bytes_written) / (s.median * 1e-6) / 1e9;
      out.bandwidth_by_kernel[k.name] = gbs;
      if (gbs > best) best = gbs, best_name = k.name;
    }
  }
  out.bandwidth_gbs = best;
  if (!best_name.empty()) out.bandwidth_source = "measured:" + best_name;
  out.bandwidth_theoretical_gbs = info.bandwidth_theoretical_gbs;
  return out;
}

// GFLOP/s of one vector ceiling in `dtype`.
double measure_vector(Backend& backend, const KernelFamily& k, const Variant& v, DType dtype) {
  const DeviceInfo& info = backend.info();
  const std::string kind = kind_of(info);
  auto params = ceiling_params(k, info);
  if (kind == "cpu") {
    // A host clock times one launch: grow the work until that launch takes 50 ms.
    for (;;) {
      Problem p = make_problem(k, kind, v.name, to_string(dtype), params);
      auto inst = v.make(backend, p);
      const double seconds = backend.time_launch_us(*inst, 1) * 1e-6;
      const long long grow = k.ceiling_grow.empty() ? 0 : p.i(k.ceiling_grow);
      if (seconds > 0.05 || k.ceiling_grow.empty() || grow > (1LL << 30)) return k.traffic(p).flops / seconds / 1e9;
      params[k.ceiling_grow] = std::to_string(grow * 4);
    }
  }
  RunOptions opt;
  opt.cold = false;
  opt.warmup = 3;
  opt.min_repeats = 10;
  opt.min_time_s = 0.01;
  opt.verify = false;
  Problem p = make_problem(k, kind, v.name, to_string(dtype), params);
  auto inst = v.make(backend, p);
  std::vector<double> t = run_repeats(backend, *inst, opt);
  std::sort(t.begin(), t.end());
  return k.traffic(p).flops / (t[t.size() / 2] * 1e-6) / 1e9;
}

DevicePeaks measure_all(Backend& backend) {
  DevicePeaks d;
  d.memory = measure_memory(backend);
  const std::string kind = kind_of(backend.info());
  for (DType t : {DType::kF32, DType::kF16}) {
    for (const KernelFamily& k : registry().families()) {
      for (const Variant& v : k.variants) {
        if (v.ceiling != Ceiling::kVector || v.backend != kind || !takes(k, v, t) || d.gflops.count(t)) continue;
        d.gflops[t] = measure_vector(backend, k, v, t);
        d.source[t] = "measured:" + k.name + "_" + to_string(t);
      }
    }
  }
  // A dtype without a vector ceiling of its own on this backend computes in FP32 (FP16 storage
  // on the CPU; BF16 everywhere, its kernels converting to FP32): FP32's roof is its roof.
  for (DType t : {DType::kF16, DType::kBF16}) {
    if (!d.gflops.count(t) && d.gflops.count(DType::kF32)) {
      d.gflops[t] = d.gflops[DType::kF32];
      d.source[t] = d.source[DType::kF32];
    }
  }
  return d;
}

}  // namespace

Peaks device_peaks(Backend& backend, DType dtype, bool refresh) {
  const DeviceInfo& info = backend.info();
  std::lock_guard<std::mutex> g(g_mutex);
  if (refresh) g_cache->erase(info.id);
  auto it = g_cache->find(info.id);
  if (it == g_cache->end()) it = g_cache->emplace(info.id, measure_all(backend)).first;
  Peaks p = it->second.memory;
  auto gf = it->second.gflops.find(dtype);
  if (gf != it->second.gflops.end()) {
    p.gflops = gf->second;
    p.compute_source = it->second.source.at(dtype);
  }
  p.gflops_theoretical = dtype == DType::kF32 ? info.fp32_gflops_theoretical : info.fp16_gflops_theoretical;
  return p;
}

}  // namespace bwprof
