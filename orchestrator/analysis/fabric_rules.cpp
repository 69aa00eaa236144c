// What holds for the whole fabric, and the findings' last adjustments (see rules.h): verdicts the
// evidence does not carry, a noisy fabric's moved bar, oversubscribed hosts, noisy pairs.
#include <map>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "core/units.h"
#include "orchestrator/analysis/rules.h"

namespace fabricmap::orchestrator::internal {

// Verdicts the evidence does not carry become information, said so in their message.
void minConfidenceRule(RuleContext& ctx, std::vector<Finding>& findings) {
  for (Finding& f : findings) {
    if (f.severity == core::Severity::kInfo || !(f.confidence < ctx.c.minConfidence)) continue;
    f.severity = core::Severity::kInfo;
    f.message += fmt::format(" [below --min-confidence {:.2f}: information only]", ctx.c.minConfidence);
  }
}

// Where healthy pairs differ so much that the bar moved, say so: a reader must know that only
// gross slowdowns could be named.
void noiseRule(RuleContext& ctx, std::vector<Finding>& findings) {
  const AnalysisConfig& c = ctx.c;
  std::vector<std::pair<std::string, core::Expected>> classes{{"node-pair", ctx.nodeBase}};
  for (std::size_t cls = 1; cls < core::kLinkClasses; ++cls) {
    classes.emplace_back(std::string(core::name(static_cast<LinkClass>(cls))) + " rank-pair", ctx.classBase[cls]);
  }
  for (const auto& [what, e] : classes) {
    if (!std::isfinite(e.bandwidth) || bwBar(e, c) >= c.slowThreshold) continue;
    // with one rank per node the node pairs are the inter-node rank pairs: say it once
    if (!ctx.m.nodeMeasured && what == "inter_node rank-pair") continue;
    Finding f;
    f.severity = core::Severity::kInfo;
    f.kind = core::FindingKind::kNoise;
    f.subject = what;
    f.measured = e.bandwidthSpread;
    f.expected = e.bandwidth;
    f.ratio = bwBar(e, c);
    f.message = fmt::format(
        "healthy {} bandwidths differ by +-{:.0f}% (robust spread) around {}: pairs were judged "
        "slow only below {:.2f}x of it instead of {:.2f}x",
        what, 100 * e.bandwidthSpread, core::formatRate(e.bandwidth), bwBar(e, c), c.slowThreshold);
    findings.push_back(std::move(f));
  }
}

// A host running more ranks than it has CPUs measures scheduling luck as much as its links:
// findings that involve it become information, said once.
void oversubscribedRule(RuleContext& ctx, std::vector<Finding>& findings) {
  const core::Topology& topo = ctx.topo;
  std::map<std::string, std::pair<int, int>> hosts;  // hostname -> ranks on it, CPUs
  for (const auto& node : topo.nodes) {
    auto& [ranksOnHost, cpus] = hosts[node.hostname];
    ranksOnHost += node.ranks;
    cpus = node.cpus;
  }
  const auto oversubscribed = [&](int node) {
    if (node < 0) return false;
    const auto& [ranksOnHost, cpus] = hosts[topo.nodes[static_cast<std::size_t>(node)].hostname];
    return cpus > 0 && ranksOnHost > cpus;
  };
  bool anyOversubscribed = false;
  for (int n = 0; n < static_cast<int>(topo.nodes.size()); ++n) anyOversubscribed = anyOversubscribed || oversubscribed(n);
  // a switch's findings rest on the pairs of every node under it: judged only where no host is
  const auto aboveNodes = [](const Finding& f) {
    return f.kind == core::FindingKind::kSwitch || f.kind == core::FindingKind::kUplink ||
           f.kind == core::FindingKind::kSwitchPort;
  };
  bool downgraded = false;
  for (Finding& f : findings) {
    if (f.severity != core::Severity::kInfo &&
        (oversubscribed(f.nodeA) || oversubscribed(f.nodeB) || (aboveNodes(f) && anyOversubscribed))) {
      f.severity = core::Severity::kInfo;
      f.message += " [not judged: oversubscribed host]";
      downgraded = true;
    }
  }
  for (const auto& [host, use] : hosts) {
    const auto& [ranksOnHost, cpus] = use;
    if (cpus <= 0 || ranksOnHost <= cpus) continue;
    Finding f;
    f.severity = core::Severity::kInfo;
    f.kind = core::FindingKind::kOversubscribed;
    f.subject = host;
    f.measured = ranksOnHost;
    f.expected = cpus;
    f.ratio = static_cast<double>(ranksOnHost) / cpus;
    f.unit = "ranks/CPUs";
    f.message = fmt::format(
        "{} runs {} ranks on {} CPUs: its figures depend on scheduling{}", host, ranksOnHost, cpus,
        downgraded ? ", so findings involving it are reported as information only" : "");
    findings.push_back(std::move(f));
  }
}

// The pairs left unjudged by the rules before, once per level.
void noisyRule(RuleContext& ctx, std::vector<Finding>& findings) {
  for (const auto& [noisy, level] : {std::pair{&ctx.noisyNodes, "node"}, std::pair{&ctx.noisyRanks, "rank"}}) {
    if (noisy->count == 0) continue;
    Finding f;
    f.severity = core::Severity::kInfo;
    f.kind = core::FindingKind::kNoisy;
    f.subject = fmt::format("{} {} pair(s)", noisy->count, level);
    f.message = fmt::format(
        "{} {} pair measurement(s) were noisy: some of their samples were below the bar and some above "
        "it, or, measured once, their iteration times varied beyond a CV of {:.2g} (e.g. {}); not judged: "
        "this fabric or host was too noisy to tell (retests may)",
        noisy->count, level, ctx.c.noiseCv, noisy->example);
    findings.push_back(std::move(f));
  }
}

}  // namespace fabricmap::orchestrator::internal
