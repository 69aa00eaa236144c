// The one peak busbw every view states (`show`, the run's console, the HTML report, `compare`,
// `import`; results/SCHEMA.md "Peak busbw"): nccl-tests' figure as its users read it off the
// table. Out-of-place, because it is the busbw column nccl-tests prints first, the one it checks
// for every collective (never in-place alltoall and sendrecv) and the curve `predict` prices;
// in-place is stated beside it, never mixed in. Per group the largest busbw over the sizes (from
// the mean time: the busbw column nccl-tests and `fabricmap run` print), rows with wrong results
// left out; over a scope's groups, the median. An imported log is one group.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <string_view>
#include <vector>

#include "core/records.h"
#include "core/stats.h"

namespace fabricmap::results {

inline constexpr std::string_view kPeakRule =
    "nccl-tests' figure: per group the highest busbw (from the mean time) over its sizes, out-of-place (in-place on "
    "its own row), wrong rows left out; median over groups";

// A row's busbw may be a peak: a positive figure of a result not known to be wrong.
inline bool countsTowardPeak(const core::CollectiveRecord& r) {
  return !(r.checked && r.wrong > 0) && std::isfinite(r.busbw) && r.busbw > 0;
}

struct BusbwPeak {
  double busbw = std::numeric_limits<double>::quiet_NaN();  // GB/s; NaN: no usable row
  std::uint64_t bytes = 0;  // the size of the peak row when there is one group; 0 with several
  int groups = 0;           // groups with a usable row
};

// Collects rows of one scope, op and placement (the caller chooses them) into the peak.
class BusbwPeakAccumulator {
 public:
  void add(const core::CollectiveRecord& r) {
    if (!countsTowardPeak(r)) return;
    auto [it, added] = best_.try_emplace(r.group, Best{r.busbw, r.bytes});
    if (!added && r.busbw > it->second.busbw) it->second = {r.busbw, r.bytes};
  }
  BusbwPeak peak() const {
    BusbwPeak p;
    p.groups = static_cast<int>(best_.size());
    if (best_.empty()) return p;
    std::vector<double> perGroup;
    for (const auto& [group, b] : best_) perGroup.push_back(b.busbw);
    p.busbw = core::median(std::move(perGroup));
    if (best_.size() == 1) p.bytes = best_.begin()->second.bytes;
    return p;
  }

 private:
  struct Best {
    double busbw;
    std::uint64_t bytes;
  };
  std::map<int, Best> best_;  // per group
};

}  // namespace fabricmap::results
