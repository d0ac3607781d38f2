#include "bwprof/runner.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <limits>
#include <mutex>
#include <set>

#include "bwprof/error.hpp"
#include "bwprof/occupancy.hpp"
#include "bwprof/peaks.hpp"
#include "bwprof/roofline.hpp"

namespace bwprof {

std::vector<double> run_repeats(Backend& backend, KernelInstance& k, const RunOptions& opt) {
  if (opt.min_repeats < 1 || opt.max_repeats < opt.min_repeats)
    BWPROF_INVALID("repeats: need 1 <= min_repeats <= max_repeats");
  for (int i = 0; i < opt.warmup; ++i) {
    k.launch();
  }
  backend.synchronize();
  std::vector<double> times;
  double kernel_s = 0;
  const auto wall0 = std::chrono::steady_clock::now();
  for (;;) {
    if (opt.cold) backend.flush_cache(k);
    const double us = backend.time_launch_us(k, std::max(1, opt.launches_per_timing));
    times.push_back(us);
    kernel_s += us * 1e-6;
    const int n = static_cast<int>(times.size());
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    const bool enough = n >= opt.min_repeats && kernel_s >= opt.min_time_s;
    if (enough || n >= opt.max_repeats || (n >= opt.min_repeats && wall >= opt.max_time_s)) break;
  }
  return times;
}

namespace {

// BWPROF_DEBUG_SLOWDOWN="layernorm:2,stream_copy:3": run those kernels that many times per timed
// run, a deliberately slowed kernel for checking that regression detection catches it.
int debug_slowdown(const std::string& kernel) {
  const char* env = std::getenv("BWPROF_DEBUG_SLOWDOWN");
  if (!env) return 1;
  std::string spec = env;
  std::size_t pos = 0;
  while (pos <= spec.size()) {
    std::size_t end = spec.find(',', pos);
    if (end == std::string::npos) end = spec.size();
    const std::string item = spec.substr(pos, end - pos);
    const std::size_t colon = item.find(':');
    if (colon != std::string::npos && item.substr(0, colon) == kernel) {
      const int f = std::atoi(item.c_str() + colon + 1);
      return f > 1 ? f : 1;
    }
    pos = end + 1;
  }
  return 1;
}

// True the first time it is asked for a device in this process.
bool retake_peaks_once(const std::string& device) {
  static std::mutex mu;
  static std::set<std::string> done;
  std::lock_guard<std::mutex> g(mu);
  return done.insert(device).second;
}

}  // namespace

Measurement describe(const KernelFamily& k, const Problem& p, const DeviceInfo& info) {
  const Traffic t = k.traffic(p);
  Measurement m;
  m.kernel = k.name;
  m.family = k.family;
  m.variant = p.variant;
  m.dtype = to_string(p.dtype);
  m.shape = p.shape();
  m.params = p.params_text();
  m.device = info.id;
  m.device_name = info.name;
  m.backend = info.backend;
  m.bytes_read = t.bytes_read;
  m.bytes_written = t.bytes_written;
  m.flops = t.flops;
  return m;
}

bool runs_on_matrix_units(const Variant& v, DType dtype) {
  return v.matrix_units && std::find(v.matrix_dtypes.begin(), v.matrix_dtypes.end(), dtype) != v.matrix_dtypes.end();
}

bool judge_row(Measurement& m, const KernelFamily& k, const Variant& v, const DeviceInfo& info, const Peaks& peaks) {
  return judge_row(m, k.pattern, runs_on_matrix_units(v, parse_dtype(m.dtype)), info, peaks);
}

bool judge_row(Measurement& m, AccessPattern pattern, bool matrix_units, const DeviceInfo& info, const Peaks& peaks) {
  m.peaks = peaks;
  // FP16 and BF16 on the matrix units: their roof, measured by bwprof's matrix-peak kernel (the
  // architecture table's where it measured none; BF16 runs at FP16's rate on every GPU it knows).
  if (matrix_units && (peaks.matrix_gflops > 0 || info.fp16_matrix_gflops_theoretical > 0))
    use_matrix_roof(m.peaks, info.fp16_matrix_gflops_theoretical, m.dtype);
  return derive_rates(m, pattern);
}

void judge_on_device(Measurement& m, Backend& backend, AccessPattern pattern, bool matrix_units) {
  const DeviceInfo& info = backend.info();
  const DType dtype = parse_dtype(m.dtype);
  if (judge_row(m, pattern, matrix_units, info, device_peaks(backend, dtype)) && retake_peaks_once(info.id)) {
    // Clearly above a measured peak with no datasheet figure to say which is wrong: the peak may
    // have been taken during a slow patch. Take it again (once per device and process) and judge
    // again; a row still above it stays flagged.
    judge_row(m, pattern, matrix_units, info, device_peaks(backend, dtype, true));
  }
}

Measurement measure_kernel(Backend& backend, const KernelFamily& k, const std::string& dtype,
                           const std::string& variant, const std::map<std::string, std::string>& params,
                           const RunOptions& options) {
  RunOptions opt = options;
  opt.launches_per_timing = std::max(opt.launches_per_timing, debug_slowdown(k.name));
  const DeviceInfo& info = backend.info();
  const std::string kind = info.kind == "cpu" ? "cpu" : "gpu";
  Problem p = make_problem(k, kind, variant, dtype, params);
  auto inst = find_variant(k, kind, p.variant).make(backend, p);

  Measurement m = describe(k, p, info);
  m.cache = opt.cold ? "cold" : "hot";
  m.warmup = opt.warmup;

  if (opt.verify) {
    inst->launch();
    backend.synchronize();
    Check c = inst->check();
    m.verified = c.ok;
    m.max_rel_error = c.max_rel_error;
    m.tolerance = c.tolerance;
  }
  m.time_us = summarize(run_repeats(backend, *inst, opt));
  m.unstable = is_unstable(m.time_us);
  Resources r = inst->resources();
  m.block_size = r.block_size;
  m.registers_per_thread = r.registers_per_thread;
  m.shared_mem_per_block = r.shared_mem_per_block;
  m.runtime_blocks_per_sm = r.runtime_blocks_per_sm;
  m.occupancy_pct = std::numeric_limits<double>::quiet_NaN();
  if (r.block_size > 0 && r.registers_per_thread >= 0) {
    try {
      Occupancy o = compute_occupancy(info.arch, r.block_size, r.registers_per_thread, r.shared_mem_per_block);
      m.occupancy_pct = o.occupancy_pct;
      m.occupancy_limiter = o.limiter;
      m.occupancy_blocks_per_sm = o.active_blocks;
    } catch (const InvalidArgument&) {
      m.occupancy_limiter = "unknown architecture";  // not in the occupancy tables: leave it open
    }
  }
  judge_on_device(m, backend, k.pattern, runs_on_matrix_units(find_variant(k, kind, p.variant), p.dtype));
  return m;
}

}  // namespace bwprof
