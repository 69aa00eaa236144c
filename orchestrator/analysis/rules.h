// The analysis's rules (internal to orchestrator/analysis/): what every rule sees, and each rule's
// function. The ordered list, with each rule's name and one line on what it names, is in
// analysis.cpp; analysis.h has the contract.
#pragma once

#include <optional>

#include <array>
#include <cstdint>
#include <unordered_set>
#include <vector>

#include "orchestrator/analysis/fabric_paths.h"
#include "orchestrator/analysis/judging.h"

namespace fabricmap::orchestrator::internal {

// The fewest measured node pairs a population judged alone needs: the pairs without a node (the
// node rule), the pairs that do not cross a switch or uplink (the switch rule).
inline constexpr int kAloneCells = 6;

// What the inter-node rules share: the judged node matrix, which directed node pairs a finding
// already explains, and which nodes were named whole (their ranks are covered).
struct InterNode {
  const core::Matrices& m;
  const core::Topology& topo;
  const std::vector<std::vector<int>>& ranksOf;  // per node (ranksByNode)
  const AnalysisConfig& c;
  core::Expected base;      // node pairs
  Baseline rankJudge;       // what an inter-node rank pair is judged against
  JudgedMatrix view;
  std::unordered_set<std::uint64_t> explained;  // directed node pairs, as index(x, y)
  // Those a switch or uplink finding explains: no evidence against the nodes or ranks at their ends.
  std::unordered_set<std::uint64_t> explainedAbove;
  std::vector<char> named;                      // per node
  // Ranks a slow node's pairs come from while its other ranks are fine: the rank rule names them
  // on the node's evidence (the node's pairs, which directions).
  struct SlowRank {
    int rank = -1;
    bool outgoing = false;
    bool incoming = false;
    Evidence node;  // the node's slow pairs in those directions
    double ratio = 0;  // its inter-node median over the best of its node's ranks
  };
  std::vector<SlowRank> slowRanks;
  // Ranks most of whose inter-node transfers in a direction are slow (inter_node_rules.cpp), found
  // once by the first rule that needs them.
  std::optional<std::vector<int>> rankCandidates;

  bool isExplained(int x, int y) const { return explained.count(view.values.index(x, y)) > 0; }
  bool isExplainedAbove(int x, int y) const { return explainedAbove.count(view.values.index(x, y)) > 0; }
  void explainAbove(int x, int y) {
    explained.insert(view.values.index(x, y));
    explainedAbove.insert(view.values.index(x, y));
  }
  void explain(int x, bool outgoing, bool incoming) {
    forEachPeer(view.values, x, [&](int y) {
      if (outgoing) explained.insert(view.values.index(x, y));
      if (incoming) explained.insert(view.values.index(y, x));
    });
  }
  bool interNode(int a, int b) const { return m.rankLinkClass.at(a, b) == LinkClass::kInterNode; }
  Judged rankAt(int from, int to) const {
    return judgeBw(m.rankUnidir.at(from, to), core::worstAt(m.rankUnidirWorst, m.rankUnidir, from, to),
                   core::cellOr(m.rankCv, from, to), rankJudge.forCell(core::cellOr(m.rankCv, from, to)), c);
  }
};

// What every rule sees: the matrices, topology and thresholds, the baselines they are judged
// against, the noisy pairs met so far (reported by the `noisy` rule), and the inter-node rules'
// shared state. Built once per analysis, in analysis.cpp.
struct RuleContext {
  RuleContext(const core::Matrices& matrices, const core::Topology& topology, const AnalysisConfig& config);

  const core::Matrices& m;
  const core::Topology& topo;
  const AnalysisConfig& c;
  core::Expected nodeBase;
  std::array<core::Expected, core::kLinkClasses> classBase;
  std::array<Baseline, core::kLinkClasses> classJudge;
  std::vector<std::vector<int>> ranksOf;  // per node (ranksByNode)
  NoisyPairs noisyNodes;
  NoisyPairs noisyRanks;
  InterNode inter;
  // Where the run's nodes hang in the fabric (`--fabric`), found once by the first rule that needs it.
  const FabricPaths& fabricPaths();

 private:
  std::optional<FabricPaths> fabricPaths_;
};

// A rule adds its findings (or, the last ones, adjusts those before it).
using RuleFn = void (*)(RuleContext& ctx, std::vector<Finding>& findings);

// switch_rules.cpp: with the fabric's topology, slow node pairs blamed on switches and uplinks
void switchRule(RuleContext& ctx, std::vector<Finding>& findings);
// cable_rules.cpp: with the fabric's topology, one slow cable among a leaf's uplinks
void cableRule(RuleContext& ctx, std::vector<Finding>& findings);
// inter_node_rules.cpp: the node matrix and the inter-node rank pairs
void nodeRule(RuleContext& ctx, std::vector<Finding>& findings);
void linkRule(RuleContext& ctx, std::vector<Finding>& findings);
void rankRule(RuleContext& ctx, std::vector<Finding>& findings);
void slowRankRule(RuleContext& ctx, std::vector<Finding>& findings);
// node_rules.cpp: latency between nodes, bandwidth inside them and against the NICs' line rate
void latencyRule(RuleContext& ctx, std::vector<Finding>& findings);
void intraNodeRule(RuleContext& ctx, std::vector<Finding>& findings);
void belowLineRateRule(RuleContext& ctx, std::vector<Finding>& findings);
// gpu_link_rules.cpp: what the GPU links claim against what they move
void claimedVsMeasuredRule(RuleContext& ctx, std::vector<Finding>& findings);
void topologyRule(RuleContext& ctx, std::vector<Finding>& findings);
// fabric_rules.cpp: what holds for the whole fabric, and the findings' last adjustments
void minConfidenceRule(RuleContext& ctx, std::vector<Finding>& findings);
void noiseRule(RuleContext& ctx, std::vector<Finding>& findings);
void oversubscribedRule(RuleContext& ctx, std::vector<Finding>& findings);
void sharedHostRule(RuleContext& ctx, std::vector<Finding>& findings);
void noisyRule(RuleContext& ctx, std::vector<Finding>& findings);

}  // namespace fabricmap::orchestrator::internal
