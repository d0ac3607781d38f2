// Summary statistics of repeated timings.
#pragma once
#include <vector>

namespace bwprof {

struct TimingStats {
  double median = 0, min = 0, max = 0, mean = 0, stddev = 0;
  double cv = 0;  // coefficient of variation: stddev / mean
  int count = 0;
};

// Median, min, max, mean, sample standard deviation and CV of `samples` (any unit).
// Throws InvalidArgument on an empty input.
TimingStats summarize(std::vector<double> samples);

// A run is unstable when its spread is large: CV above 10 % or max above twice the median.
bool is_unstable(const TimingStats& s);

// The relative spread of timing samples: their CV (sample standard deviation / mean), the row's
// time_cv, and what RunOptions::target_rel_spread bounds (nvbench's stdrel "noise"). 0 for fewer
// than two samples or a mean that is not > 0.
double relative_spread(const std::vector<double>& samples);

}  // namespace bwprof
