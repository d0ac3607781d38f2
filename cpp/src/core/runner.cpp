#include "bwprof/runner.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <mutex>
#include <set>

#include "bwprof/error.hpp"
#include "bwprof/interrupt.hpp"
#include "bwprof/limits.hpp"
#include "bwprof/occupancy.hpp"
#include "bwprof/peaks.hpp"
#include "bwprof/registry.hpp"
#include "bwprof/roofline.hpp"

namespace bwprof {

const char* to_string(Timing t) { return t == Timing::kGraph ? "graph" : "single"; }

Timing parse_timing(const std::string& s) {
  if (s == "single") return Timing::kSingle;
  if (s == "graph") return Timing::kGraph;
  throw InvalidArgument("timing: expected 'single' or 'graph', got '" + s + "'");
}

double RunLog::median_clock_mhz() const {
  std::vector<double> v;
  for (double c : clock_mhz)
    if (std::isfinite(c)) v.push_back(c);
  if (v.empty()) return std::numeric_limits<double>::quiet_NaN();
  return summarize(v).median;
}

void RunLog::describe(Measurement& m) const {
  m.sm_clock_mhz = median_clock_mhz();
  m.throttled_samples = throttled;
  m.throttled_retaken = throttled_retaken;
  m.target_rel_spread = target_rel_spread;
  m.spread_target_met = spread_target_met;
  m.host_waited = host_waited;
}

int timed_launches_for(const RunOptions& opt, double launch_s) {
  // The loop below stops at min_repeats once min_time_s (or max_time_s of wall time) is reached,
  // and at max_repeats in any case; what a spread target or a throttled run adds is not known here.
  const double until = std::min(opt.min_time_s, opt.max_time_s);
  const double wanted = launch_s > 0 ? std::ceil(until / launch_s) : static_cast<double>(opt.max_repeats);
  return static_cast<int>(std::min<double>(opt.max_repeats, std::max<double>(opt.min_repeats, wanted)));
}

namespace {

// RunOptions::target_rel_spread checked: 0 where there is none (0 or NaN), else in (0, 1].
double spread_target_of(const RunOptions& opt) {
  const double t = opt.target_rel_spread;
  if (std::isnan(t) || t == 0) return 0;
  if (!(t > 0 && t <= 1))
    BWPROF_INVALID("target_rel_spread: must be a fraction in (0, 1] (0.02 is 2 %), or 0 for no target");
  return t;
}

// Whether `times` have a relative spread of at most `target`, from kMinSpreadSamples of them (a pass
// over at most max_repeats samples between launches, outside the timed region).
bool spread_met(const std::vector<double>& times, double target) {
  return static_cast<int>(times.size()) >= kMinSpreadSamples && relative_spread(times) <= target;
}

}  // namespace

std::vector<double> run_repeats(Backend& backend, KernelInstance& k, const RunOptions& opt, RunLog* log) {
  if (opt.min_repeats < 1 || opt.max_repeats < opt.min_repeats)
    BWPROF_INVALID("repeats: need 1 <= min_repeats <= max_repeats");
  if (!(opt.max_total_s > 0)) BWPROF_INVALID("max_total_s: must be > 0");
  const double target = spread_target_of(opt);
  const int retake_budget = opt.throttle_retakes < 0 ? opt.min_repeats : opt.throttle_retakes;
  const bool bounded = std::isfinite(opt.max_total_s);
  const auto call0 = std::chrono::steady_clock::now();
  const auto since = [](std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  // Whether one more launch of `s` seconds fits in max_total_s: what the estimate did not count
  // (repeats for the spread target, throttled runs timed again) stops where it would not.
  const auto room_for = [&](double s) { return !bounded || since(call0) + s <= opt.max_total_s; };
  // Between launches, never inside the timed region: a stop asked for (Ctrl-C) ends the call here.
  for (int i = 0; i < opt.warmup; ++i) {
    check_interrupt();
    const auto t0 = std::chrono::steady_clock::now();
    k.launch();
    if (i == 0 && bounded) {  // the first launch estimates the call, before the rest of it runs
      backend.synchronize();
      const double first = since(t0);
      check_total_time(since(call0), first, opt.warmup - 1 + timed_launches_for(opt, first), opt.max_total_s);
    }
  }
  backend.synchronize();
  std::vector<double> times;
  int retakes_left = retake_budget;
  double kernel_s = 0;
  auto wall0 = std::chrono::steady_clock::now();
  if (log) log->target_rel_spread = target > 0 ? target : std::numeric_limits<double>::quiet_NaN();
  for (;;) {
    check_interrupt();
    if (opt.cold) backend.flush_cache(k);
    k.before_timing();
    const double us = backend.time_launch_us(k);
    if (backend.take_hold_gave_up()) {
      // The hold timed out in this launch (the backend re-timed it behind the spin): the samples
      // taken under the hold time other work than the ones behind the spin, so the run starts
      // again from this sample, and no timing that waited on the hold's timeout is returned.
      times.clear();
      retakes_left = retake_budget;
      kernel_s = 0;
      wall0 = std::chrono::steady_clock::now();
      if (log) {
        log->clock_mhz.clear();
        log->throttled = 0;
        log->throttled_retaken = 0;
        log->host_waited = true;
      }
    }
    if (log) {
      const ClockSample c = backend.sample_clock();
      if (c.throttled) {
        // Taken while the GPU throttled: timed again while the re-takes and the time budget last
        // (the clock is read after the run, so a run that ended throttled is not trusted to be the
        // kernel's); past them it is kept and counted.
        if (retakes_left > 0 && since(wall0) < opt.max_time_s && room_for(us * 1e-6)) {
          --retakes_left;
          ++log->throttled_retaken;
          continue;
        }
        ++log->throttled;
      }
      log->clock_mhz.push_back(c.sm_mhz);
    }
    times.push_back(us);
    kernel_s += us * 1e-6;
    const int n = static_cast<int>(times.size());
    if (n == 1 && opt.warmup == 0 && bounded)  // no warm-up launch: the first timed one estimates the call
      check_total_time(since(call0), us * 1e-6, timed_launches_for(opt, us * 1e-6) - 1, opt.max_total_s);
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    const bool counted = n >= opt.min_repeats && kernel_s >= opt.min_time_s;
    if (counted && (target == 0 || spread_met(times, target))) break;
    if (n >= opt.max_repeats || (n >= opt.min_repeats && wall >= opt.max_time_s)) break;
    if (counted && !room_for(us * 1e-6)) break;  // only the target wants more, and the call has no room
  }
  if (log) log->spread_target_met = target == 0 || spread_met(times, target);
  return times;
}

int rotation_sets_for(double bytes_per_set, const DeviceInfo& info, bool cold) {
  if (!cold || !(bytes_per_set > 0)) return 1;
  // One set more than fill twice the cache: the set a launch reads was last touched a whole
  // rotation ago, with more than 2x the cache moved since.
  double n = std::ceil(2.0 * info.cache_bytes / bytes_per_set) + 1;
  if (info.memory_bytes > 0) n = std::min(n, std::floor(info.memory_bytes / 4 / bytes_per_set));
  n = std::min<double>(n, kMaxRotationSets);
  return n >= 1 ? static_cast<int>(n) : 1;
}

int graph_launches_for(int sets) {
  sets = std::max(1, sets);
  return sets * ((kMinGraphLaunches + sets - 1) / sets);
}

std::vector<double> run_steady_state(Backend& backend, const std::vector<KernelInstance*>& sets, int launches,
                                     const RunOptions& opt, RunLog* log) {
  if (sets.empty()) throw Error("internal: run_steady_state without input sets");
  if (launches < 1 || launches % static_cast<int>(sets.size()) != 0)
    throw Error("internal: run_steady_state needs whole rotations of the input sets");
  // Every timed run makes the same sequence: set 0, 1, ..., the last, set 0, ... (whole rotations),
  // so that the set a launch reads was last read a whole rotation earlier.
  auto body = [sets, launches] {
    for (int i = 0; i < launches; ++i) sets[i % sets.size()]->launch();
  };
  std::unique_ptr<KernelInstance> sequence = backend.capture(body);
  RunOptions o = opt;
  o.cold = false;  // the rotation keeps the data out of the cache; a flush would not be steady state
  o.warmup = std::max(1, opt.warmup);  // the first replay uploads a graph
  std::vector<double> t = run_repeats(backend, *sequence, o, log);
  for (double& x : t) x /= launches;
  return t;
}

namespace {

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

Peaks link_peaks(const Link& link) {
  Peaks p;
  p.link = link.name.empty() ? link.kind : link.name;
  p.bandwidth_gbs = p.bandwidth_theoretical_gbs = link.gbs;
  p.bandwidth_source = link.known() ? "theoretical:" + link.kind : "";
  return p;
}

std::string arithmetic_of(const KernelFamily& k, const Variant& v, const Problem& p) {
  const std::string a = k.arithmetic ? k.arithmetic(p) : std::string();
  return a.empty() ? default_arithmetic(to_string(p.dtype), runs_on_matrix_units(v, p.dtype)) : a;
}

bool judge_row(Measurement& m, const KernelFamily& k, const Variant& v, const Problem& p, const DeviceInfo& info,
               const Peaks& peaks, const Link& link) {
  if (!link.kind.empty()) {
    m.peaks = link_peaks(link);
    return derive_rates(m, k.pattern);
  }
  return judge_row(m, k.pattern, arithmetic_of(k, v, p), info, peaks);
}

bool judge_row(Measurement& m, AccessPattern pattern, const std::string& arithmetic, const DeviceInfo& info,
               const Peaks& peaks) {
  m.peaks = peaks;
  // The roof of the arithmetic the row does: measured by bwprof's own kernels (FMA chains per type,
  // the matrix-peak kernel), else the architecture table's (BF16 matrix work at FP16's rate where it
  // has no BF16 figure), else none.
  use_compute_roof(m.peaks, arithmetic, m.dtype, info.fp16_matrix_gflops_theoretical);
  return derive_rates(m, pattern);
}

void judge_on_device(Measurement& m, Backend& backend, AccessPattern pattern, const std::string& arithmetic) {
  const DeviceInfo& info = backend.info();
  const DType dtype = parse_dtype(m.dtype);
  if (judge_row(m, pattern, arithmetic, info, device_peaks(backend, dtype)) && retake_peaks_once(info.id)) {
    // Clearly above a measured peak with no datasheet figure to say which is wrong: the peak may
    // have been taken during a slow patch. Take it again (once per device and process) and judge
    // again; a row still above it stays flagged. A retake that cannot run (the peaks' own arrays
    // over a memory limit the user set for this kernel) leaves the row judged, and flagged, by
    // the peaks it has.
    Peaks again;
    try {
      again = device_peaks(backend, dtype, true);
    } catch (const OutOfMemory&) {
      return;
    }
    judge_row(m, pattern, arithmetic, info, again);
  }
}

std::string explain_kernel(Backend& backend, const KernelFamily& k, const std::string& dtype,
                           const std::string& variant, const std::map<std::string, std::string>& params) {
  const std::string kind = backend.info().kind == "cpu" ? "cpu" : "gpu";
  Problem p = make_problem(k, kind, variant, dtype, params);
  backend.activate();
  const Variant& v = find_variant(k, kind, p.variant);
  admit(backend, k, v, p);
  return v.make(backend, p)->explain();
}

Measurement measure_kernel(Backend& backend, const KernelFamily& k, const std::string& dtype,
                           const std::string& variant, const std::map<std::string, std::string>& params,
                           const RunOptions& options) {
  const RunOptions& opt = options;
  const DeviceInfo& info = backend.info();
  const std::string kind = info.kind == "cpu" ? "cpu" : "gpu";
  Problem p = make_problem(k, kind, variant, dtype, params);
  backend.activate();
  const Variant& v = find_variant(k, kind, p.variant);
  admit(backend, k, v, p);  // the memory and the work of a launch, before anything is allocated
  auto inst = v.make(backend, p);

  Measurement m = describe(k, p, info);
  m.cache = opt.cold ? "cold" : "hot";
  m.timing = to_string(opt.timing);
  m.warmup = opt.warmup;

  if (opt.verify) {
    check_interrupt();
    inst->launch();
    backend.synchronize();
    Check c = inst->check();
    m.verified = c.ok;
    m.max_rel_error = c.max_rel_error;
    m.tolerance = c.tolerance;
  }
  RunLog log;
  if (opt.timing == Timing::kGraph) {
    // Set 0 is the instance just checked; the others are further instances of the same problem
    // (their own buffers, the same inputs), as many as the device's memory allows.
    const Traffic t = k.traffic(p);
    const int want = rotation_sets_for(t.bytes_read + t.bytes_written, info, opt.cold);
    const Variant& made = find_variant(k, kind, p.variant);
    std::vector<std::unique_ptr<KernelInstance>> more;
    std::vector<KernelInstance*> sets{inst.get()};
    for (int i = 1; i < want; ++i) {
      try {
        more.push_back(made.make(backend, p));
      } catch (const OutOfMemory&) {
        break;  // bounded by memory: the sets made so far
      }
      sets.push_back(more.back().get());
    }
    m.rotation_sets = static_cast<int>(sets.size());
    m.graph_launches = graph_launches_for(m.rotation_sets);
    try {
      m.time_us = summarize(run_steady_state(backend, sets, m.graph_launches, opt, &log));
    } catch (const InvalidArgument& e) {
      throw InvalidArgument("timing: " + k.name + "/" + p.variant + " cannot be timed as a graph (" + e.what() +
                            "); use timing='single'");
    }
    if (opt.verify) {
      // The sets' outputs after the replays: a graph whose launches went wrong fails its check too.
      backend.synchronize();
      for (KernelInstance* set : {sets.front(), sets.back()}) {
        const Check c = set->check();
        m.verified = m.verified && c.ok;
        m.max_rel_error = std::max(m.max_rel_error, c.max_rel_error);
      }
    }
  } else {
    m.time_us = summarize(run_repeats(backend, *inst, opt, &log));
  }
  log.describe(m);
  m.stream_hold = backend.stream_hold();  // after the run: "spin" where a hold gave up
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
  const Link link = inst->link();
  if (!link.kind.empty()) {
    judge_row(m, k, v, p, info, Peaks{}, link);  // bound by its link: the memory peaks play no part
    return m;
  }
  judge_on_device(m, backend, k.pattern, arithmetic_of(k, v, p));
  return m;
}

}  // namespace bwprof
