#include "bwprof/stats.hpp"

#include <algorithm>
#include <cmath>

#include "bwprof/error.hpp"

namespace bwprof {

TimingStats summarize(std::vector<double> v) {
  if (v.empty()) BWPROF_INVALID("summarize: no samples");
  std::sort(v.begin(), v.end());
  TimingStats s;
  s.count = static_cast<int>(v.size());
  std::size_t n = v.size();
  s.median = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  s.min = v.front();
  s.max = v.back();
  double sum = 0;
  for (double x : v) sum += x;
  s.mean = sum / n;
  double ss = 0;
  for (double x : v) ss += (x - s.mean) * (x - s.mean);
  s.stddev = n > 1 ? std::sqrt(ss / (n - 1)) : 0.0;
  s.cv = s.mean > 0 ? s.stddev / s.mean : 0.0;
  return s;
}

bool is_unstable(const TimingStats& s) {
  return s.cv > 0.10 || (s.median > 0 && s.max > 2.0 * s.median);
}

}  // namespace bwprof
