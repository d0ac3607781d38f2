#include "bwprof/roofline.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "bwprof/error.hpp"

namespace bwprof {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

bool known(double v) { return v > 0 && std::isfinite(v); }

// A run whose time includes the host's work: what its figures are, instead of a kernel's cause.
constexpr const char* kHostWaitedText =
    "the call made the host wait on the GPU inside it (a synchronization, .item(), a copy to the host), so it "
    "was timed behind the spin and its time includes the host's work between its launches: the GPU may "
    "have idled";
double pct(double value, double peak) { return known(peak) ? 100.0 * value / peak : kNaN; }

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

std::string rate(double v, const char* unit) {
  if (v >= 1e3) return fmt("%.4g T", v / 1e3) + unit;
  return fmt("%.4g G", v) + unit;
}

// Which figure is above which peak, and what that means for this row.
std::string above_text(const Work& w, const Roofs& r, double bw, double fl, bool bw_above) {
  if (bw_above && !r.link.empty())
    return rate(bw, "B/s") + " is above the " + r.link + " link's theoretical bandwidth (" +
           rate(r.bandwidth_gbs, "B/s") + " each way): the data did not cross that link (a peer reached "
           "over another link, or a link read wrong)";
  if (bw_above) {
    const bool theo = known(r.bandwidth_theoretical_gbs) && bw > r.bandwidth_theoretical_gbs;
    // Which level of the hierarchy can serve this figure, where bwprof measured the levels.
    std::string lead;
    const auto level = serving_level(bw, r);
    if (!level.first.empty()) {
      lead = "above DRAM: " + level.first + " can serve it (" + level.first + " roof " + rate(level.second, "B/s") + "); ";
    } else if (known(r.l2_gbs) || known(r.l1_gbs)) {
      const double top = std::max(known(r.l2_gbs) ? r.l2_gbs : 0.0, known(r.l1_gbs) ? r.l1_gbs : 0.0);
      lead = "above every measured memory roof (the fastest, " + std::string(top == r.l1_gbs ? "L1/shared memory" : "L2") +
             ", " + rate(top, "B/s") + "): the declared bytes overstate the traffic, or the time is wrong; ";
    }
    std::string t = lead + rate(bw, "B/s") + " is above the device's " +
                    (theo ? "theoretical memory bandwidth (" + rate(r.bandwidth_theoretical_gbs, "B/s") + ")"
                          : "measured peak bandwidth (" + rate(r.bandwidth_gbs, "B/s") + ")") +
                    ": the data stayed in cache, so this is not a DRAM figure";
    if (w.cache == "hot") return t + "; measure with cache='cold'";
    if (w.cache == "cold")
      return t + " even though the caches were flushed before each run (a working set a cache holds "
                 "during the run, or a peak measured during a slow patch: bwprof.peaks(refresh=True))";
    return t;
  }
  const std::string roof = r.compute_name.empty() ? std::string("compute") : r.compute_name;
  if (known(r.gflops_theoretical) && fl > r.gflops_theoretical)
    return rate(fl, "FLOP/s") + " is above the datasheet's " + roof + " roof (" + rate(r.gflops_theoretical, "FLOP/s") +
           "): the declared FLOPs overstate the work, or the time is wrong";
  return rate(fl, "FLOP/s") + " is above the measured " + roof + " roof (" + rate(r.gflops, "FLOP/s") +
         "): the work ran on faster units than that roof describes, or the roof was measured during a slow "
         "patch (bwprof.peaks(refresh=True))";
}

}  // namespace

Judgement judge(const Work& w, const Roofs& r) {
  Judgement j;
  const double t_s = w.time_us * 1e-6;
  // Unknown FLOPs leave every compute figure unknown; a link's transfer moves data only.
  const bool link = !r.link.empty();
  const bool flops_known = !std::isnan(w.flops) || link;
  const bool bytes_known = !std::isnan(w.bytes);
  j.bandwidth_gbs = std::isnan(w.bandwidth_gbs) ? (t_s > 0 ? w.bytes / t_s / 1e9 : kNaN) : w.bandwidth_gbs;
  j.gflops = !flops_known ? kNaN : std::isnan(w.gflops) ? (t_s > 0 ? w.flops / t_s / 1e9 : kNaN) : w.gflops;
  j.bandwidth_pct_peak = pct(j.bandwidth_gbs, r.bandwidth_gbs);
  j.bandwidth_pct_theoretical = pct(j.bandwidth_gbs, r.bandwidth_theoretical_gbs);
  j.compute_pct_peak = w.flops > 0 ? pct(j.gflops, r.gflops) : kNaN;
  j.intensity_flop_per_byte = w.bytes > 0 && flops_known ? w.flops / w.bytes : kNaN;

  // The size-aware ceiling: what any kernel moving this many bytes reaches on the device.
  SizeLine curve;
  curve.t0_us = r.size_t0_us;
  curve.bandwidth_gbs = r.size_bandwidth_gbs;
  const bool sized = curve.known() && w.bytes > 0;
  j.attainable_bandwidth_gbs = sized ? curve.attainable_gbs(w.bytes) : kNaN;
  j.bandwidth_pct_attainable = sized ? pct(j.bandwidth_gbs, j.attainable_bandwidth_gbs) : kNaN;
  j.fixed_cost_pct = sized ? 100.0 * curve.t0_us / curve.time_us(w.bytes) : kNaN;

  // Roofline: attainable = min(compute roof, intensity x bandwidth roof).
  bool memory_side = true;
  if (w.flops > 0 && w.bytes > 0 && known(r.bandwidth_gbs) && known(r.gflops)) {
    const double mem_roof = j.intensity_flop_per_byte * r.bandwidth_gbs;
    memory_side = mem_roof < r.gflops;
    j.attainable_gflops = std::min(r.gflops, mem_roof);
    j.roofline_efficiency_pct = pct(j.gflops, j.attainable_gflops);
  } else if (w.flops > 0 && w.bytes == 0 && known(r.gflops)) {
    memory_side = false;
    j.attainable_gflops = r.gflops;
    j.roofline_efficiency_pct = j.compute_pct_peak;
  } else if (!bytes_known) {
    // Only the compute side can be known: it judges the row where it proves it compute-bound.
    memory_side = false;
    j.attainable_gflops = kNaN;
    j.roofline_efficiency_pct = j.compute_pct_peak >= kOneRoofProvesPct ? j.compute_pct_peak : kNaN;
  } else if (!flops_known) {
    // Neither side of the ridge is known: bandwidth judges the row only where it proves it
    // memory-bound, and the efficiency against the memory roof is then the bandwidth's share of it.
    j.attainable_gflops = kNaN;
    j.roofline_efficiency_pct = j.bandwidth_pct_peak >= kOneRoofProvesPct ? j.bandwidth_pct_peak : kNaN;
  } else if (r.compute_missing && w.flops > 0) {
    // No roof for the arithmetic it does: bandwidth judges the row only where it proves it
    // memory-bound (as for unknown FLOPs); its FLOPs are never judged against another roof.
    j.attainable_gflops = kNaN;
    j.roofline_efficiency_pct = w.bytes > 0 && j.bandwidth_pct_peak >= kOneRoofProvesPct ? j.bandwidth_pct_peak : kNaN;
  } else {
    // Pure data movement (or no compute roof): the bandwidth roof alone judges it.
    j.attainable_gflops = kNaN;
    j.roofline_efficiency_pct = j.bandwidth_pct_peak;
  }

  // Above the peak: beyond the datasheet, or clearly beyond the measured peak (whether or not a
  // datasheet figure is known: a peak measured during a slow patch must not make a kernel
  // "excellent" at twice its roof).
  const bool bw_above = (known(r.bandwidth_theoretical_gbs) && j.bandwidth_gbs > r.bandwidth_theoretical_gbs) ||
                        (known(r.bandwidth_gbs) && j.bandwidth_gbs > kAboveMeasuredFactor * r.bandwidth_gbs);
  const bool fl_above = w.flops > 0 &&
                        ((known(r.gflops_theoretical) && j.gflops > r.gflops_theoretical) ||
                         (known(r.gflops) && j.gflops > kAboveMeasuredFactor * r.gflops));
  j.above_peak = bw_above || fl_above;
  j.above_measured_only = j.above_peak &&
                          !(known(r.bandwidth_theoretical_gbs) && j.bandwidth_gbs > r.bandwidth_theoretical_gbs) &&
                          !(w.flops > 0 && known(r.gflops_theoretical) && j.gflops > r.gflops_theoretical);

  const double eff = j.roofline_efficiency_pct;
  // FLOPs unknown, a peak known, and bandwidth short of proving the row memory-bound.
  const bool flops_unjudged = !flops_known && !std::isnan(j.bandwidth_pct_peak) && std::isnan(eff);
  const bool bytes_unjudged = !bytes_known && std::isnan(eff);
  const bool roof_missing = r.compute_missing && w.flops > 0 && flops_known && bytes_known;
  if (std::isnan(eff)) {
    j.bound = "unknown";
  } else if (eff < kLatencyEfficiencyPct) {
    j.bound = "latency";
  } else {
    j.bound = link ? "link" : memory_side ? "memory" : "compute";
  }
  // A figure above the peak has no utilization to grade: the roof does not describe it.
  j.grade = j.above_peak ? grade(kNaN)
                         : grade(j.bound == "compute"                      ? j.compute_pct_peak
                                 : j.bound == "memory" || j.bound == "link" ? j.bandwidth_pct_peak
                                                                            : eff);

  // One line in plain words, true of this row.
  const std::string compute = r.compute_name.empty() ? w.dtype + " compute" : r.compute_name;
  // "at 94 % of what any kernel moving 33.5 MB reaches on this device; the fixed cost is 28 % of the time"
  const bool size_known = !std::isnan(j.bandwidth_pct_attainable);
  const std::string size_text =
      size_known ? fmt("at %.0f %% of what any kernel moving ", j.bandwidth_pct_attainable) + human_bytes(w.bytes) +
                       " reaches on this device; the fixed cost is " + fmt("%.0f %% of the time", j.fixed_cost_pct)
                 : std::string();
  std::string text;
  if (j.above_peak) {
    text = above_text(w, r, j.bandwidth_gbs, j.gflops, bw_above);
  } else if (flops_unjudged) {
    // "FLOPs unknown: at 6.1 % of the memory roof, bandwidth does not explain the time; pass flops= ..."
    text = "FLOPs unknown: " + fmt("at %.1f %% of the memory roof", j.bandwidth_pct_peak);
    if (size_known && j.bandwidth_pct_attainable >= kSizeExplainsPct)
      text += " but " + size_text + ", its size may set the time";
    else
      text += std::string(size_known ? " (" + size_text + ")" : std::string()) +
              ", bandwidth does not explain the time";
    text += "; " + (w.flops_hint.empty() ? std::string("pass flops=") : w.flops_hint) +
            " to judge it against the compute roof";
  } else if (bytes_unjudged) {
    // "bytes unknown: at 12.0 % of the fp32 vector roof, compute does not explain the time; pass ..."
    const bool compute_known = flops_known && w.flops > 0 && !std::isnan(j.compute_pct_peak);
    text = std::string(flops_known ? "bytes unknown: " : "bytes and FLOPs unknown: ") +
           (compute_known ? fmt("at %.1f %% of the ", j.compute_pct_peak) + compute +
                                " roof, compute does not explain the time"
                          : fmt("only the time (%.4g us) is measured", w.time_us)) +
           "; pass bytes_read= and bytes_written=" + (flops_known ? "" : " (and flops=)") +
           " to judge it against the roofs";
  } else if (roof_missing && std::isnan(eff)) {
    // "no fp64 vector roof is measured or known for this device: ..."
    text = "no " + compute + " roof is measured or known for this device: its FLOPs are judged against no "
           "other arithmetic's roof" +
           (w.bytes > 0 && !std::isnan(j.bandwidth_pct_peak)
                ? fmt("; at %.1f %% of the memory roof", j.bandwidth_pct_peak) +
                      ", bandwidth does not explain the time"
                : std::string()) +
           "; only the rates are reported";
  } else if (j.bound == "unknown" && link) {
    text = "bound by its link (" + r.link + "), whose bandwidth is not known here: only the rates are reported";
  } else if (j.bound == "unknown") {
    text = "no peak is known for this device, so only the rates are reported";
  } else if (link && j.bound == "latency") {
    text = "latency-bound: " + fmt("%.1f %% of the ", j.bandwidth_pct_peak) + r.link + " link's bandwidth; " +
           human_bytes(w.bytes) + " in " + fmt("%.3g us", w.time_us) +
           (w.time_us < kShortKernelUs ? ", too little to hide the transfer's set-up latency"
                                       : ": the copy waits on the host (pageable memory is staged through a "
                                         "pinned buffer by the CPU) or on synchronization, not on the link");
  } else if (j.bound == "link") {
    text = "link-bound at " + fmt("%.0f %% of the ", j.bandwidth_pct_peak) + r.link + " link (" +
           rate(r.bandwidth_gbs, "B/s") + " each way, theoretical) (" + j.grade + ")";
  } else if (j.bound == "latency") {
    text = "latency-bound: " + fmt("%.1f %% of the memory roof", j.bandwidth_pct_peak);
    if (w.flops > 0 && !std::isnan(j.compute_pct_peak))
      text += " and " + fmt("%.1f %% of the ", j.compute_pct_peak) + compute + " roof";
    if (size_known) text += "; " + size_text;
    if (size_known && j.bandwidth_pct_attainable >= kSizeExplainsPct) {
      text += ": its size, not the kernel, sets the time; more work per launch (batching, fusion, a graph of "
              "launches) is what helps";
    } else if (w.host_waited) {
      text += "; " + std::string(kHostWaitedText);
    } else if (w.time_us < kShortKernelUs) {
      text += "; only " + human_bytes(w.bytes) + " in " + fmt("%.3g us", w.time_us) +
              ", too little work to hide launch and memory latency";
    } else {
      text += "; neither roof explains the time: the kernel waits on dependencies, instruction overhead "
              "(conversions, transcendentals), synchronization or too few threads in flight (occupancy)";
    }
  } else if (j.bound == "memory") {
    const double exp_pct = 100.0 * expected_efficiency(w.pattern);
    const bool full = w.pattern == AccessPattern::kCoalesced || w.pattern == AccessPattern::kBroadcast;
    text = "memory-bound at " + fmt("%.0f %% of peak bandwidth", j.bandwidth_pct_peak) + " (" + j.grade + ")" +
           (flops_known ? "" : ", whatever its FLOPs (not known)") + "; " +
           (size_known ? size_text + "; " : std::string()) + to_string(w.pattern) + " access: expect " +
           (full ? "up to " : "\u2264 ") + fmt("%.0f %%", exp_pct) +
           (roof_missing ? "; no " + compute + " roof is known, so its FLOPs are not judged" : std::string());
  } else {
    text = "compute-bound at " + fmt("%.0f %% of the ", j.compute_pct_peak) + compute + " roof (" + j.grade + ")" +
           (bytes_known ? "" : ", whatever its bytes (not known)");
  }
  // Every other text holds for the figures; they are the host's as much as the GPU's.
  if (w.host_waited && !j.above_peak && j.bound != "latency") text += "; " + std::string(kHostWaitedText);
  j.bottleneck = text;
  return j;
}

Roofs roofs_from(const Peaks& p, const std::string& dtype, double write_fraction) {
  Roofs r;
  r.bandwidth_gbs = p.bandwidth_gbs;
  r.bandwidth_theoretical_gbs = p.bandwidth_theoretical_gbs;
  r.gflops = p.gflops;
  r.gflops_theoretical = p.gflops_theoretical;
  r.link = p.link;
  r.compute_name = p.compute_arithmetic.empty() ? dtype + " vector" : p.compute_arithmetic;
  const SizeLine line = p.size_curve.line(write_fraction);
  if (line.known()) {
    r.size_t0_us = line.t0_us;
    r.size_bandwidth_gbs = line.bandwidth_gbs;
  }
  r.l2_gbs = p.l2_gbs;
  r.l1_gbs = p.l1_gbs;
  if (p.compute_source.rfind("theoretical", 0) == 0) r.compute_name += " (theoretical)";
  r.compute_missing = p.compute_source.rfind("none", 0) == 0 && !known(p.gflops) && p.link.empty();
  return r;
}

std::string default_arithmetic(const std::string& dtype, bool matrix_units) {
  return matrix_units ? dtype + " matrix" : std::string("fp32 vector");
}

void use_compute_roof(Peaks& p, const std::string& arithmetic, const std::string& dtype,
                      double fp16_matrix_theoretical) {
  const auto space = arithmetic.find(' ');
  const std::string type = arithmetic.substr(0, space);
  const std::string units = space == std::string::npos ? "" : arithmetic.substr(space + 1);
  if (type.empty() || (units != "vector" && units != "matrix"))
    throw InvalidArgument("arithmetic: '" + arithmetic + "' is not '<type> vector' or '<type> matrix'");
  const bool matrix = units == "matrix";
  const auto& table = matrix ? p.matrix : p.vector;
  const auto it = table.find(type);
  const ComputePeak c = it != table.end() ? it->second : ComputePeak{};
  double theoretical = c.gflops_theoretical;
  if (matrix && !known(theoretical) && (type == "fp16" || type == "bf16")) theoretical = fp16_matrix_theoretical;
  // The peaks' own compute roof is this arithmetic's where they say so, or say nothing and it is
  // their dtype's vector roof (an older or hand-made peaks dict).
  const bool own = known(p.gflops) && !matrix &&
                   (p.compute_arithmetic == arithmetic || (p.compute_arithmetic.empty() && type == dtype));
  const std::string suffix = matrix ? " (matrix units)" : "";
  if (own) {
    if (!known(p.gflops_theoretical)) p.gflops_theoretical = theoretical;
  } else if (known(c.gflops)) {
    p.gflops = c.gflops;
    p.gflops_theoretical = theoretical;
    p.compute_source = c.source + suffix;
  } else if (matrix && type == dtype && known(p.matrix_gflops)) {  // the dtype's matrix roof the peaks carry
    p.gflops = p.matrix_gflops;
    p.gflops_theoretical = known(p.matrix_gflops_theoretical) ? p.matrix_gflops_theoretical : theoretical;
    p.compute_source = p.matrix_source + suffix;
  } else if (known(theoretical)) {
    p.gflops = p.gflops_theoretical = theoretical;
    p.compute_source = "theoretical:" + type + (matrix ? "_matrix_units" : "_vector");
  } else {
    p.gflops = p.gflops_theoretical = 0;
    p.compute_source = "none: no " + arithmetic + " roof is measured or known for this device";
  }
  p.compute_arithmetic = arithmetic;
}

std::pair<std::string, double> serving_level(double bw, const Roofs& r) {
  if (!(bw > 0)) return {};
  // The same tolerance as "above the peak": 10 % over a measured roof is noise in that roof.
  if (known(r.l2_gbs) && bw <= kAboveMeasuredFactor * r.l2_gbs) return {"L2", r.l2_gbs};
  if (known(r.l1_gbs) && bw <= kAboveMeasuredFactor * r.l1_gbs) return {"L1/shared memory", r.l1_gbs};
  return {};
}

}  // namespace bwprof
