#include "bwprof/runner.hpp"

#include <chrono>
#include <limits>

#include "bwprof/error.hpp"
#include "bwprof/occupancy.hpp"

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
    const double us = backend.time_launch_us(k);
    times.push_back(us);
    kernel_s += us * 1e-6;
    const int n = static_cast<int>(times.size());
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    const bool enough = n >= opt.min_repeats && kernel_s >= opt.min_time_s;
    if (enough || n >= opt.max_repeats || (n >= opt.min_repeats && wall >= opt.max_time_s)) break;
  }
  return times;
}

Measurement measure(const std::string& kernel, const std::string& dtype, const std::string& device,
                    const std::string& variant, const std::map<std::string, std::string>& params,
                    const RunOptions& opt) {
  const KernelFamily& k = find_kernel(kernel);
  Backend& backend = backend_for(device);
  const DeviceInfo& info = backend.info();
  const std::string kind = info.kind == "cpu" ? "cpu" : "gpu";
  Problem p = make_problem(k, kind, variant, dtype, params);
  const Traffic t = k.traffic(p);
  auto inst = find_variant(k, kind, p.variant).make(backend, p);

  Measurement m;
  m.kernel = k.name;
  m.family = k.family;
  m.variant = p.variant;
  m.dtype = to_string(p.dtype);
  m.shape = p.shape();
  m.params = p.params;
  m.device = info.id;
  m.device_name = info.name;
  m.backend = info.backend;
  m.cache = opt.cold ? "cold" : "hot";
  m.warmup = opt.warmup;
  m.bytes_read = t.bytes_read;
  m.bytes_written = t.bytes_written;
  m.flops = t.flops;

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
  m.peaks = backend.peaks(p.dtype);
  derive_rates(m, k.pattern);
  return m;
}

}  // namespace bwprof
