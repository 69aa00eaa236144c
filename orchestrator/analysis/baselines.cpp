// The baselines every pair is judged against, fixed from the first measurements and the specs,
// and the pairs worth retesting (see analysis.h).
#include <array>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "orchestrator/analysis/judging.h"
#include "topologies/specs.h"

namespace fabricmap::orchestrator {

using internal::Robust;
using internal::robustStats;
using internal::sampleOf;
using internal::slowBw;
using internal::badLatency;
using core::LinkClass;

std::array<core::Expected, core::kLinkClasses> classBaselines(const core::Matrices& m) {
  std::array<core::Expected, core::kLinkClasses> out{};
  if (m.expectedFixed) return m.classExpected;
  out.fill({std::nan(""), std::nan(""), 0, 0, 0});
  if (m.rankLinkClass.n != m.rankUnidir.n) return out;
  // one pass per matrix, its cells sorted by class
  std::array<std::vector<float>, core::kLinkClasses> bw;
  std::array<std::vector<float>, core::kLinkClasses> lat;
  for (auto [matrix, byClass] : {std::pair{&m.rankUnidir, &bw}, std::pair{&m.rankLatency, &lat}}) {
    auto& sorted = *byClass;
    sampleOf(*matrix, [&](int a, int b, float v) { sorted[static_cast<std::size_t>(m.rankLinkClass.at(a, b))].push_back(v); });
  }
  for (std::size_t c = 1; c < core::kLinkClasses; ++c) {
    const Robust b = robustStats(std::move(bw[c]), true);
    const Robust l = robustStats(std::move(lat[c]), false);
    out[c] = {b.median, l.median, b.spread, l.spread, b.gapBar};
  }
  return out;
}

core::Expected classBaseline(const core::Matrices& m, LinkClass cls) {
  return classBaselines(m)[static_cast<std::size_t>(cls)];
}

core::Expected nodeBaseline(const core::Matrices& m) {
  if (m.expectedFixed) return m.nodeExpected;
  std::vector<float> bwCells;
  std::vector<float> latCells;
  sampleOf(m.nodeBw, [&](int x, int y, float v) { if (x != y) bwCells.push_back(v); });
  sampleOf(m.nodeLatency, [&](int x, int y, float v) { if (x != y) latCells.push_back(v); });
  const Robust bw = robustStats(std::move(bwCells), true);
  const Robust lat = robustStats(std::move(latCells), false);
  return {bw.median, lat.median, bw.spread, lat.spread, bw.gapBar};
}

void fixBaselines(core::Matrices& m, const core::Topology& topology) {
  m.expectedFixed = false;
  m.classExpected = classBaselines(m);
  for (auto& from : m.classExpectedFrom) from.clear();
  m.nodeExpected = nodeBaseline(m);
  // the GPU model every pair of a class uses, when there is exactly one
  std::array<std::optional<topologies::GpuSpec>, core::kLinkClasses> model{};
  std::array<bool, core::kLinkClasses> mixed{};
  std::map<std::string, std::optional<topologies::GpuSpec>> specOf;  // by GPU name
  const auto see = [&](LinkClass cls, int r) {
    const auto c = static_cast<std::size_t>(cls);
    const std::string& name = topology.ranks[static_cast<std::size_t>(r)].gpuName;
    auto it = specOf.find(name);
    if (it == specOf.end()) it = specOf.emplace(name, topologies::gpuSpecForName(name)).first;
    const auto& spec = it->second;
    if (!spec || (model[c] && model[c]->model != spec->model)) mixed[c] = true;
    if (!mixed[c]) model[c] = spec;
  };
  if (m.rankLinkClass.n == m.rankUnidir.n && m.rankUnidir.n == static_cast<int>(topology.ranks.size())) {
    std::vector<std::vector<int>> ranksOf(topology.nodes.size());
    for (const auto& r : topology.ranks) ranksOf.at(static_cast<std::size_t>(r.node)).push_back(r.rank);
    for (const auto& ranks : ranksOf) {
      for (int a : ranks) {
        for (int b : ranks) {
          if (a == b) continue;
          see(m.rankLinkClass.at(a, b), a);
          see(m.rankLinkClass.at(a, b), b);
        }
      }
    }
    if (ranksOf.size() >= 2) {
      for (const auto& r : topology.ranks) see(LinkClass::kInterNode, r.rank);
    }
  }
  const auto use = [&](LinkClass cls, double peak) {
    const auto c = static_cast<std::size_t>(cls);
    if (mixed[c] || !model[c] || !(peak > 0)) return;
    m.classExpected[c].bandwidth = kPracticalShare * peak;
    m.classExpectedFrom[c] = std::string(model[c]->model);
  };
  const auto nvswitch = static_cast<std::size_t>(LinkClass::kNvswitch);
  if (model[nvswitch]) use(LinkClass::kNvswitch, model[nvswitch]->nvlinkGBps);
  const auto pcie = static_cast<std::size_t>(LinkClass::kPcie);
  if (model[pcie]) use(LinkClass::kPcie, topologies::pcieX16GBps(model[pcie]->pcieGeneration).value_or(0.0));
  m.expectedFixed = true;
}

bool raiseDepressedBaselines(core::Matrices& fixed, const core::Matrices& typical) {
  bool raised = false;
  const auto raise = [&](core::Expected& e, const core::Expected& t) {
    if (!(t.bandwidth > kDepressedRound * e.bandwidth)) return;
    // bandwidth only: the latency of pairs measured alone would be a bar the round's pairs,
    // measured side by side, cannot meet
    e.bandwidth = t.bandwidth;
    e.bandwidthSpread = t.bandwidthSpread;
    e.bandwidthGapBar = t.bandwidthGapBar;
    raised = true;
  };
  for (std::size_t c = 1; c < core::kLinkClasses; ++c) {
    if (fixed.classExpectedFrom[c].empty()) raise(fixed.classExpected[c], typical.classExpected[c]);
  }
  raise(fixed.nodeExpected, typical.nodeExpected);
  return raised;
}

// A first measurement worth measuring again: below the bar; below half the baseline, whatever
// the noise lowered the bar to (on a noisy fabric the faulty and the unlucky healthy pairs first
// overlap, their retests tell them apart); or below the baseline with iteration times so
// varied (beyond --noise-cv) that one sample cannot say.
bool looksSlow(float v, float cv, const core::Expected& e, const AnalysisConfig& c) {
  if (!std::isfinite(v) || !std::isfinite(e.bandwidth)) return false;
  return slowBw(v, e, c) || v < kSuspectShare * e.bandwidth || (cv > c.noiseCv && v < e.bandwidth);
}


std::vector<std::pair<int, int>> suspectRankPairs(const core::Matrices& m, const AnalysisConfig& c) {
  const std::array<core::Expected, core::kLinkClasses> base = classBaselines(m);
  std::set<std::pair<int, int>> pairs;
  if (m.rankLinkClass.n != m.rankUnidir.n) return {};
  const auto baseOf = [&](int a, int b) -> const core::Expected& {
    return base[static_cast<std::size_t>(m.rankLinkClass.at(a, b))];
  };
  m.rankUnidir.forEachCell([&](int a, int b, float v) {
    if (a != b && looksSlow(v, core::cellOr(m.rankCv, a, b), baseOf(a, b), c)) pairs.emplace(std::min(a, b), std::max(a, b));
  });
  m.rankLatency.forEachCell([&](int a, int b, float v) {
    if (a != b && badLatency(v, baseOf(a, b), c)) pairs.emplace(std::min(a, b), std::max(a, b));
  });
  return {pairs.begin(), pairs.end()};
}

std::vector<std::pair<int, int>> suspectNodePairs(const core::Matrices& m, const AnalysisConfig& c) {
  std::set<std::pair<int, int>> pairs;
  if (!m.nodeMeasured) return {};
  const core::Expected bl = nodeBaseline(m);
  m.nodeBw.forEachCell([&](int x, int y, float v) {
    if (x != y && looksSlow(v, core::cellOr(m.nodeCv, x, y), bl, c)) pairs.emplace(std::min(x, y), std::max(x, y));
  });
  m.nodeLatency.forEachCell([&](int x, int y, float v) {
    if (x != y && badLatency(v, bl, c)) pairs.emplace(std::min(x, y), std::max(x, y));
  });
  return {pairs.begin(), pairs.end()};
}

std::vector<std::pair<int, int>> farBelowPairs(const core::Matrices& m, core::PairLevel level,
                                               const std::vector<std::pair<int, int>>& pairs) {
  const bool node = level == core::PairLevel::kNode;
  const core::Matrix& bw = node ? m.nodeBw : m.rankUnidir;
  if (node ? !m.nodeMeasured : m.rankLinkClass.n != bw.n) return {};
  const auto base = node ? std::array<core::Expected, core::kLinkClasses>{} : classBaselines(m);
  const double nodeBar = node ? kFarBelowShare * nodeBaseline(m).bandwidth : 0;
  const auto below = [&](int a, int b) {
    const double bar =
        node ? nodeBar : kFarBelowShare * base[static_cast<std::size_t>(m.rankLinkClass.at(a, b))].bandwidth;
    return core::cellOr(bw, a, b) < bar;  // NaN either side: not below
  };
  std::vector<std::pair<int, int>> out;
  for (const auto& [a, b] : pairs) {
    if (below(a, b) || below(b, a)) out.emplace_back(a, b);
  }
  return out;
}

std::vector<std::pair<int, int>> steadyPairs(const core::Matrices& m, core::PairLevel level,
                                             const std::vector<std::pair<int, int>>& pairs, const AnalysisConfig& c) {
  const core::Matrix& cv = level == core::PairLevel::kNode ? m.nodeCv : m.rankCv;
  std::vector<std::pair<int, int>> out;
  for (const auto& [a, b] : pairs) {
    if (!(core::cellOr(cv, a, b) > c.noiseCv) && !(core::cellOr(cv, b, a) > c.noiseCv)) out.emplace_back(a, b);
  }
  return out;
}

}  // namespace fabricmap::orchestrator
