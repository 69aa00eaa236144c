// Summary statistics (see stats.h).
#include "core/stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace fabricmap::core {
namespace {

double quantile(const std::vector<double>& sorted, double q) {
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  const double frac = pos - static_cast<double>(lo);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

}  // namespace

double median(std::vector<double> values) {
  std::erase_if(values, [](double x) { return !std::isfinite(x); });
  if (values.empty()) return std::nan("");
  const auto mid = values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2);
  std::nth_element(values.begin(), mid, values.end());
  if (values.size() % 2 == 1) return *mid;
  return (*std::max_element(values.begin(), mid) + *mid) / 2;
}

TimeStats summarize(std::vector<double> samples) {
  TimeStats s;
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end());
  const double n = static_cast<double>(samples.size());
  s.min = samples.front();
  s.max = samples.back();
  s.mean = std::accumulate(samples.begin(), samples.end(), 0.0) / n;
  s.median = quantile(samples, 0.5);
  s.p95 = quantile(samples, 0.95);
  double var = 0;
  for (double x : samples) var += (x - s.mean) * (x - s.mean);
  var /= n;
  s.cv = s.mean > 0 ? std::sqrt(var) / s.mean : 0.0;
  return s;
}

}  // namespace fabricmap::core
