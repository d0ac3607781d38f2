#include "bwprof/size_curve.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace bwprof {

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kSamePattern = 0.01;  // write fractions this close are one pattern

bool finite_positive(double x) { return x > 0 && std::isfinite(x); }
}  // namespace

bool SizeLine::known() const { return bandwidth_gbs > 0 && std::isfinite(bandwidth_gbs) && t0_us >= 0; }

double SizeLine::time_us(double bytes) const {
  if (!known() || !(bytes > 0)) return kNaN;
  return t0_us + bytes / (bandwidth_gbs * 1e3);  // GB/s = 1e3 bytes per us
}

double SizeLine::attainable_gbs(double bytes) const {
  const double t = time_us(bytes);
  return std::isnan(t) || t <= 0 ? kNaN : bytes / t / 1e3;
}

std::string size_pattern_name(double w) {
  if (std::fabs(w) < kSamePattern) return "read";
  if (std::fabs(w - 0.5) < kSamePattern) return "copy";
  if (std::fabs(w - 1.0) < kSamePattern) return "write";
  char buf[32];
  std::snprintf(buf, sizeof buf, "write %.0f %%", 100 * w);
  return buf;
}

SizeLine SizeCurve::line(double w) const {
  if (lines.empty()) return SizeLine{};
  if (!(w >= lines.front().write_fraction)) return lines.front();  // NaN too: the read
  if (w >= lines.back().write_fraction) return lines.back();
  std::size_t i = 1;
  while (lines[i].write_fraction < w) ++i;
  const SizeLine& a = lines[i - 1];
  const SizeLine& b = lines[i];
  const double span = b.write_fraction - a.write_fraction;
  if (!(span > 0)) return a;
  const double f = (w - a.write_fraction) / span;
  SizeLine out;
  out.pattern = size_pattern_name(w);
  out.kernels = a.kernels + " / " + b.kernels;
  out.write_fraction = w;
  out.t0_us = a.t0_us + f * (b.t0_us - a.t0_us);
  // The time per byte is what interpolates linearly, not the bandwidth.
  out.bandwidth_gbs = 1.0 / ((1 - f) / a.bandwidth_gbs + f / b.bandwidth_gbs);
  out.residual_pct = std::max(a.residual_pct, b.residual_pct);
  out.max_error_pct = std::max(a.max_error_pct, b.max_error_pct);
  return out;
}

double SizeCurve::residual_pct() const {
  double r = kNaN;
  for (const SizeLine& l : lines) r = std::isnan(r) ? l.residual_pct : std::max(r, l.residual_pct);
  return r;
}

double SizeCurve::max_error_pct() const {
  double r = kNaN;
  for (const SizeLine& l : lines) r = std::isnan(r) ? l.max_error_pct : std::max(r, l.max_error_pct);
  return r;
}

int SizeCurve::fitted_points() const {
  int n = 0;
  for (const SizeLine& l : lines) n += l.fitted_points;
  return n;
}

SizeLine fit_size_line(const std::vector<SizePoint>& points) {
  SizeLine c;
  // The envelope: the fastest kernel at each size.
  std::vector<SizePoint> pts;
  for (const SizePoint& p : points)
    if (finite_positive(p.bytes) && finite_positive(p.time_us)) pts.push_back(p);
  std::sort(pts.begin(), pts.end(), [](const SizePoint& a, const SizePoint& b) { return a.bytes < b.bytes; });
  std::vector<SizePoint> env;
  for (const SizePoint& p : pts) {
    if (!env.empty() && p.bytes <= env.back().bytes * 1.01) {
      if (p.time_us < env.back().time_us) env.back() = p;
    } else {
      env.push_back(p);
    }
  }
  // The kernels fitted, in the order first met, and their write fraction.
  double wsum = 0;
  for (const SizePoint& p : env) {
    wsum += p.write_fraction;
    if (("," + c.kernels + ",").find("," + p.kernel + ",") == std::string::npos)
      c.kernels += (c.kernels.empty() ? "" : ",") + p.kernel;
  }
  c.write_fraction = env.empty() ? 0 : wsum / env.size();
  c.pattern = size_pattern_name(c.write_fraction);
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
  double sq = 0, worst = 0;
  for (const SizePoint& p : env) {
    const double r = (c.time_us(p.bytes) - p.time_us) / p.time_us;
    sq += r * r;
    worst = std::max(worst, std::fabs(r));
  }
  c.residual_pct = 100.0 * std::sqrt(sq / env.size());
  c.max_error_pct = 100.0 * worst;
  c.fitted_points = static_cast<int>(env.size());
  return c;
}

SizeCurve fit_size_curve(std::vector<SizePoint> points) {
  SizeCurve c;
  c.points = points;
  // Patterns: write fractions in increasing order, each gathering the points within kSamePattern.
  std::vector<SizePoint> pts;
  for (const SizePoint& p : points)
    if (std::isfinite(p.write_fraction)) pts.push_back(p);
  std::stable_sort(pts.begin(), pts.end(),
                   [](const SizePoint& a, const SizePoint& b) { return a.write_fraction < b.write_fraction; });
  for (std::size_t i = 0; i < pts.size();) {
    std::size_t j = i;
    while (j < pts.size() && pts[j].write_fraction - pts[i].write_fraction < kSamePattern) ++j;
    SizeLine l = fit_size_line(std::vector<SizePoint>(pts.begin() + i, pts.begin() + j));
    if (l.known()) c.lines.push_back(l);
    i = j;
  }
  return c;
}

}  // namespace bwprof
