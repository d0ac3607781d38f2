#include "bwprof/stats.hpp"

#include <algorithm>
#include <cmath>

#include "bwprof/error.hpp"

namespace bwprof {

namespace {

// Mean and sample standard deviation: the one computation behind TimingStats and relative_spread.
void moments(const std::vector<double>& v, double& mean, double& stddev) {
  const std::size_t n = v.size();
  double sum = 0;
  for (double x : v) sum += x;
  mean = n ? sum / n : 0.0;
  double ss = 0;
  for (double x : v) ss += (x - mean) * (x - mean);
  stddev = n > 1 ? std::sqrt(ss / (n - 1)) : 0.0;
}

double cv_of(double mean, double stddev) { return mean > 0 ? stddev / mean : 0.0; }

}  // namespace

TimingStats summarize(std::vector<double> v) {
  if (v.empty()) BWPROF_INVALID("summarize: no samples");
  TimingStats s;
  moments(v, s.mean, s.stddev);  // in the samples' order, as relative_spread sums them
  s.cv = cv_of(s.mean, s.stddev);
  std::sort(v.begin(), v.end());
  s.count = static_cast<int>(v.size());
  std::size_t n = v.size();
  s.median = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  s.min = v.front();
  s.max = v.back();
  return s;
}

double relative_spread(const std::vector<double>& samples) {
  double mean = 0, stddev = 0;
  moments(samples, mean, stddev);
  return cv_of(mean, stddev);
}

bool is_unstable(const TimingStats& s) {
  return s.cv > 0.10 || (s.median > 0 && s.max > 2.0 * s.median);
}

}  // namespace bwprof
