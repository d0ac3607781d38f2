// The ONE roofline judgement: given what a kernel did (bytes, FLOPs, time) and the roofs it is
// judged against, the rates as percentages, the attainable performance, the bound, the grade,
// whether the figure is above the device's peak, and the bottleneck in plain words. Every result
// row (derive_rates) and every re-judged DataFrame (Python's roofline.classify) goes through it.
#pragma once
#include <limits>
#include <string>
#include <utility>

#include "bwprof/measurement.hpp"

namespace bwprof {

// Under this share of the attainable roof, neither roof explains the time: "latency-bound".
constexpr double kLatencyEfficiencyPct = 25.0;
// A figure this far above a measured peak cannot be explained by noise in that peak.
constexpr double kAboveMeasuredFactor = 1.10;
// Below this many microseconds, launch and first-byte latency dominate a kernel's time.
constexpr double kShortKernelUs = 20.0;
// A latency-bound row at this share of the size-aware ceiling at its bytes is held back by its
// size (the fixed cost any kernel moving that much pays), not by the kernel.
constexpr double kSizeExplainsPct = 60.0;
// A row that knows only one side of the ridge is bound by that roof from this share of it: a row of
// unknown FLOPs at half the memory roof spends at least half its time moving its bytes at the roof,
// whatever it computes (and a row of unknown bytes at half the compute roof likewise). Below it the
// row may as well be bound by the other roof (a GEMM at 6 % of the memory roof is), so it is not judged.
constexpr double kOneRoofProvesPct = 50.0;

// What one row did. NaN bandwidth/gflops are derived from bytes, flops and time_us.
struct Work {
  double bytes = 0;  // read + written; NaN: unknown (a callable whose arrays bwprof cannot see)
  // FLOPs per call. NaN: unknown (neither declared nor inferred nor counted), which is not 0 (pure
  // data movement, judged by bandwidth): such a row gets a bound only where bandwidth proves one.
  double flops = 0;
  // What the text of a row of unknown FLOPs tells its reader to give; empty: "pass flops=".
  std::string flops_hint;
  double time_us = std::numeric_limits<double>::quiet_NaN();  // median; NaN when unknown
  double bandwidth_gbs = std::numeric_limits<double>::quiet_NaN();
  double gflops = std::numeric_limits<double>::quiet_NaN();
  std::string dtype;   // words for the text
  AccessPattern pattern = AccessPattern::kCoalesced;
  std::string cache;   // "cold", "hot" or "" (unknown): decides what the text advises
  // The work made the host wait on the GPU inside a timed run (Measurement::host_waited): its time
  // includes the host's work between launches, so a low figure is no kernel's cause.
  bool host_waited = false;
};

// The roofs one row is judged against; 0 (or NaN) means unknown.
struct Roofs {
  double bandwidth_gbs = 0;              // the memory roof (measured where possible)
  double bandwidth_theoretical_gbs = 0;  // the datasheet's, for "above the peak"
  double gflops = 0;                     // the compute roof: vector units or matrix units
  double gflops_theoretical = 0;
  std::string compute_name;              // "fp32 vector", "fp16 matrix": words for the text
  // No roof is known for the arithmetic the row does (compute_name): its FLOPs are not judged
  // against another arithmetic's roof; only bandwidth that proves the row memory-bound judges it.
  bool compute_missing = false;
  // A transfer's roof: the link it crosses ("PCIe 5.0 x16"); bandwidth_gbs is then that link's
  // theoretical bandwidth and the row is "link"-bound rather than "memory"-bound.
  std::string link;
  // The size-aware memory ceiling t(B) = size_t0_us + B / size_bandwidth_gbs: the line of the
  // row's access pattern (bwprof/size_curve.hpp, SizeCurve::line); size_bandwidth_gbs 0 (or NaN):
  // none known.
  double size_t0_us = 0;
  double size_bandwidth_gbs = 0;
  // The cache levels' measured bandwidth: a figure above the memory roof is told which level
  // can serve it.
  double l2_gbs = 0, l1_gbs = 0;         // L2; L1 / shared memory (LDS)
};

struct Judgement {
  double bandwidth_gbs = 0, gflops = 0;  // achieved (as given, or derived)
  double bandwidth_pct_peak = 0, bandwidth_pct_theoretical = 0, compute_pct_peak = 0;
  double intensity_flop_per_byte = 0, attainable_gflops = 0, roofline_efficiency_pct = 0;
  // The size-aware ceiling at the row's bytes (NaN without a size curve): bytes / t(bytes), the
  // achieved bandwidth's share of it, and the fixed cost's share of t(bytes).
  double attainable_bandwidth_gbs = 0, bandwidth_pct_attainable = 0, fixed_cost_pct = 0;
  std::string bound, grade, bottleneck;
  bool above_peak = false;
  // Only a measured peak is exceeded (no datasheet figure is): taking the peaks again may settle it.
  bool above_measured_only = false;
};

Judgement judge(const Work& w, const Roofs& r);

// The roofs a measured row of `dtype` is judged against, from its device's peaks: the matrix
// units' roof (theoretical, from the architecture table) for work that runs on them, else the
// vector roof the peaks carry; the size curve's line for a row that writes `write_fraction` of
// the bytes it moves (0: a read, 0.5: a copy).
Roofs roofs_from(const Peaks& p, const std::string& dtype, double write_fraction);
// The arithmetic a row's FLOPs are done in, "<type> <units>": "fp32 vector", "fp64 vector",
// "fp16 vector" (packed HFMA2), "bf16 vector", "fp16 matrix", ... By default (a family that does
// not say otherwise, KernelFamily::arithmetic): its dtype's matrix arithmetic for work on the
// matrix units, else FP32 on the vector units, which is what bwprof's kernels (and frameworks'
// elementwise code) do with FP16 and BF16 data.
std::string default_arithmetic(const std::string& dtype, bool matrix_units);
// Makes `arithmetic`'s roof the compute roof of `p` (gflops, gflops_theoretical, compute_source,
// compute_arithmetic): the one bwprof measured (Peaks::vector / matrix; the peaks' own gflops
// where they name that arithmetic, or name none and it is `dtype`'s vector or matrix roof), else
// the architecture table's ("theoretical:fp64_vector"; BF16 matrix work at FP16's matrix rate,
// `fp16_matrix_theoretical`, where the table has no BF16 figure), else none: gflops 0 and source
// "none: ...". Never another arithmetic's roof. InvalidArgument for a malformed arithmetic.
void use_compute_roof(Peaks& p, const std::string& arithmetic, const std::string& dtype,
                      double fp16_matrix_theoretical = 0);
// The level of the memory hierarchy that can serve `bandwidth_gbs` ("L2", "L1/shared memory"),
// the roof of that level; empty when none of the measured levels can (or none is known).
std::pair<std::string, double> serving_level(double bandwidth_gbs, const Roofs& r);

}  // namespace bwprof
