#include "bwprof/size_curve.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace bwprof {

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
}

bool SizeCurve::known() const { return bandwidth_gbs > 0 && std::isfinite(bandwidth_gbs) && t0_us >= 0; }

double SizeCurve::time_us(double bytes) const {
  if (!known() || !(bytes > 0)) return kNaN;
  return t0_us + bytes / (bandwidth_gbs * 1e3);  // GB/s = 1e3 bytes per us
}

double SizeCurve::attainable_gbs(double bytes) const {
  const double t = time_us(bytes);
  return std::isnan(t) || t <= 0 ? kNaN : bytes / t / 1e3;
}

SizeCurve fit_size_curve(std::vector<SizePoint> points) {
  SizeCurve c;
  c.points = points;
  // The envelope: the fastest kernel at each size.
  std::vector<SizePoint> pts;
  for (const SizePoint& p : points)
    if (p.bytes > 0 && p.time_us > 0 && std::isfinite(p.bytes) && std::isfinite(p.time_us)) pts.push_back(p);
  std::sort(pts.begin(), pts.end(), [](const SizePoint& a, const SizePoint& b) { return a.bytes < b.bytes; });
  std::vector<SizePoint> env;
  for (const SizePoint& p : pts) {
    if (!env.empty() && p.bytes <= env.back().bytes * 1.01) {
      if (p.time_us < env.back().time_us) env.back() = p;
    } else {
      env.push_back(p);
    }
  }
  if (env.size() < 2) return c;
  // Weighted least squares of t = a + s x with x in MB (well scaled), weights 1 / t^2.
  double S = 0, Sx = 0, Sy = 0, Sxx = 0, Sxy = 0;
  for (const SizePoint& p : env) {
    const double w = 1.0 / (p.time_us * p.time_us), x = p.bytes / 1e6, y = p.time_us;
    S += w, Sx += w * x, Sy += w * y, Sxx += w * x * x, Sxy += w * x * y;
  }
  const double det = S * Sxx - Sx * Sx;
  double s = det > 0 ? (S * Sxy - Sx * Sy) / det : kNaN;
  double a = std::isnan(s) ? kNaN : (Sy - s * Sx) / S;
  if (!(a >= 0)) {  // no negative fixed cost: the best line through the origin
    a = 0;
    s = Sxx > 0 ? Sxy / Sxx : kNaN;
  }
  if (!(s > 0) || !std::isfinite(s)) return c;
  c.t0_us = a;
  // s is microseconds per MB: 1e6 bytes / (s * 1e-6 s) = 1e12 / s bytes/s = 1e3 / s GB/s.
  c.bandwidth_gbs = 1e3 / s;
  double sq = 0;
  for (const SizePoint& p : env) {
    const double r = (c.time_us(p.bytes) - p.time_us) / p.time_us;
    sq += r * r;
  }
  c.residual_pct = 100.0 * std::sqrt(sq / env.size());
  c.fitted_points = static_cast<int>(env.size());
  return c;
}

}  // namespace bwprof
