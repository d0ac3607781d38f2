#include "bwprof/measurement.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace bwprof {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kLatencyEfficiencyPct = 25.0;  // under this, neither roof explains the time
constexpr double kShortKernelUs = 20.0;  // launch and first-byte latency dominate below this

double pct(double value, double peak) { return peak > 0 ? 100.0 * value / peak : kNaN; }

std::string fmt(const char* f, double a) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, a);
  return buf;
}

std::string human_bytes(double b) {
  if (b >= 1e9) return fmt("%.3g GB", b / 1e9);
  if (b >= 1e6) return fmt("%.3g MB", b / 1e6);
  if (b >= 1e3) return fmt("%.3g KB", b / 1e3);
  return fmt("%.0f B", b);
}

}  // namespace

const char* to_string(AccessPattern p) {
  switch (p) {
    case AccessPattern::kCoalesced: return "coalesced";
    case AccessPattern::kStrided: return "strided";
    case AccessPattern::kGather: return "gather";
    case AccessPattern::kBroadcast: return "broadcast";
  }
  return "?";
}

double expected_efficiency(AccessPattern p) {
  switch (p) {
    case AccessPattern::kCoalesced: return 0.90;
    case AccessPattern::kStrided: return 0.60;
    case AccessPattern::kGather: return 0.30;
    case AccessPattern::kBroadcast: return 0.90;
  }
  return 1.0;
}

std::string grade(double p) {
  if (std::isnan(p)) return "n/a";
  if (p >= 80) return "excellent";
  if (p >= 60) return "good";
  if (p >= 30) return "fair";
  return "poor";
}

void derive_rates(Measurement& m, AccessPattern pattern) {
  const Peaks& pk = m.peaks;
  const double t_s = m.time_us.median * 1e-6;
  const double bytes = m.bytes_read + m.bytes_written;
  m.access_pattern = to_string(pattern);
  m.bandwidth_gbs = t_s > 0 ? bytes / t_s / 1e9 : kNaN;
  m.gflops = t_s > 0 ? m.flops / t_s / 1e9 : kNaN;
  m.bandwidth_pct_peak = pct(m.bandwidth_gbs, pk.bandwidth_gbs);
  m.bandwidth_pct_theoretical = pct(m.bandwidth_gbs, pk.bandwidth_theoretical_gbs);
  m.compute_pct_peak = m.flops > 0 ? pct(m.gflops, pk.gflops) : kNaN;
  m.intensity_flop_per_byte = bytes > 0 ? m.flops / bytes : kNaN;

  // Roofline: attainable = min(compute roof, intensity x bandwidth roof).
  const bool has_roofs = pk.bandwidth_gbs > 0 && pk.gflops > 0;
  bool memory_side = true;
  if (m.flops > 0 && bytes > 0 && has_roofs) {
    double mem_roof = m.intensity_flop_per_byte * pk.bandwidth_gbs;
    memory_side = mem_roof < pk.gflops;
    m.attainable_gflops = std::min(pk.gflops, mem_roof);
    m.roofline_efficiency_pct = pct(m.gflops, m.attainable_gflops);
  } else if (m.flops > 0 && bytes == 0 && pk.gflops > 0) {
    memory_side = false;
    m.attainable_gflops = pk.gflops;
    m.roofline_efficiency_pct = m.compute_pct_peak;
  } else {
    // Pure data movement (or no compute roof): the bandwidth roof alone judges it.
    m.attainable_gflops = kNaN;
    m.roofline_efficiency_pct = m.bandwidth_pct_peak;
  }

  const double eff = m.roofline_efficiency_pct;
  const double theo = pk.bandwidth_theoretical_gbs;
  m.above_peak = (theo > 0 && m.bandwidth_gbs > theo) ||
                 (theo <= 0 && m.bandwidth_pct_peak > 110.0) ||
                 (pk.gflops_theoretical > 0 && m.gflops > pk.gflops_theoretical);

  if (std::isnan(eff)) {
    m.bound = "unknown";
  } else if (eff < kLatencyEfficiencyPct) {
    m.bound = "latency";
  } else {
    m.bound = memory_side ? "memory" : "compute";
  }
  m.grade = grade(m.bound == "compute" ? m.compute_pct_peak
                  : m.bound == "memory" ? m.bandwidth_pct_peak
                                        : eff);

  // One line in plain words.
  std::string text;
  const double exp_pct = 100.0 * expected_efficiency(pattern);
  const std::string pattern_note =
      std::string(to_string(pattern)) + " access: expect " +
      (pattern == AccessPattern::kCoalesced || pattern == AccessPattern::kBroadcast ? "up to "
                                                                                     : "\u2264 ") +
      fmt("%.0f %%", exp_pct);
  if (m.above_peak) {
    text = "above the device's peak (" + fmt("%.0f GB/s", m.bandwidth_gbs) +
           "): the data stayed in cache, so this is not a DRAM figure; measure with cache='cold'";
  } else if (m.bound == "unknown") {
    text = "no peak is known for this device, so only the rates are reported";
  } else if (m.bound == "latency") {
    text = "latency-bound: " + fmt("%.1f %% of peak bandwidth", m.bandwidth_pct_peak);
    if (m.flops > 0) text += " and " + fmt("%.1f %% of peak compute", m.compute_pct_peak);
    if (m.time_us.median < kShortKernelUs) {
      text += "; only " + human_bytes(bytes) + " in " + fmt("%.3g us", m.time_us.median) +
              ", too little work to hide launch and memory latency";
    } else {
      text += "; neither roof explains the time: the kernel waits on dependencies, instruction "
              "overhead (conversions, transcendentals), synchronization or too few threads in flight";
    }
  } else if (m.bound == "memory") {
    text = "memory-bound at " + fmt("%.0f %% of peak bandwidth", m.bandwidth_pct_peak) + " (" +
           m.grade + "); " + pattern_note;
  } else {
    text = "compute-bound at " + fmt("%.0f %% of peak ", m.compute_pct_peak) + m.dtype +
           " compute (" + m.grade + ")";
  }
  m.bottleneck = text;
}

std::vector<std::string> Measurement::columns() {
  std::vector<std::string> cols;
  for (auto& kv : Measurement().record()) cols.push_back(kv.first);
  return cols;
}

std::vector<std::pair<std::string, Measurement::Value>> Measurement::record() const {
  using I = std::int64_t;
  return {
      {"kernel", kernel},
      {"family", family},
      {"variant", variant},
      {"dtype", dtype},
      {"shape", shape},
      {"device", device},
      {"device_name", device_name},
      {"backend", backend},
      {"cache", cache},
      {"time_median_us", time_us.median},
      {"time_min_us", time_us.min},
      {"time_max_us", time_us.max},
      {"time_mean_us", time_us.mean},
      {"time_std_us", time_us.stddev},
      {"time_cv", time_us.cv},
      {"repeats", I(time_us.count)},
      {"warmup", I(warmup)},
      {"unstable", unstable},
      {"bytes_read", bytes_read},
      {"bytes_written", bytes_written},
      {"flops", flops},
      {"bandwidth_gbs", bandwidth_gbs},
      {"bandwidth_pct_peak", bandwidth_pct_peak},
      {"bandwidth_pct_theoretical", bandwidth_pct_theoretical},
      {"peak_bandwidth_gbs", peaks.bandwidth_gbs},
      {"peak_bandwidth_source", peaks.bandwidth_source},
      {"theoretical_bandwidth_gbs", peaks.bandwidth_theoretical_gbs},
      {"gflops", gflops},
      {"compute_pct_peak", compute_pct_peak},
      {"peak_gflops", peaks.gflops},
      {"peak_compute_source", peaks.compute_source},
      {"intensity_flop_per_byte", intensity_flop_per_byte},
      {"attainable_gflops", attainable_gflops},
      {"roofline_efficiency_pct", roofline_efficiency_pct},
      {"bound", bound},
      {"grade", grade},
      {"access_pattern", access_pattern},
      {"above_peak", above_peak},
      {"bottleneck", bottleneck},
      {"verified", verified},
      {"max_rel_error", max_rel_error},
      {"tolerance", tolerance},
      {"block_size", I(block_size)},
      {"registers_per_thread", I(registers_per_thread)},
      {"shared_mem_per_block", I(shared_mem_per_block)},
      {"occupancy_pct", occupancy_pct},
      {"occupancy_limiter", occupancy_limiter},
      {"occupancy_blocks_per_sm", I(occupancy_blocks_per_sm)},
      {"runtime_blocks_per_sm", I(runtime_blocks_per_sm)},
      {"schema_version", I(kSchemaVersion)},
  };
}

}  // namespace bwprof
