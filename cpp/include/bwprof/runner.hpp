// Timer/Runner: warm-up, repeats until both a minimum count and a minimum time are reached,
// the median reported; and measure_kernel(), which validates, prepares, checks, times and derives
// on a given backend (the api's measure() finds the kernel and the device by name).
#pragma once
#include <limits>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "bwprof/backend.hpp"
#include "bwprof/measurement.hpp"

namespace bwprof {

// How a timed run is made. kSingle: one launch, after a cache flush when cold. kGraph: the steady
// state of a decode step: many launches back to back (a CUDA/HIP graph on a GPU) over input sets
// used in turn that together exceed twice the last-level cache when cold (one set when hot), the
// time divided among them; no flush.
enum class Timing { kSingle, kGraph };
const char* to_string(Timing t);  // "single", "graph"
Timing parse_timing(const std::string& s);  // InvalidArgument naming `timing` for anything else

struct RunOptions {
  Timing timing = Timing::kSingle;
  bool cold = true;          // flush caches before every timed launch (graph: rotate input sets)
  int warmup = 2;
  int min_repeats = 10;
  double min_time_s = 0.05;  // total timed kernel time to reach
  int max_repeats = 1000;
  double max_time_s = 2.0;   // stop adding repeats past this much wall time
  bool verify = true;
  // The bound on the whole call: the first launch's time, times the launches still to come, past
  // it is an InvalidArgument before they run (check_total_time). Infinite: no bound.
  double max_total_s = std::numeric_limits<double>::infinity();
  // Noise-based stopping (nvbench's stdrel criterion): once min_repeats and min_time_s are met,
  // repeats go on until the samples' relative_spread (the row's time_cv) is at most this fraction,
  // from kMinSpreadSamples samples, within max_repeats, max_time_s and max_total_s; RunLog says
  // whether it was met. 0 or NaN: no target (the default); else it must be in (0, 1].
  double target_rel_spread = 0;
  // A timed run whose clock sample says the GPU throttled is dropped and timed again, at most this
  // many times a call and while max_time_s and max_total_s allow; -1: as many as min_repeats.
  // 0: kept and counted only. Only a run with a RunLog samples the clock.
  int throttle_retakes = -1;
};

// The fewest samples whose relative spread can meet a target: two samples' CV says little.
constexpr int kMinSpreadSamples = 5;

// What the timed runs saw besides their times: one clock sample after each kept timed run (NaN
// where the runtime does not say), how many kept samples were taken while the device throttled,
// and how many throttled samples were dropped and timed again.
struct RunLog {
  std::vector<double> clock_mhz;
  int throttled = 0;          // kept samples taken while throttled (the re-takes ran out)
  int throttled_retaken = 0;  // throttled samples dropped and timed again
  // The work made the host wait on the GPU inside a held launch: the run was timed again behind
  // the spin, and its times include the host's work between launches (Backend::take_hold_gave_up).
  bool host_waited = false;
  // RunOptions::target_rel_spread as the run used it (NaN: none), and whether the kept samples'
  // relative spread came under it (true where there was none).
  double target_rel_spread = std::numeric_limits<double>::quiet_NaN();
  bool spread_target_met = true;
  double median_clock_mhz() const;  // NaN when no sample has a figure
  // The row's account of the run: sm_clock_mhz, throttled_samples, throttled_retaken,
  // target_rel_spread, spread_target_met and host_waited.
  void describe(Measurement& m) const;
};

// Runs warm-up launches, then timed launches until min_repeats and min_time_s are both met (and
// the spread target, when set), or a maximum is hit; returns the per-launch times in microseconds.
// With `log`, the clock is sampled after each timed run (outside the timed window) and a run
// taken while throttled is timed again (RunOptions::throttle_retakes).
std::vector<double> run_repeats(Backend& backend, KernelInstance& k, const RunOptions& opt, RunLog* log = nullptr);
// How many timed launches run_repeats makes of a launch that takes `launch_s` (its estimate for
// RunOptions::max_total_s): the minimum (min_repeats and min_time_s, within the maxima). Repeats a
// spread target adds and throttled runs timed again are not in it: the loop stops adding them
// where the call would pass max_total_s.
int timed_launches_for(const RunOptions& opt, double launch_s);

// ---- steady state (Timing::kGraph) ----------------------------------------------------------
// The ONE place that makes rotated input sets and times them back to back; the kernels of
// measure_kernel and any other launcher (user code, bwprof.profile) go through it.
constexpr int kMaxRotationSets = 64;
constexpr int kMinGraphLaunches = 20;
// How many input sets of `bytes_per_set` (a set's traffic) to use in turn: enough that together
// they exceed twice the device's last-level cache when `cold` (at most kMaxRotationSets, and
// together at most a quarter of the device's memory), 1 when hot.
int rotation_sets_for(double bytes_per_set, const DeviceInfo& info, bool cold);
// Launches per timed run for `sets` sets: whole rotations, at least kMinGraphLaunches.
int graph_launches_for(int sets);
// Times `sets` launched in turn, `launches` of them back to back per timed run (a multiple of the
// number of sets; captured once as a graph on a GPU), repeated per `opt` (warm-up, repeats,
// times; opt.launches_per_timing launches of each slot); returns microseconds per launch.
std::vector<double> run_steady_state(Backend& backend, const std::vector<KernelInstance*>& sets, int launches,
                                     const RunOptions& opt, RunLog* log = nullptr);

// Whether `v` does `dtype` work on the matrix units (tensor cores, MFMA), whose roof then judges it.
bool runs_on_matrix_units(const Variant& v, DType dtype);
// The arithmetic a problem of `k` run by `v` does (KernelFamily::arithmetic, else the default for
// its dtype and units; bwprof/roofline.hpp), whose roof judges its row.
std::string arithmetic_of(const KernelFamily& k, const Variant& v, const Problem& p);

// What ran and what it moves (the record's identity and traffic), before anything is timed.
Measurement describe(const KernelFamily& k, const Problem& p, const DeviceInfo& info);
// The rates, roofline position, bound and bottleneck of a timed row of problem `p` against its
// device's peaks (the roof of the arithmetic it does, arithmetic_of): the one path every row takes.
// Returns true when the row is above a measured peak only (see derive_rates).
// A row whose work crosses a link (`link` not empty) is judged against that link's bandwidth.
bool judge_row(Measurement& m, const KernelFamily& k, const Variant& v, const Problem& p, const DeviceInfo& info,
               const Peaks& peaks, const Link& link = {});
// The peaks a transfer over `link` is judged against: the link's theoretical bandwidth, both as
// the roof and as the datasheet figure (bwprof measures no link peak of its own), and no compute.
Peaks link_peaks(const Link& link);
// The same for a row that no kernel descriptor describes (the user's code): its access pattern and
// the arithmetic it does (default_arithmetic: on the matrix units where its FP16 work runs there).
bool judge_row(Measurement& m, AccessPattern pattern, const std::string& arithmetic, const DeviceInfo& info,
               const Peaks& peaks);
// judge_row() against the peaks of the device behind `backend` (the peaks policy); a row clearly
// above a measured peak, with no datasheet figure to say which is wrong, has the peaks taken again
// (once per device and process) and is judged again.
void judge_on_device(Measurement& m, Backend& backend, AccessPattern pattern, const std::string& arithmetic);

// The whole measurement of one invocation of kernel `k` on `backend`.
// The instance's own account of what it runs (KernelInstance::explain), made as measure_kernel makes
// it (the same checks and limits), without running it.
std::string explain_kernel(Backend& backend, const KernelFamily& k, const std::string& dtype,
                           const std::string& variant, const std::map<std::string, std::string>& params);
Measurement measure_kernel(Backend& backend, const KernelFamily& k, const std::string& dtype,
                           const std::string& variant, const std::map<std::string, std::string>& params,
                           const RunOptions& opt);

}  // namespace bwprof
