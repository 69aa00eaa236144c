// Summary statistics of per-iteration times.
#pragma once

#include <vector>

namespace fabricmap::core {

struct TimeStats {
  double min = 0, median = 0, mean = 0, max = 0, p95 = 0;
  // Coefficient of variation (stddev / mean), the noise indicator.
  double cv = 0;
};

// Median and p95 interpolate linearly between order statistics (numpy's default), so a
// 20-sample p95 is not just the second-largest sample. Empty input gives all zeros.
TimeStats summarize(std::vector<double> samples);

// The median of the finite values (the mean of the middle two of an even count); NaN when there
// is none. Linear time (nth_element): a report bins millions of cells.
double median(std::vector<double> values);

}  // namespace fabricmap::core
