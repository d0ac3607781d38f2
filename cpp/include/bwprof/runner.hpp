// Timer/Runner: warm-up, repeats until both a minimum count and a minimum time are reached,
// the median reported; and measure_kernel(), which validates, prepares, checks, times and derives
// on a given backend (the api's measure() finds the kernel and the device by name).
#pragma once
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "bwprof/backend.hpp"
#include "bwprof/measurement.hpp"

namespace bwprof {

struct RunOptions {
  bool cold = true;          // flush caches before every timed launch
  int warmup = 2;
  int min_repeats = 10;
  double min_time_s = 0.05;  // total timed kernel time to reach
  int max_repeats = 1000;
  double max_time_s = 2.0;   // stop adding repeats past this much wall time
  bool verify = true;
  // Launches per timed run (1). More makes a deliberately slowed kernel for testing regression
  // detection: measure() sets it from BWPROF_DEBUG_SLOWDOWN="kernel:factor[,kernel:factor]".
  int launches_per_timing = 1;
};

// Runs warm-up launches, then timed launches until min_repeats and min_time_s are both met
// (or a maximum is hit); returns the per-launch times in microseconds.
std::vector<double> run_repeats(Backend& backend, KernelInstance& k, const RunOptions& opt);

// Whether `v` does `dtype` work on the matrix units (tensor cores, MFMA), whose roof then judges it.
bool runs_on_matrix_units(const Variant& v, DType dtype);

// What ran and what it moves (the record's identity and traffic), before anything is timed.
Measurement describe(const KernelFamily& k, const Problem& p, const DeviceInfo& info);
// The rates, roofline position, bound and bottleneck of a timed row against its device's peaks
// (the matrix units' roof for work that runs on them): the one path every row takes.
// Returns true when the row is above a measured peak only (see derive_rates).
bool judge_row(Measurement& m, const KernelFamily& k, const Variant& v, const DeviceInfo& info, const Peaks& peaks);
// The same for a row that no kernel descriptor describes (the user's code): its access pattern, and
// whether its FP16 work runs on the matrix units.
bool judge_row(Measurement& m, AccessPattern pattern, bool matrix_units, const DeviceInfo& info, const Peaks& peaks);
// judge_row() against the peaks of the device behind `backend` (the peaks policy); a row clearly
// above a measured peak, with no datasheet figure to say which is wrong, has the peaks taken again
// (once per device and process) and is judged again.
void judge_on_device(Measurement& m, Backend& backend, AccessPattern pattern, bool matrix_units);

// The whole measurement of one invocation of kernel `k` on `backend`.
Measurement measure_kernel(Backend& backend, const KernelFamily& k, const std::string& dtype,
                           const std::string& variant, const std::map<std::string, std::string>& params,
                           const RunOptions& opt);

}  // namespace bwprof
