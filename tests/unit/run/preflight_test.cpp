// The preflight checks: builds that differ between ranks, GPUs a node's ranks do not all see, nodes
// with fewer GPUs than the others or than the run needs.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <fmt/format.h>

#include "orchestrator/run/preflight.h"
#include "topologies/rank_map.h"

namespace fabricmap::orchestrator {
namespace {

// Ranks on hosts h0, h1, ... (`perHost` each), every rank seeing `gpus` GPUs and running build "A".
std::vector<core::HostProbe> probes(int hosts, int perHost, int gpus) {
  std::vector<core::HostProbe> out;
  for (int h = 0; h < hosts; ++h) {
    for (int r = 0; r < perHost; ++r) {
      core::HostProbe p;
      p.hostname = fmt::format("h{}", h);
      p.sharedLeader = h * perHost;
      p.gpuCount = gpus;
      p.visibleGpus = gpus;
      p.tool = "fabricmap 1 (A)";
      out.push_back(p);
    }
  }
  return out;
}

TEST(Preflight, SameBuildEverywhereOrTheStaleRanksNamed) {
  auto all = probes(3, 2, 8);
  EXPECT_TRUE(versionProblems(all, topologies::buildTopology(all, 0)).empty());
  all[4].tool = all[5].tool = "fabricmap 1 (B)";
  const auto problems = versionProblems(all, topologies::buildTopology(all, 0));
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find("rank(s) 4-5 on h2 run fabricmap 1 (B)"), std::string::npos) << problems[0];
}

TEST(Preflight, GpusEveryNodeAndRankSees) {
  RunConfig config;
  auto all = probes(2, 4, 4);
  core::Topology topo = topologies::buildTopology(all, 0);
  EXPECT_TRUE(gpuProblems(all, topo, config, "nccl").empty());
  // one rank with a narrower CUDA_VISIBLE_DEVICES
  all[1].visibleGpus = 1;
  auto problems = gpuProblems(all, topo, config, "nccl");
  ASSERT_FALSE(problems.empty());
  EXPECT_NE(problems[0].find("different numbers of GPUs"), std::string::npos) << problems[0];
  // a node that lost a GPU: fewer than its ranks and than the other node
  all = probes(2, 4, 4);
  all[4].visibleGpus = all[5].visibleGpus = all[6].visibleGpus = all[7].visibleGpus = 3;
  problems = gpuProblems(all, topologies::buildTopology(all, 0), config, "nccl");
  ASSERT_EQ(problems.size(), 2u);
  EXPECT_NE(problems[0].find("runs 4 ranks but sees 3"), std::string::npos) << problems[0];
  EXPECT_NE(problems[1].find("sees 3 GPU(s) where other nodes see 4"), std::string::npos) << problems[1];
  // host memory needs no GPU; --gpus-per-node asks for some
  all = probes(2, 2, 0);
  topo = topologies::buildTopology(all, 0);
  EXPECT_TRUE(gpuProblems(all, topo, config, "mpi").empty());
  config.gpusPerNode = 2;
  EXPECT_EQ(gpuProblems(all, topo, config, "mpi").size(), 2u);
  const std::string report = preflightReport(all, topo, gpuProblems(all, topo, config, "mpi"));
  EXPECT_NE(report.find("PROBLEM: h0 sees 0 GPU(s), --gpus-per-node asks for 2"), std::string::npos) << report;
  EXPECT_NE(report.find("preflight: 2 problem(s)"), std::string::npos);
}

}  // namespace
}  // namespace fabricmap::orchestrator
