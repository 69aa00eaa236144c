// Bottleneck analysis (see analysis.h): an ordered list of named rules over one RuleContext.
//
// Inter-node attribution works on the node x node matrix (measured with all local ranks streaming
// at once, or derived from the rank matrix): a directed node pair is slow below the threshold.
// Then, for each node with 2+ measured peers:
//   - most of its outgoing and incoming pairs slow   -> "node"        (its NIC, cable or host)
//   - most outgoing slow, incoming fine              -> "node_egress"
//   - most incoming slow, outgoing fine              -> "node_ingress"
// judged against the node pairs' baseline; a node not named so is judged again against the pairs
// without it (when its own pairs widened the spread), then on its ranks' transfers (when every one
// of its ranks is slow and the node pairs were too noisy to tell).
// Slow pairs left unexplained by those are "link" findings (one route between two nodes that are
// fine with everyone else). Inside nodes, slow rank pairs of the same-node class make an
// "intra_node" finding per node; ranks whose inter-node pairs are mostly slow on a node that is
// otherwise fine make a "rank" finding (that rank's NIC or rail). Latency is judged the same way.
#include "orchestrator/analysis/analysis.h"

#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "core/error.h"
#include "orchestrator/analysis/rules.h"

namespace fabricmap::orchestrator {
namespace internal {

namespace {

// What each class's rank pairs are judged against: its baseline, with the gap its retested cells show.
std::array<Baseline, core::kLinkClasses> classJudges(const core::Matrices& m,
                                                      const std::array<core::Expected, core::kLinkClasses>& base) {
  std::array<Baseline, core::kLinkClasses> out{};
  for (std::size_t cls = 1; cls < core::kLinkClasses; ++cls) {
    const auto inClass = [&](int a, int b) {
      return m.rankLinkClass.n == m.rankUnidir.n && m.rankLinkClass.at(a, b) == static_cast<LinkClass>(cls);
    };
    out[cls] = baselineOf(base[cls], m.rankUnidir, inClass, m.expectedFixed);
  }
  return out;
}

Baseline nodeJudge(const core::Matrices& m, const core::Expected& base) {
  return baselineOf(base, m.nodeBw, [](int x, int y) { return x != y; }, m.expectedFixed);
}

}  // namespace

RuleContext::RuleContext(const core::Matrices& matrices, const core::Topology& topology, const AnalysisConfig& config)
    : m(matrices),
      topo(topology),
      c(config),
      nodeBase(nodeBaseline(matrices)),
      classBase(classBaselines(matrices)),
      classJudge(classJudges(matrices, classBase)),
      ranksOf(ranksByNode(topology)),
      inter{m,
            topo,
            ranksOf,
            c,
            nodeBase,
            classJudge[static_cast<std::size_t>(LinkClass::kInterNode)],
            viewOf(m.nodeBw, m.nodeBwWorst, m.nodeCv, &judgeBw, nodeJudge(m, nodeBase), c, noisyNodes, topo),
            {},
            {},
            std::vector<char>(static_cast<std::size_t>(m.nodeBw.n), 0),
            {},
            std::nullopt} {}

const FabricPaths& RuleContext::fabricPaths() {
  if (!fabricPaths_) fabricPaths_ = internal::fabricPaths(topo.fabric, topo);
  return *fabricPaths_;
}

namespace {

struct Rule {
  AnalysisRule about;
  RuleFn apply;
};

// The rules in the order they run: a later rule sees what the earlier ones explained (a link is
// what no node finding covers; a rank is judged on a node not named whole), and the last ones
// adjust the findings before them.
const std::vector<Rule>& rules() {
  static const std::vector<Rule> kRules{
      {{"switch", "with --fabric: the fewest switches, switch uplinks and nodes that explain the slow node pairs, "
                  "healthy pairs clearing what they cross; the switches and uplinks named, their pairs explained"},
       switchRule},
      {{"cable", "with --fabric: one slow cable among a leaf's uplinks, by the shapes destination forwarding gives "
                 "(the leaf's nodes slow to some destinations only, or some of its nodes slow from outside only)"},
       cableRule},
      {{"node", "a node most of whose peers see it slow both ways, or by its egress or ingress only (against the "
                "fabric's baseline, then the pairs without it, then on its ranks' transfers)"},
       nodeRule},
      {{"link", "a slow node pair that no node finding explains, both ends fine with their other peers"}, linkRule},
      {{"latency", "a node most of whose peers see high latency, else a node pair's latency"}, latencyRule},
      {{"rank", "a rank whose inter-node transfers are mostly slow while its node-mates are fine"}, rankRule},
      {{"slow_rank", "the rank a slow node's pairs come from, far slower than its node's best rank"}, slowRankRule},
      {{"intra_node", "slow same-node pairs, per node and link class, outside the class's own variation"},
       intraNodeRule},
      {{"below_line_rate", "a node whose node pairs move under --line-rate-fraction of what its NICs carry (the "
                           "declared --line-rate, else its active RDMA ports), however equally slow every node is"},
       belowLineRateRule},
      {{"claimed_vs_measured", "a GPU pair reported NVLink that moves no more than PCIe, an NVSwitch node "
                               "that behaves like bridged pairs"},
       claimedVsMeasuredRule},
      {{"topology", "what a node's topology class means for tensor parallelism, once per class"}, topologyRule},
      {{"min_confidence", "findings below --min-confidence become information"}, minConfidenceRule},
      {{"noise", "a class whose healthy pairs differ so much that only gross slowdowns could be named"}, noiseRule},
      {{"oversubscribed", "a host with more ranks than CPUs: its findings become information"}, oversubscribedRule},
      {{"shared_host", "nodes that are one machine (one kernel's boot id): latency findings among them become "
                       "information"},
       sharedHostRule},
      {{"noisy", "pairs whose samples fell on both sides of the bar, left unjudged"}, noisyRule},
  };
  return kRules;
}

// Most severe first, then the lowest ratio.
void sortFindings(std::vector<core::Finding>& findings) {
  std::stable_sort(findings.begin(), findings.end(), [](const core::Finding& a, const core::Finding& b) {
    if (a.severity != b.severity) return a.severity < b.severity;  // Severity: most severe first
    return a.ratio < b.ratio;
  });
}

}  // namespace
}  // namespace internal

const std::vector<AnalysisRule>& analysisRules() {
  static const std::vector<AnalysisRule> kAbout = [] {
    std::vector<AnalysisRule> out;
    for (const internal::Rule& r : internal::rules()) out.push_back(r.about);
    return out;
  }();
  return kAbout;
}

std::vector<core::Finding> analyze(const core::Matrices& m, const core::Topology& topo, const AnalysisConfig& c) {
  internal::RuleContext ctx(m, topo, c);
  std::vector<core::Finding> findings;
  for (const internal::Rule& r : internal::rules()) r.apply(ctx, findings);
  internal::sortFindings(findings);
  return findings;
}

std::vector<core::Finding> analyze(const core::Matrices& m, const core::Topology& topo, const AnalysisConfig& c,
                                   const std::vector<std::string_view>& only) {
  for (std::string_view name : only) {
    const auto& all = internal::rules();
    if (std::none_of(all.begin(), all.end(), [&](const internal::Rule& r) { return r.about.name == name; })) {
      throw core::UsageError(fmt::format("no analysis rule is named '{}'", name));
    }
  }
  internal::RuleContext ctx(m, topo, c);
  std::vector<core::Finding> findings;
  for (const internal::Rule& r : internal::rules()) {
    if (std::find(only.begin(), only.end(), r.about.name) != only.end()) r.apply(ctx, findings);
  }
  internal::sortFindings(findings);
  return findings;
}

}  // namespace fabricmap::orchestrator
