// Parallel layouts (see layout.h).
#include "core/layout.h"

#include <charconv>
#include <set>

#include <fmt/format.h>

#include "core/error.h"

namespace fabricmap::core {

Layout parseLayout(std::string_view text) {
  const auto bad = [&](const std::string& why) {
    return UsageError(fmt::format("invalid --layout '{}': {} (expected tp=T,pp=P,dp=D[,ep=E])", text, why));
  };
  Layout layout;
  std::set<std::string> seen;
  std::size_t from = 0;
  while (from <= text.size()) {
    const std::size_t comma = std::min(text.find(',', from), text.size());
    const std::string_view item = text.substr(from, comma - from);
    from = comma + 1;
    if (item.empty()) throw bad("an empty item");
    const std::size_t eq = item.find('=');
    if (eq == std::string_view::npos) throw bad(fmt::format("'{}' is not key=value", item));
    const std::string key(item.substr(0, eq));
    const std::string_view value = item.substr(eq + 1);
    int n = 0;
    const auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
    if (ec != std::errc() || ptr != value.data() + value.size() || n < 1) {
      throw bad(fmt::format("{} must be a positive integer, got '{}'", key, value));
    }
    if (!seen.insert(key).second) throw bad(key + " given twice");
    if (key == "tp") layout.tp = n;
    else if (key == "pp") layout.pp = n;
    else if (key == "dp") layout.dp = n;
    else if (key == "ep") layout.ep = n;
    else throw bad(fmt::format("unknown key '{}' (tp, pp, dp, ep)", key));
    if (comma == text.size()) break;
  }
  return layout;
}

std::string formatLayout(const Layout& l) { return fmt::format("tp={},pp={},dp={},ep={}", l.tp, l.pp, l.dp, l.ep); }

std::string layoutProblem(const Layout& l, int worldSize) {
  if (static_cast<long long>(l.tp) * l.pp * l.dp != worldSize) {
    return fmt::format("tp x pp x dp = {} x {} x {} = {}, but the job has {} ranks", l.tp, l.pp, l.dp,
                       static_cast<long long>(l.tp) * l.pp * l.dp, worldSize);
  }
  if (l.dp % l.ep != 0) return fmt::format("ep={} does not divide dp={} (expert groups split the DP groups)", l.ep, l.dp);
  return {};
}

LayoutPlace placeOf(const Layout& l, int rank) {
  LayoutPlace p;
  p.rank = rank;
  p.tpIndex = rank % l.tp;
  p.ppIndex = (rank / l.tp) % l.pp;
  p.dpIndex = rank / (l.tp * l.pp);
  p.epIndex = p.dpIndex % l.ep;
  p.tpGroup = p.dpIndex * l.pp + p.ppIndex;  // one per (dp, pp)
  p.ppGroup = p.dpIndex * l.tp + p.tpIndex;  // one per (dp, tp)
  p.dpGroup = p.ppIndex * l.tp + p.tpIndex;  // one per (pp, tp)
  p.epGroup = p.dpGroup * (l.dp / l.ep) + p.dpIndex / l.ep;
  return p;
}

std::string_view name(Parallelism p) {
  switch (p) {
    case Parallelism::kTensor: return "tp";
    case Parallelism::kPipeline: return "pp";
    case Parallelism::kData: return "dp";
    case Parallelism::kExpert: return "ep";
  }
  return "?";
}

std::vector<std::vector<int>> groupsOf(const Layout& l, Parallelism kind) {
  const int world = l.worldSize();
  const int count = kind == Parallelism::kTensor     ? l.dp * l.pp
                    : kind == Parallelism::kPipeline ? l.dp * l.tp
                    : kind == Parallelism::kData     ? l.pp * l.tp
                                                     : l.pp * l.tp * (l.dp / l.ep);
  std::vector<std::vector<int>> groups(static_cast<std::size_t>(count));
  for (int r = 0; r < world; ++r) {  // in rank order: each group's members ascend
    const LayoutPlace p = placeOf(l, r);
    const int g = kind == Parallelism::kTensor     ? p.tpGroup
                  : kind == Parallelism::kPipeline ? p.ppGroup
                  : kind == Parallelism::kData     ? p.dpGroup
                                                   : p.epGroup;
    groups[static_cast<std::size_t>(g)].push_back(r);
  }
  return groups;
}

std::vector<int> tpGroupsCrossingNodes(const Layout& l, const Topology& topology) {
  std::vector<int> crossing;
  const auto groups = groupsOf(l, Parallelism::kTensor);
  for (std::size_t g = 0; g < groups.size(); ++g) {
    std::set<int> nodes;
    for (int r : groups[g]) {
      if (static_cast<std::size_t>(r) < topology.ranks.size()) nodes.insert(topology.ranks[static_cast<std::size_t>(r)].node);
    }
    if (nodes.size() > 1) crossing.push_back(static_cast<int>(g));
  }
  return crossing;
}

}  // namespace fabricmap::core
