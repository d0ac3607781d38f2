#include "bwprof/measurement.hpp"

#include <cmath>
#include <cstdio>
#include <limits>

#include "bwprof/roofline.hpp"

namespace bwprof {

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

std::string HierarchyFinding::text() const {
  char buf[160];
  std::snprintf(buf, sizeof buf, "%s %.4g GB/s < %s %.4g GB/s", inner.c_str(), inner_gbs, outer.c_str(), outer_gbs);
  return buf;
}

bool derive_rates(Measurement& m, AccessPattern pattern) {
  // One representation of "unknown" in the row: the source says so and the count is NaN.
  if (m.flops_source == "unknown" || std::isnan(m.flops)) {
    m.flops_source = "unknown";
    m.flops = std::numeric_limits<double>::quiet_NaN();
  }
  if (std::isnan(m.bytes_read) || std::isnan(m.bytes_written)) m.bytes_source = "unknown";
  Work w;
  w.bytes = m.bytes_read + m.bytes_written;  // NaN when either side is unknown
  w.flops = m.flops;
  w.time_us = m.time_us.median;
  w.dtype = m.dtype;
  w.pattern = pattern;
  w.cache = m.cache;
  w.host_waited = m.host_waited;
  const Judgement j = judge(w, roofs_from(m.peaks, m.dtype, m.write_fraction()));
  m.access_pattern = to_string(pattern);
  m.bandwidth_gbs = j.bandwidth_gbs;
  m.gflops = j.gflops;
  m.bandwidth_pct_peak = j.bandwidth_pct_peak;
  m.bandwidth_pct_theoretical = j.bandwidth_pct_theoretical;
  m.compute_pct_peak = j.compute_pct_peak;
  m.intensity_flop_per_byte = j.intensity_flop_per_byte;
  m.attainable_gflops = j.attainable_gflops;
  m.roofline_efficiency_pct = j.roofline_efficiency_pct;
  m.attainable_bandwidth_gbs = j.attainable_bandwidth_gbs;
  m.bandwidth_pct_attainable = j.bandwidth_pct_attainable;
  m.fixed_cost_pct = j.fixed_cost_pct;
  m.above_peak = j.above_peak;
  m.bound = j.bound;
  m.grade = j.grade;
  m.bottleneck = j.bottleneck;
  return j.above_measured_only;
}

std::vector<std::string> Measurement::columns() {
  std::vector<std::string> cols;
  for (auto& kv : Measurement().record()) cols.push_back(kv.first);
  return cols;
}

std::vector<std::pair<std::string, Measurement::Value>> Measurement::record() const {
  using I = std::int64_t;
  const SizeLine curve = peaks.size_curve.line(write_fraction());  // this row's pattern
  const double nan = std::numeric_limits<double>::quiet_NaN();
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
      {"timing", timing},
      {"graph_launches", I(graph_launches)},
      {"rotation_sets", I(rotation_sets)},
      {"stream_hold", stream_hold},
      {"host_waited", host_waited},
      {"time_median_us", time_us.median},
      {"time_min_us", time_us.min},
      {"time_max_us", time_us.max},
      {"time_mean_us", time_us.mean},
      {"time_std_us", time_us.stddev},
      {"time_cv", time_us.cv},
      {"repeats", I(time_us.count)},
      {"warmup", I(warmup)},
      {"unstable", unstable},
      {"target_rel_spread", target_rel_spread},
      {"spread_target_met", spread_target_met},
      {"sm_clock_mhz", sm_clock_mhz},
      {"throttled_samples", I(throttled_samples)},
      {"throttled_retaken", I(throttled_retaken)},
      {"bytes_read", bytes_read},
      {"bytes_written", bytes_written},
      {"flops", flops},
      {"bytes_source", bytes_source},
      {"flops_source", flops_source},
      {"bandwidth_gbs", bandwidth_gbs},
      {"bandwidth_pct_peak", bandwidth_pct_peak},
      {"bandwidth_pct_theoretical", bandwidth_pct_theoretical},
      {"peak_bandwidth_gbs", peaks.bandwidth_gbs},
      {"peak_bandwidth_source", peaks.bandwidth_source},
      {"theoretical_bandwidth_gbs", peaks.bandwidth_theoretical_gbs},
      {"link", peaks.link},
      {"attainable_bandwidth_gbs", attainable_bandwidth_gbs},
      {"bandwidth_pct_attainable", bandwidth_pct_attainable},
      {"fixed_cost_pct", fixed_cost_pct},
      {"size_fixed_cost_us", curve.known() ? curve.t0_us : nan},
      {"size_bandwidth_gbs", curve.known() ? curve.bandwidth_gbs : nan},
      {"gflops", gflops},
      {"compute_pct_peak", compute_pct_peak},
      {"peak_gflops", peaks.gflops},
      {"peak_compute_arithmetic", peaks.compute_arithmetic},
      {"peak_compute_source", peaks.compute_source},
      {"peak_matrix_gflops", peaks.matrix_gflops},
      {"peak_matrix_source", peaks.matrix_source},
      {"peak_l2_gbs", peaks.l2_gbs},
      {"peak_l1_gbs", peaks.l1_gbs},
      {"peak_cache_source", peaks.cache_source},
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
