// The size-aware memory ceiling: how long any kernel that moves B bytes needs on a device. The
// memory ceiling kernels (bwprof's stream kernels) measure it cold from a few KB to past the
// memory's sweet spot; the fastest time at each size is fitted as t(B) = t0 + B / BW, a fixed cost
// (launch, first-byte latency, the tail of the last wave) plus the bytes over the asymptotic
// bandwidth. Kept with the peaks (bwprof/peaks.hpp); every row is judged against it at its bytes.
#pragma once
#include <string>
#include <vector>

namespace bwprof {

struct SizePoint {
  std::string kernel;  // the ceiling kernel that moved these bytes ("stream_copy", ...)
  double bytes = 0;    // read + written
  double time_us = 0;  // median of the cold runs
};

struct SizeCurve {
  std::vector<SizePoint> points;  // every kernel's, in the order measured
  double t0_us = 0;               // the fixed cost
  double bandwidth_gbs = 0;       // asymptotic: 0 when no curve is known
  double residual_pct = 0;        // RMS of (fit - measured) / measured over the fitted points
  int fitted_points = 0;          // the sizes fitted (the fastest kernel at each)

  bool known() const;
  // The fit's time for `bytes` (NaN when no curve is known or bytes <= 0).
  double time_us(double bytes) const;
  // The bandwidth a kernel moving `bytes` can reach: bytes / t(bytes), in GB/s (NaN when unknown).
  double attainable_gbs(double bytes) const;
};

// Fits t(B) = t0 + B / BW to the fastest time at each size of `points` (points within 1 % of each
// other's bytes are one size): least squares on time weighted by 1 / t^2, i.e. on the relative
// error, so that a 4 KB point counts as much as a 1 GB one. A negative t0 is refitted as 0. Fewer
// than two sizes, or no positive slope: an unknown curve (bandwidth 0) that keeps the points.
SizeCurve fit_size_curve(std::vector<SizePoint> points);

}  // namespace bwprof
