// The planner's and the analysis's cost at scale: the full pairwise schedule and the bottleneck
// analysis on a synthetic matrix of RANKS ranks (RANKS_PER_NODE per node, one node slow).
// usage: pairwise_scale RANKS RANKS_PER_NODE   -> one line: seconds per phase, peak RSS
#include <sys/resource.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "orchestrator/analysis.h"
#include "orchestrator/matrices.h"
#include "orchestrator/planner.h"
#include "topologies/rank_map.h"

namespace fm = fabricmap;

namespace {

double seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: pairwise_scale RANKS RANKS_PER_NODE\n");
    return 2;
  }
  const int ranks = std::atoi(argv[1]);
  const int perNode = std::atoi(argv[2]);
  std::vector<fm::core::HostProbe> probes;
  for (int r = 0; r < ranks; ++r) {
    fm::core::HostProbe p{.hostname = "gpu" + std::to_string(r / perNode)};
    p.sharedLeader = r / perNode * perNode;
    p.cpus = 64;
    probes.push_back(p);
  }
  const fm::core::Topology topology = fm::topologies::buildTopology(probes, 0);
  const int nodes = static_cast<int>(topology.nodes.size());

  // 1. the plan, and every round's pairs computed as the executor does
  auto t = std::chrono::steady_clock::now();
  fm::orchestrator::RunConfig config = fm::orchestrator::parseRunOptions({"--pairwise"}).config;
  const fm::core::Plan plan = fm::orchestrator::makePlan(config, topology);
  std::size_t pairs = 0;
  for (const auto& step : plan.pairSteps) pairs += fm::core::pairsOf(step).size();
  const double planSeconds = seconds(t);

  // 2. synthetic measurements: inter-node 45 GB/s, same-node 350 GB/s, +-3% jitter; the last
  //    node's ranks at 1/10 to and from everyone
  t = std::chrono::steady_clock::now();
  fm::core::Matrices m;
  m.mode = "full";
  m.rankUnidir = fm::core::nanMatrix(ranks);
  m.rankLatency = fm::core::nanMatrix(ranks);
  for (int a = 0; a < ranks; ++a) {
    for (int b = 0; b < ranks; ++b) {
      if (a == b) continue;
      const bool same = a / perNode == b / perNode;
      const bool slow = a / perNode == nodes - 1 || b / perNode == nodes - 1;
      const double jitter = 1.0 + 0.03 * std::sin(a * 0.7 + b * 1.3);
      m.rankUnidir.at(a, b) = static_cast<float>((same ? 350.0 : 45.0) * jitter * (slow && !same ? 0.1 : 1.0));
      m.rankLatency.at(a, b) = static_cast<float>((same ? 2.0 : 6.0) * jitter);
    }
  }
  const double fillSeconds = seconds(t);
  // what rank 0 derives after the measurements: link classes, peer medians, node matrices
  t = std::chrono::steady_clock::now();
  fm::orchestrator::completeMatrices(m, topology);
  const double completeSeconds = seconds(t);

  // 3. the analysis
  t = std::chrono::steady_clock::now();
  const auto findings = fm::orchestrator::analyze(m, topology, fm::orchestrator::AnalysisConfig{});
  const double analysisSeconds = seconds(t);

  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  std::string first = findings.empty() ? "none" : findings.front().kind + " " + findings.front().subject;
  std::printf("ranks %d nodes %d: plan %zu rounds / %zu pairs in %.3f s; synthetic fill %.3f s; "
              "derived matrices %.3f s; analysis %.3f s, %zu findings (first: %s); peak RSS %.0f MiB\n",
              ranks, nodes, plan.pairSteps.size(), pairs, planSeconds, fillSeconds, completeSeconds,
              analysisSeconds, findings.size(), first.c_str(), static_cast<double>(u.ru_maxrss) / 1024.0);
  return 0;
}
