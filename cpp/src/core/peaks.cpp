// The peaks policy (see peaks.hpp), and the size-aware memory ceiling measured with them. The run options are those each backend kind used when it
// measured its own peaks: the GPU's stream kernels over 1 GiB arrays flushed before each run and
// its FMA chains hot with the upper median of their runs; the CPU's stream kernels over 32 MB
// arrays evicted every run and its FMA chains timed once by the steady clock, grown until one run
// takes 50 ms.
#include "bwprof/peaks.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "bwprof/error.hpp"
#include "bwprof/interrupt.hpp"
#include "bwprof/limits.hpp"
#include "bwprof/registry.hpp"
#include "bwprof/roofline.hpp"
#include "bwprof/runner.hpp"

namespace bwprof {

namespace {

// Every figure of a device, whatever the dtype: bandwidth, the size curve, the per-type compute
// roofs (Peaks::vector, matrix), the cache levels and the hierarchy's findings.
using DevicePeaks = Peaks;

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

// A point of the size curve: the bytes a ceiling kernel moved, its time, its share of writes.
SizePoint size_point(const std::string& kernel, const Traffic& t, double time_us) {
  const double bytes = t.bytes_read + t.bytes_written;
  return {kernel, bytes, time_us, bytes > 0 ? t.bytes_written / bytes : 0.0};
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
      check_memory(k, p, backend);  // its own shapes, sized to be quick: only the memory can fail
      auto inst = v.make(backend, p);
      const TimingStats s = summarize(run_repeats(backend, *inst, opt));
      const Traffic t = k.traffic(p);
      const double gbs = (t.bytes_read + t.bytes_written) / (s.median * 1e-6) / 1e9;
      out.bandwidth_by_kernel[k.name] = gbs;
      if (gbs > best) best = gbs, best_name = k.name;
      // The size curve's top point (measure_size_curve adds the smaller sizes).
      if (!k.ceiling_size.empty()) out.size_curve.points.push_back(size_point(k.name, t, s.median));
    }
  }
  out.bandwidth_gbs = best;
  if (!best_name.empty()) out.bandwidth_source = "measured:" + best_name;
  out.bandwidth_theoretical_gbs = info.bandwidth_theoretical_gbs;
  return out;
}

// The size-aware ceiling (bwprof/size_curve.hpp): each memory ceiling with a size parameter (one
// per access pattern: the clean read, the copy), cold,
// from 4 KB (doubling on a GPU, x4 on the CPU) up to the peak run's size (whose points `top` holds),
// on the CPU on to 256 MB. Few repeats and little time per size: a 4 KB kernel must not spend the
// peak run's 20 ms of kernel time in microsecond steps.
constexpr double kCurveFromBytes = 4096;
constexpr double kCpuCurveToBytes = 268435456;  // 256 MiB

SizeCurve measure_size_curve(Backend& backend, std::vector<SizePoint> points) {
  const DeviceInfo& info = backend.info();
  const std::string kind = kind_of(info);
  RunOptions opt = memory_options(kind);
  opt.min_time_s = 0.002;
  opt.max_time_s = kind == "cpu" ? 0.1 : 0.25;
  if (kind == "cpu") opt.min_repeats = 3;  // each run evicts its arrays line by line: 256 MB is slow to flush
  const double step = kind == "cpu" ? 4.0 : 2.0;
  for (const KernelFamily& k : registry().families()) {
    if (k.ceiling_size.empty()) continue;
    for (const Variant& v : k.variants) {
      if (v.ceiling != Ceiling::kMemory || v.backend != kind) continue;
      const Problem top = make_problem(k, kind, v.name, "fp32", ceiling_params(k, info));
      const Traffic tt = k.traffic(top);
      const double top_bytes = tt.bytes_read + tt.bytes_written;
      const double per_unit = top_bytes / static_cast<double>(top.i(k.ceiling_size));
      const double to = kind == "cpu" ? std::max(top_bytes, kCpuCurveToBytes) : top_bytes;
      for (double target = kCurveFromBytes; target <= to * 1.01; target *= step) {
        if (std::fabs(target - top_bytes) < 0.25 * top_bytes) continue;  // the peak run measured it
        const long long n = std::max(16LL, std::llround(target / per_unit / 16) * 16);
        auto params = ceiling_params(k, info);
        params[k.ceiling_size] = std::to_string(n);
        Problem p = make_problem(k, kind, v.name, "fp32", params);
        auto inst = v.make(backend, p);
        const TimingStats st = summarize(run_repeats(backend, *inst, opt));
        points.push_back(size_point(k.name, k.traffic(p), st.median));
      }
    }
  }
  return fit_size_curve(std::move(points));
}

// GFLOP/s of one vector ceiling in `dtype`.
double measure_vector(Backend& backend, const KernelFamily& k, const Variant& v, DType dtype) {
  const DeviceInfo& info = backend.info();
  const std::string kind = kind_of(info);
  auto params = ceiling_params(k, info);
  if (kind == "cpu") {
    // A host clock times one launch: grow the work until that launch takes 50 ms.
    for (;;) {
      check_interrupt();
      Problem p = make_problem(k, kind, v.name, to_string(dtype), params);
      check_memory(k, p, backend);  // its own shapes, sized to be quick: only the memory can fail
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
  check_memory(k, p, backend);
  auto inst = v.make(backend, p);
  std::vector<double> t = run_repeats(backend, *inst, opt);
  std::sort(t.begin(), t.end());
  return k.traffic(p).flops / (t[t.size() / 2] * 1e-6) / 1e9;
}

// One run of a ceiling that lists its runs (CeilingRun): its problem and the seconds of one
// launch. The GPU: checked against its reference first (a kernel whose body this build lacks, or
// that computes wrongly, sets no roof), then the median of hot runs. The CPU: one launch timed by
// the host clock, the `ceiling_grow` parameter multiplied until that launch takes 50 ms.
std::pair<Problem, double> time_run(Backend& backend, const KernelFamily& k, const Variant& v, CeilingRun run) {
  const std::string kind = kind_of(backend.info());
  if (kind == "cpu") {
    for (;;) {
      check_interrupt();
      Problem p = make_problem(k, kind, v.name, run.dtype, run.params);
      check_memory(k, p, backend);
      auto inst = v.make(backend, p);
      const double seconds = backend.time_launch_us(*inst, 1) * 1e-6;
      const long long grow = k.ceiling_grow.empty() ? 0 : p.i(k.ceiling_grow);
      if (seconds > 0.05 || k.ceiling_grow.empty() || grow > (1LL << 30)) return {p, seconds};
      run.params[k.ceiling_grow] = std::to_string(grow * 4);
    }
  }
  Problem p = make_problem(k, kind, v.name, run.dtype, run.params);
  check_memory(k, p, backend);
  auto inst = v.make(backend, p);
  check_interrupt();
  inst->launch();
  backend.synchronize();
  const Check c = inst->check();
  if (!c.ok) throw Error("its output failed the reference check (max rel. error " + std::to_string(c.max_rel_error) + ")");
  RunOptions opt;
  opt.cold = false;
  opt.warmup = 2;
  opt.min_repeats = 5;
  opt.min_time_s = 0.01;
  opt.verify = false;
  std::vector<double> t = run_repeats(backend, *inst, opt);
  std::sort(t.begin(), t.end());
  return {p, t[t.size() / 2] * 1e-6};
}

const char* level_name(Ceiling c) { return c == Ceiling::kL2 ? "l2" : c == Ceiling::kL1 ? "l1" : "shared"; }

// The roofs of the ceilings that list their runs: vector (FP64, BF16), matrix per type (`compute`),
// or the cache levels per access (`!compute`). A run that fails leaves its roof at 0 with the reason
// as its source.
void measure_runs(Backend& backend, DevicePeaks& d, bool compute) {
  const DeviceInfo& info = backend.info();
  const std::string kind = kind_of(info);
  for (const KernelFamily& k : registry().families()) {
    if (!k.ceiling_runs) continue;
    for (const Variant& v : k.variants) {
      if (v.ceiling == Ceiling::kNone || v.ceiling == Ceiling::kMemory || v.backend != kind) continue;
      const bool is_compute = v.ceiling == Ceiling::kVector || v.ceiling == Ceiling::kMatrix;
      if (is_compute != compute) continue;
      for (const CeilingRun& run : k.ceiling_runs(info)) {
        const std::string name = k.name + "_" + run.what;
        auto& table = v.ceiling == Ceiling::kVector ? d.vector : d.matrix;
        if (compute && table.count(run.what) && table[run.what].gflops > 0) continue;  // the first variant's
        double figure = 0;
        std::string source = "measured:" + name;
        try {
          const auto pt = time_run(backend, k, v, run);
          const Traffic t = k.traffic(pt.first);
          figure = (compute ? t.flops : t.bytes_read + t.bytes_written) / pt.second / 1e9;
        } catch (const Error& e) {
          source = std::string("failed:") + name + ": " + e.what();
        }
        if (compute) {
          ComputePeak& c = table[run.what];
          c.gflops = figure;
          c.source = source;
        } else {
          LevelPeak& l = d.levels[level_name(v.ceiling)];
          if (run.what == "read") {
            l.read_gbs = figure;
            const Problem p = make_problem(k, kind, v.name, run.dtype, run.params);
            l.working_set_bytes = k.ceiling_working_set ? k.ceiling_working_set(p) : 0;
          } else {
            l.rw_gbs = figure;
          }
          if (figure > 0 || l.source == "none") l.source = figure > 0 ? "measured:" + k.name : source;
        }
      }
    }
  }
}

// The better of two takes of DRAM's and the levels' bandwidth, into `p`.
void keep_better(Peaks& p, const Peaks& again) {
  for (const auto& kv : again.bandwidth_by_kernel) {
    double& gbs = p.bandwidth_by_kernel[kv.first];
    gbs = std::max(gbs, kv.second);
  }
  if (again.bandwidth_gbs > p.bandwidth_gbs) {
    p.bandwidth_gbs = again.bandwidth_gbs;
    p.bandwidth_source = again.bandwidth_source;
  }
  for (const auto& kv : again.levels) {
    LevelPeak& l = p.levels[kv.first];
    l.read_gbs = std::max(l.read_gbs, kv.second.read_gbs);
    l.rw_gbs = std::max(l.rw_gbs, kv.second.rw_gbs);
    if (l.best() > 0 && l.source.rfind("measured", 0) != 0) l.source = kv.second.source;
    if (!(l.working_set_bytes > 0)) l.working_set_bytes = kv.second.working_set_bytes;
  }
}

DevicePeaks measure_all(Backend& backend) {
  const DeviceInfo& info = backend.info();
  DevicePeaks d = measure_memory(backend);
  d.size_curve = measure_size_curve(backend, d.size_curve.points);
  const std::string kind = kind_of(info);
  // The vector roof of each dtype's own arithmetic, where the backend has a chain for it (FP32;
  // packed FP16 on a GPU; the CPU has no FP16 chain).
  for (DType t : {DType::kF32, DType::kF16}) {
    for (const KernelFamily& k : registry().families()) {
      for (const Variant& v : k.variants) {
        if (v.ceiling != Ceiling::kVector || v.backend != kind || !takes(k, v, t) || d.vector.count(to_string(t)))
          continue;
        ComputePeak& c = d.vector[to_string(t)];
        c.gflops = measure_vector(backend, k, v, t);
        c.source = "measured:" + k.name + "_" + to_string(t);
      }
    }
  }
  measure_runs(backend, d, true);
  measure_runs(backend, d, false);
  // Theoretical figures from the architecture table, for every type the device has.
  for (auto& kv : info.vector_gflops_theoretical) d.vector[kv.first].gflops_theoretical = kv.second;
  for (auto& kv : info.matrix_gflops_theoretical) d.matrix[kv.first].gflops_theoretical = kv.second;
  settle_hierarchy(d, [&] {
    Peaks again = measure_memory(backend);
    measure_runs(backend, again, false);
    return again;
  });
  return d;
}

}  // namespace

Peaks device_peaks(Backend& backend, DType dtype, bool refresh) {
  const DeviceInfo& info = backend.info();
  std::lock_guard<std::mutex> g(g_mutex);
  auto it = g_cache->find(info.id);
  if (it == g_cache->end() || refresh) {
    backend.activate();
    // Measured before the old figures go: a retake that fails (a memory limit, an interrupt)
    // leaves the peaks the process already had.
    DevicePeaks fresh = measure_all(backend);
    it = g_cache->insert_or_assign(info.id, std::move(fresh)).first;
  }
  Peaks p = it->second;
  // The compute roof of what a row of this dtype computes by default (FP32 on the vector units:
  // bwprof's kernels compute FP16 and BF16 data in FP32); none where no chain ran nor the table
  // knows it.
  use_compute_roof(p, default_arithmetic(to_string(dtype), false), to_string(dtype));
  // The matrix roof of the row's dtype: FP16 (BF16) data runs FP16 (BF16) MMAs (FP32
  // accumulation); bwprof's FP32 kernels use no matrix units (TF32 is another arithmetic), so FP32
  // has none.
  auto mx = p.matrix.find(to_string(dtype));
  if (dtype != DType::kF32 && mx != p.matrix.end()) {
    p.matrix_gflops = mx->second.gflops;
    p.matrix_gflops_theoretical = mx->second.gflops_theoretical;
    p.matrix_source = mx->second.gflops > 0 ? mx->second.source : "none";
  }
  std::string levels;
  auto level = [&](const char* name) {
    auto l = p.levels.find(name);
    if (l == p.levels.end() || l->second.best() <= 0) return 0.0;
    levels += (levels.empty() ? "" : ",") + l->second.source.substr(l->second.source.find(':') + 1);
    return l->second.best();
  };
  p.l2_gbs = level("l2");
  p.l1_gbs = std::max(level("l1"), level("shared"));
  p.cache_source = levels.empty() ? "none" : "measured:" + levels;
  return p;
}

std::vector<HierarchyFinding> hierarchy_findings(const Peaks& p) {
  auto best = [&](const char* name) {
    auto l = p.levels.find(name);
    return l == p.levels.end() ? 0.0 : l->second.best();
  };
  // Inner to outer; a level not measured (0) is skipped, its inner levels compared with the next.
  const double l1 = best("l1"), shared = best("shared"), l2 = best("l2"), dram = p.bandwidth_gbs;
  std::vector<HierarchyFinding> out;
  auto check = [&](const char* inner, double in, const char* outer, double out_gbs) {
    if (in > 0 && out_gbs > 0 && in < out_gbs) out.push_back({inner, outer, in, out_gbs});
  };
  const char* next = l2 > 0 ? "l2" : "dram";
  const double next_gbs = l2 > 0 ? l2 : dram;
  check("l1", l1, next, next_gbs);
  check("shared", shared, next, next_gbs);
  check("l2", l2, "dram", dram);
  return out;
}

void settle_hierarchy(Peaks& p, const std::function<Peaks()>& remeasure) {
  p.hierarchy_disorder.clear();
  if (hierarchy_findings(p).empty()) return;
  // A level measured during a slow patch (another process on the cores, a clock ramping up) is
  // taken again before the order is judged.
  keep_better(p, remeasure());
  p.hierarchy_disorder = hierarchy_findings(p);
}

}  // namespace bwprof
