// The large-message plateau of a busbw curve (the rule is in plateau.h).
#include "orchestrator/analysis/plateau.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "core/stats.h"

namespace fabricmap::orchestrator {

int firstRankOf(std::string_view ranks) {
  int rank = -1;
  const auto [end, ec] = std::from_chars(ranks.data(), ranks.data() + ranks.size(), rank);
  return ec == std::errc() && end != ranks.data() && rank >= 0 ? rank : -1;
}

std::vector<std::uint64_t> plateauSizes(std::vector<std::uint64_t> sizes) {
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  if (sizes.empty()) return sizes;
  // a quarter of the largest, rounded up so that 3 B is not a plateau of 10 B
  const std::uint64_t floor = sizes.back() / 4 + (sizes.back() % 4 != 0 ? 1 : 0);
  sizes.erase(sizes.begin(), std::lower_bound(sizes.begin(), sizes.end(), floor));
  return sizes;
}

std::optional<Plateau> plateauOf(const std::vector<core::CollectiveRecord>& rows, std::string_view scope,
                                 std::string_view op) {
  std::vector<const core::CollectiveRecord*> usable;
  std::vector<std::uint64_t> sizes;
  for (const core::CollectiveRecord& r : rows) {
    if (r.scope != scope || r.op != op || r.bytes == 0) continue;
    if (r.checked && r.wrong > 0) continue;
    if (!(std::isfinite(r.busbwMedian) && r.busbwMedian > 0)) continue;
    usable.push_back(&r);
    sizes.push_back(r.bytes);
  }
  if (usable.empty()) return std::nullopt;
  const std::vector<std::uint64_t> plateau = plateauSizes(sizes);
  const std::set<std::uint64_t> inPlateau(plateau.begin(), plateau.end());

  Plateau p;
  p.scope = std::string(scope);
  p.op = std::string(op);
  p.fromBytes = plateau.front();
  p.toBytes = plateau.back();
  p.sizes = static_cast<int>(plateau.size());
  std::map<int, std::vector<double>> perGroup;
  std::map<int, const core::CollectiveRecord*> groupRow;
  for (const core::CollectiveRecord* r : usable) {
    p.nranks = std::max(p.nranks, r->nranks);
    if (!inPlateau.count(r->bytes)) continue;
    perGroup[r->group].push_back(r->busbwMedian);
    groupRow.emplace(r->group, r);
  }
  std::vector<double> groupFigures;
  for (const auto& [group, values] : perGroup) {
    GroupPlateau g;
    g.group = group;
    g.ranks = groupRow.at(group)->ranks;
    g.firstRank = firstRankOf(g.ranks);
    g.busbw = core::median(values);
    g.samples = static_cast<int>(values.size());
    groupFigures.push_back(g.busbw);
    p.groups.push_back(std::move(g));
  }
  p.busbw = core::median(groupFigures);
  return p;
}

}  // namespace fabricmap::orchestrator
