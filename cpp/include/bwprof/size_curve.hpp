// The size-aware memory ceiling: how long a kernel that moves B bytes needs on a device, per access
// pattern. The memory ceiling kernels that name a size parameter (bwprof's clean read, stream_read,
// and stream_copy) are measured cold from a few KB to past the memory's sweet spot; each pattern's
// fastest time at each size is fitted as a line t(B) = t0 + B / BW, a fixed cost (launch, first-byte
// latency, the tail of the last wave) plus the bytes over the asymptotic bandwidth.
//
// Why per pattern: one line through every kernel's fastest point mixed a read with a copy whose
// writes, up to about the L2's size, can end in the cache before the kernel does: on the H100 the
// copy then beat that line between 16 and 67 MB while the read (then the dot product) fell far
// behind it, so the line promised a GEMV (a read) a time that no read reached. A kernel is judged
// against the line of its own mix of reads and writes (SizeCurve::line): the read line for a GEMV,
// the copy line for a copy.
// Kept with the peaks (bwprof/peaks.hpp); every row is judged against it at its bytes.
#pragma once
#include <string>
#include <vector>

namespace bwprof {

struct SizePoint {
  std::string kernel;         // the ceiling kernel that moved these bytes ("stream_copy", ...)
  double bytes = 0;           // read + written
  double time_us = 0;         // median of the cold runs
  double write_fraction = 0;  // bytes written / bytes: 0 for a read, 0.5 for a copy
};

// One access pattern's line t(B) = t0 + B / BW.
struct SizeLine {
  std::string pattern;        // "read", "copy", or "write 33 %": from the write fraction
  std::string kernels;        // the ceiling kernels fitted ("stream_read")
  double write_fraction = 0;  // of the pattern's kernels
  double t0_us = 0;           // the fixed cost
  double bandwidth_gbs = 0;   // asymptotic: 0 when no line is known
  double residual_pct = 0;    // RMS of (fit - measured) / measured over the fitted points
  double max_error_pct = 0;   // the largest |fit - measured| / measured of them: what the RMS can hide
  int fitted_points = 0;      // the sizes fitted (the fastest kernel of the pattern at each)

  bool known() const;
  // The line's time for `bytes` (NaN when unknown or bytes <= 0).
  double time_us(double bytes) const;
  // The bandwidth a kernel moving `bytes` can reach: bytes / t(bytes), in GB/s (NaN when unknown).
  double attainable_gbs(double bytes) const;
};

struct SizeCurve {
  std::vector<SizePoint> points;  // every kernel's, in the order measured
  std::vector<SizeLine> lines;    // the known lines, by write fraction (the read first)

  bool known() const { return !lines.empty(); }
  // The line a kernel that writes `write_fraction` of its bytes is judged against: between two
  // patterns, t0 and 1 / BW interpolated linearly in the write fraction (a kernel writing a third
  // of its bytes sits two thirds of the way from the read line to the copy line); beyond the
  // outermost patterns, the nearest one. Unknown (bandwidth 0) without lines.
  SizeLine line(double write_fraction) const;
  // The worst line's RMS residual and the worst point's error over all lines (NaN without lines).
  double residual_pct() const;
  double max_error_pct() const;
  int fitted_points() const;  // over all lines
};

// "read" (write fraction 0), "copy" (1/2), "write" (1), else "write NN %".
std::string size_pattern_name(double write_fraction);

// One line through `points` (all of one pattern): the fastest time at each size (points within
// 1 % of each other's bytes are one size), least squares on time weighted by 1 / t^2, i.e. on the
// relative error, so that a 4 KB point counts as much as a 1 GB one. A negative t0 is refitted as
// 0. Fewer than two sizes, or no positive slope: an unknown line (bandwidth 0).
SizeLine fit_size_line(const std::vector<SizePoint>& points);

// The device's curve: the points grouped by pattern (write fractions within 0.01 are one pattern),
// one line each. Every point is kept; lines that cannot be fitted are left out.
SizeCurve fit_size_curve(std::vector<SizePoint> points);

}  // namespace bwprof
