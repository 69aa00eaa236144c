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

}  // namespace fabricmap::core
