// The planner's and the analysis's cost at scale: the pairwise schedule and the bottleneck analysis
// on a synthetic fabric of RANKS ranks (RANKS_PER_NODE per node, one node slow), in full mode
// (every pair: dense R x R matrices) or quick mode (3 random peers each: only those cells kept).
// Then the HTML report of the result (binned heatmaps). With LEAF_NODES, the nodes hang under a
// two-level fat tree (leaves of that many nodes, as many spines up to 16) given as --fabric would
// give it, so the switch and cable rules run too.
// usage: pairwise_scale RANKS RANKS_PER_NODE [full|quick [LEAF_NODES]]   -> one line: seconds per phase, peak RSS
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "orchestrator/analysis/analysis.h"
#include "orchestrator/analysis/matrices.h"
#include "orchestrator/run/planner.h"
#include "results/report.h"
#include "topologies/fabric_file.h"
#include "topologies/rank_map.h"

namespace fm = fabricmap;

namespace {

double seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

// The synthetic figures: inter-node 45 GB/s, same-node 350 GB/s, +-3% jitter; the last node 10x
// slow to and from everyone.
struct Fabric {
  int perNode;
  int nodes;
  double bw(int a, int b) const {
    const bool same = a / perNode == b / perNode;
    const bool slow = a / perNode == nodes - 1 || b / perNode == nodes - 1;
    return (same ? 350.0 : 45.0) * jitter(a, b) * (slow && !same ? 0.1 : 1.0);
  }
  double latency(int a, int b) const { return (a / perNode == b / perNode ? 2.0 : 6.0) * jitter(a, b); }
  static double jitter(int a, int b) { return 1.0 + 0.03 * std::sin(a * 0.7 + b * 1.3); }
};

// Full mode: every cell written straight into the dense matrices (34 M pairs through the builder
// would time the synthetic fill, not fabricmap).
fm::core::Matrices fillDense(int ranks, const Fabric& fabric) {
  fm::core::Matrices m;
  m.mode = "full";
  m.pairsMeasured = true;
  m.rankUnidir = fm::core::nanMatrix(ranks);
  m.rankLatency = fm::core::nanMatrix(ranks);
  for (int a = 0; a < ranks; ++a) {
    for (int b = 0; b < ranks; ++b) {
      if (a == b) continue;
      m.rankUnidir.at(a, b) = static_cast<float>(fabric.bw(a, b));
      m.rankLatency.at(a, b) = static_cast<float>(fabric.latency(a, b));
    }
  }
  return m;
}

// Quick mode: every planned pair (ranks and nodes) through the builder, as a run records them.
fm::core::Matrices fillQuick(const fm::core::Plan& plan, const fm::core::Topology& topology,
                             const fm::orchestrator::RunConfig& config, const Fabric& fabric) {
  fm::orchestrator::MatrixBuilder builder(topology, fm::orchestrator::matrixShapeOf(config));
  for (const auto& step : plan.pairSteps) {
    const bool node = step.level == fm::core::PairLevel::kNode;
    for (const auto& [a, b] : fm::core::pairsOf(step)) {
      fm::core::PairRecord s;
      s.level = node ? "node" : "rank";
      s.a = a;
      s.b = b;
      // a node pair: its first ranks' figure, times the streams of all its local ranks at once
      const int ra = node ? a * fabric.perNode : a;
      const int rb = node ? b * fabric.perNode : b;
      s.bwAB = fabric.bw(ra, rb) * (node ? fabric.perNode : 1);
      s.bwBA = fabric.bw(rb, ra) * (node ? fabric.perNode : 1);
      s.bwBidir = s.bwAB + s.bwBA;
      s.latencyUs = fabric.latency(ra, rb);
      builder.add(s);
    }
  }
  return builder.build();
}

// The fabric file of `nodes` nodes gpu0.. under leaves of `leafNodes`, each leaf cabled to every
// spine (as many as its nodes, at most 16).
std::string fatTree(int nodes, int leafNodes) {
  std::string text;
  const int spines = std::min(leafNodes, 16);
  for (int n = 0; n < nodes; ++n) text += fmt::format("gpu{} -> leaf{}:{}\n", n, n / leafNodes, n % leafNodes + 1);
  for (int l = 0; l * leafNodes < nodes; ++l) {
    for (int k = 0; k < spines; ++k) text += fmt::format("leaf{}:{} -> spine{}:{}\n", l, leafNodes + 1 + k, k, l + 1);
  }
  return text;
}

}  // namespace

int main(int argc, char** argv) {
  const char* usage = "usage: pairwise_scale RANKS RANKS_PER_NODE [full|quick [LEAF_NODES]]\n";
  if (argc < 3 || argc > 5) {
    std::fputs(usage, stderr);
    return 2;
  }
  const int ranks = std::atoi(argv[1]);
  const int perNode = std::atoi(argv[2]);
  const std::string mode = argc >= 4 ? argv[3] : "full";
  const int leafNodes = argc == 5 ? std::atoi(argv[4]) : 0;
  if (ranks < 2 || perNode < 1 || (mode != "full" && mode != "quick") || (argc == 5 && leafNodes < 2)) {
    std::fputs(usage, stderr);
    return 2;
  }
  std::vector<fm::core::HostProbe> probes;
  for (int r = 0; r < ranks; ++r) {
    fm::core::HostProbe p{.hostname = "gpu" + std::to_string(r / perNode)};
    p.sharedLeader = r / perNode * perNode;
    p.cpus = 64;
    probes.push_back(p);
  }
  fm::core::Topology topology = fm::topologies::buildTopology(probes, 0);
  if (leafNodes > 0) {
    topology.fabric = fm::topologies::parseFabric(fatTree(static_cast<int>(topology.nodes.size()), leafNodes), "fabric");
  }
  const Fabric fabric{perNode, static_cast<int>(topology.nodes.size())};

  // 1. the plan, and every round's pairs computed as the executor does
  auto t = std::chrono::steady_clock::now();
  const fm::orchestrator::RunConfig config =
      fm::orchestrator::parseRunOptions({"--pairwise", "--pairwise-mode", mode}).config;
  const fm::core::Plan plan = fm::orchestrator::makePlan(config, topology);
  std::size_t pairs = 0;
  for (const auto& step : plan.pairSteps) pairs += fm::core::pairsOf(step).size();
  const double planSeconds = seconds(t);

  // 2. the measurements (synthetic), then what rank 0 derives from them: link classes, peer
  //    medians, node matrices (full mode: from the rank matrix; quick mode measures nodes), the
  //    class baselines
  t = std::chrono::steady_clock::now();
  fm::core::Matrices m = mode == "full" ? fillDense(ranks, fabric) : fillQuick(plan, topology, config, fabric);
  const double fillSeconds = seconds(t);
  t = std::chrono::steady_clock::now();
  fm::orchestrator::completeMatrices(m, topology);
  fm::orchestrator::fixBaselines(m, topology);  // as the run does before its retests; the file keeps them
  const double completeSeconds = seconds(t);

  // 3. the analysis
  t = std::chrono::steady_clock::now();
  const auto findings = fm::orchestrator::analyze(m, topology, fm::orchestrator::AnalysisConfig{});
  const double analysisSeconds = seconds(t);

  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  const double analysisRss = static_cast<double>(u.ru_maxrss) / 1024.0;

  // 4. the report (rank 0 is not involved: `fabricmap report` reads the file later)
  t = std::chrono::steady_clock::now();
  fm::results::ResultsFile file;
  file.complete = true;
  file.topology = topology;
  file.hasMatrices = true;
  file.matrices = std::move(m);
  file.findings = findings;
  const std::size_t page = fm::results::renderReport(file).size();
  const double reportSeconds = seconds(t);

  getrusage(RUSAGE_SELF, &u);
  std::string first;  // the first few, for a reader to see that only the slow node is named
  for (std::size_t i = 0; i < findings.size() && i < 3; ++i) {
    first += fmt::format("{}{} {} {}", i ? "; " : "", fm::core::name(findings[i].severity), fm::core::name(findings[i].kind),
                         findings[i].subject);
  }
  if (first.empty()) first = "none";
  std::printf("ranks %d nodes %d %s%s: plan %zu rounds / %zu pairs in %.3f s; synthetic fill %.3f s; "
              "derived matrices %.3f s; analysis %.3f s; together %.3f s; %zu findings (%s); report %.3f s (%zu KiB); "
              "peak RSS %.0f MiB (%.0f MiB before the report)\n",
              ranks, fabric.nodes, mode.c_str(), leafNodes > 0 ? fmt::format(", leaves of {}", leafNodes).c_str() : "",
              plan.pairSteps.size(), pairs, planSeconds, fillSeconds,
              completeSeconds, analysisSeconds, planSeconds + completeSeconds + analysisSeconds, findings.size(),
              first.c_str(), reportSeconds, page / 1024, static_cast<double>(u.ru_maxrss) / 1024.0, analysisRss);
  return 0;
}
