// What holds for the whole fabric, and the findings' last adjustments (see rules.h): verdicts the
// evidence does not carry, a noisy fabric's moved bar, oversubscribed hosts, nodes that are one
// machine, noisy pairs.
#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

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

namespace {

// The nodes of each machine that holds two or more of them (by their kernel's boot id).
std::map<std::string, std::vector<int>> sharedMachines(const core::Topology& topo) {
  std::map<std::string, std::vector<int>> machines;
  for (const auto& n : topo.nodes) {
    if (!n.bootId.empty()) machines[n.bootId].push_back(n.node);
  }
  std::erase_if(machines, [](const auto& m) { return m.second.size() < 2; });
  return machines;
}

}  // namespace

// Nodes that are one machine (one kernel's boot id: emulated nodes, network namespaces,
// containers) share its CPUs and scheduler: a ping-pong between them waits for that scheduler as
// much as for a link (on the emulated cluster's 2 cores, pairs measured beside a throttled pair,
// whose ranks kept polling, read 2-4x the others' latency, alone too). Latency findings among them
// become information; each such machine is said once.
void sharedHostRule(RuleContext& ctx, std::vector<Finding>& findings) {
  const core::Topology& topo = ctx.topo;
  const std::map<std::string, std::vector<int>> machines = sharedMachines(topo);
  const auto machineOf = [&](int node) -> const std::vector<int>* {
    if (node < 0 || node >= static_cast<int>(topo.nodes.size())) return nullptr;
    const auto found = machines.find(topo.nodes[static_cast<std::size_t>(node)].bootId);
    return found == machines.end() ? nullptr : &found->second;
  };
  // a pair's latency: both ends on one machine; a node's: most of the other nodes on its machine
  const auto onOneMachine = [&](const Finding& f) {
    const std::vector<int>* m = machineOf(f.nodeA);
    if (m == nullptr) return false;
    if (f.kind == core::FindingKind::kLinkLatency) return std::find(m->begin(), m->end(), f.nodeB) != m->end();
    return f.kind == core::FindingKind::kNodeLatency && 2 * (m->size() - 1) > topo.nodes.size() - 1;
  };
  std::set<const std::vector<int>*> downgraded;
  for (Finding& f : findings) {
    if (f.severity == core::Severity::kInfo || !onOneMachine(f)) continue;
    f.severity = core::Severity::kInfo;
    f.message += " [not judged: its nodes are one machine, whose scheduler the ping-pongs waited for]";
    downgraded.insert(machineOf(f.nodeA));
  }
  for (const auto& [bootId, nodes] : machines) {
    Finding f;
    f.severity = core::Severity::kInfo;
    f.kind = core::FindingKind::kSharedHost;
    f.subject = nodesText(topo, nodes, 3);
    f.measured = static_cast<double>(nodes.size());
    f.unit = "nodes";
    f.nodeA = nodes.front();
    f.message = fmt::format(
        "{} nodes run on one kernel (boot id {}): one machine (emulated nodes, network namespaces or containers), "
        "whose CPUs and scheduler their ranks share, so latency between them is not a fabric's{}",
        nodes.size(), bootId, downgraded.contains(&nodes) ? "; latency findings among them are information only" : "");
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
