// The flat result record and the one function that derives every rate from bytes, flops,
// time and the device's peaks.
#pragma once
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "bwprof/size_curve.hpp"
#include "bwprof/stats.hpp"

namespace bwprof {

// 2: timing, clocks and the size-aware ceiling (issue #14); 3: flops_source, FLOPs may be unknown
// (issue #43); 4: target_rel_spread, spread_target_met, throttled_retaken, and
// peak_compute_arithmetic, the arithmetic whose roof judged the row (issue #45)
constexpr int kSchemaVersion = 4;

// How a kernel touches memory; each pattern has an efficiency it can be expected to reach.
enum class AccessPattern { kCoalesced, kStrided, kGather, kBroadcast };

const char* to_string(AccessPattern p);
// Fraction of peak bandwidth a kernel with this pattern can be expected to reach (the seeds'
// figures: coalesced ~ full, strided <= 60 %, gather/random <= 30 %, broadcast served by cache).
double expected_efficiency(AccessPattern p);

// Utilization grade of the seed's bandwidth analysis: excellent >= 80 %, good >= 60 %,
// fair >= 30 %, poor below. NaN -> "n/a".
std::string grade(double pct_of_peak);

// One compute roof of one arithmetic type: measured by bwprof's own kernel and from the
// architecture table. Zero means unknown; source "none" where bwprof measures no such roof.
struct ComputePeak {
  double gflops = 0;              // GFLOP/s (GOP/s for int8)
  double gflops_theoretical = 0;
  std::string source = "none";    // "measured:mma_peak_bf16", "none"
};

// The bandwidth of one cache level, measured by bwprof's own kernel over a working set sized to
// the level, reading only and reading + writing. Zero means not measured (source "none").
struct LevelPeak {
  double read_gbs = 0, rw_gbs = 0;
  double working_set_bytes = 0;   // of the read run, in all
  std::string source = "none";    // "measured:l2_bandwidth", "none"
  double best() const { return read_gbs > rw_gbs ? read_gbs : rw_gbs; }
};

// One pair of memory levels out of order: an inner level ("l1", "shared", "l2") measured slower
// than the level outside it ("l2", "dram").
struct HierarchyFinding {
  std::string inner, outer;
  double inner_gbs = 0, outer_gbs = 0;
  std::string text() const;  // "l1 125 GB/s < l2 284 GB/s"
};

// The peaks a result is judged against. Zero means unknown.
struct Peaks {
  double bandwidth_gbs = 0;              // achievable (measured) memory bandwidth
  double bandwidth_theoretical_gbs = 0;  // from the memory clock and bus width
  double gflops = 0;                     // achievable compute of the arithmetic below
  double gflops_theoretical = 0;
  std::string bandwidth_source;          // "measured:stream_triad", "theoretical", ...
  std::string compute_source;            // "measured:fma_chain_fp64", "theoretical:fp64_vector", "none: ..."
  // Whose roof `gflops` is: an arithmetic type on the vector or matrix units ("fp32 vector",
  // "fp64 vector", "bf16 matrix"; bwprof/roofline.hpp). Empty: peaks made without one (an older or
  // hand-made peaks dict), whose compute roof is then their dtype's vector roof.
  std::string compute_arithmetic;
  std::map<std::string, double> bandwidth_by_kernel;  // GB/s of each measured stream kernel
  // A transfer's roof is its link, not device memory: the link's name ("PCIe 5.0 x16") when
  // bandwidth_gbs is that link's theoretical figure; empty for a kernel.
  std::string link;
  SizeCurve size_curve;  // the size-aware memory ceiling (bwprof/size_curve.hpp)
  // The matrix units' roof for the row's dtype (FP16: FP16 with FP32 accumulation), measured
  // by bwprof's matrix-peak kernel; 0 / "none" where the device has none (the CPU) or the dtype
  // runs on none (FP32).
  double matrix_gflops = 0, matrix_gflops_theoretical = 0;
  std::string matrix_source = "none";
  // The cache levels' roofs: L2, and L1 / shared memory (the faster of the two), GB/s.
  double l2_gbs = 0, l1_gbs = 0;
  std::string cache_source = "none";  // "measured:l2_bandwidth,shared_bandwidth", "none"
  // Every figure the policy holds for the device, whatever the row's dtype: matrix roofs per
  // arithmetic type (fp16, bf16, tf32, fp8, int8), vector roofs (fp32, fp16, fp64), cache
  // levels ("l2", "l1", "shared").
  std::map<std::string, ComputePeak> matrix, vector;
  std::map<std::string, LevelPeak> levels;
  // The memory hierarchy's levels still out of order after a second measurement (bwprof/peaks.hpp:
  // settle_hierarchy); empty when in order.
  std::vector<HierarchyFinding> hierarchy_disorder;
};

struct Measurement {
  // What ran.
  std::string kernel, family, variant, dtype, shape;
  std::vector<std::pair<std::string, std::string>> params;  // the shape's parameters, in order
  std::string device, device_name, backend;
  std::string access_pattern;
  // How it was measured.
  std::string cache;  // "cold" or "hot"
  std::string timing = "single";  // "single" (one launch per timed run) or "graph" (steady state)
  int graph_launches = 1;         // launches per timed run whose time is divided among them
  int rotation_sets = 1;          // input sets launched in turn (graph mode, cold: > 2x the L2)
  // How the timed runs waited for the host to queue the work: "block" (the stream held until it was
  // queued: host time not timed), "spin" (~20 us of busy GPU ahead of the start) or "" (nothing
  // waits: the CPU). host_waited: the work made the host wait on the GPU inside a held run, so it
  // was timed again behind the spin and its time includes the host's work between its launches.
  std::string stream_hold;
  bool host_waited = false;
  int warmup = 0;
  TimingStats time_us;
  bool unstable = false;
  // The spread target the repeats ran to (RunOptions::target_rel_spread; NaN: none) and whether
  // time_us.cv came under it before the budget ran out (true where there was none).
  double target_rel_spread = std::numeric_limits<double>::quiet_NaN();
  bool spread_target_met = true;
  // The SM clock during the timed runs (median of one sample after each; NaN where the runtime
  // does not say); how many kept samples were taken while the GPU throttled (thermal or power),
  // once the re-takes ran out; and how many throttled samples were dropped and timed again.
  double sm_clock_mhz = std::numeric_limits<double>::quiet_NaN();
  int throttled_samples = 0;
  int throttled_retaken = 0;
  // What it moved and computed (minimal traffic: each input read once, each output written once).
  double bytes_read = 0, bytes_written = 0, flops = 0;
  // Where those bytes come from: "declared" (a kernel's traffic formula, or a count the user gave),
  // "inferred" (from the arrays a user's code reads and writes), "mixed" (one of each) or "unknown"
  // (a side bwprof could not find is NaN; the row then has the time only, and no bandwidth).
  std::string bytes_source = "declared";
  // Where the FLOPs come from: "declared" (a kernel's formula, or a count the user gave; 0 is pure
  // data movement), "inferred" (from the framework's ops), "counters" (a profiler's hardware
  // counters) or "unknown" (flops is then NaN, and the row is judged by bandwidth only where
  // bandwidth proves it memory-bound: bwprof/roofline.hpp).
  std::string flops_source = "declared";
  // bytes_written / (bytes_read + bytes_written): the access pattern whose size-curve line judges
  // the row (0: a read; 0.5: a copy; 0 when nothing moves).
  double write_fraction() const {
    const double b = bytes_read + bytes_written;
    return b > 0 ? bytes_written / b : 0.0;
  }
  // Derived by derive_rates().
  double bandwidth_gbs = 0, bandwidth_pct_peak = 0, bandwidth_pct_theoretical = 0;
  double gflops = 0, compute_pct_peak = 0, intensity_flop_per_byte = 0;
  double attainable_gflops = 0, roofline_efficiency_pct = 0;
  // The size-aware memory ceiling at this row's bytes, on the line of its access pattern
  // (write_fraction()): bytes / t(bytes), the row's share of it, and the fixed cost's share of
  // t(bytes) (NaN when the device has no size curve).
  double attainable_bandwidth_gbs = 0, bandwidth_pct_attainable = 0, fixed_cost_pct = 0;
  std::string bound, grade, bottleneck;
  bool above_peak = false;
  Peaks peaks;  // peaks.link: the link a transfer row is judged against
  // Checked against the reference.
  bool verified = false;
  double max_rel_error = 0;
  double tolerance = 0;
  // Resource usage where the runtime reports it (GPU); -1 when unknown.
  int block_size = -1, registers_per_thread = -1, shared_mem_per_block = -1;
  // Theoretical occupancy from those attributes (NaN / empty when unknown).
  double occupancy_pct = 0;
  std::string occupancy_limiter;
  int occupancy_blocks_per_sm = -1;  // bwprof's calculator
  int runtime_blocks_per_sm = -1;    // the runtime's occupancy API, for comparison

  using Value = std::variant<std::string, double, std::int64_t, bool>;
  // The record as (column, value) pairs in the schema's order: the same for C++, CSV, JSON and
  // the DataFrame.
  std::vector<std::pair<std::string, Value>> record() const;
  static std::vector<std::string> columns();
};

// Fills every derived field of `m` from its bytes, flops, median time and peaks. Returns true when
// the row is above a measured peak and no datasheet figure (so the peak may deserve a second look).
bool derive_rates(Measurement& m, AccessPattern pattern);

}  // namespace bwprof
