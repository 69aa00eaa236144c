// GPU-pair copies without a GPU: planning, options, the per-node copy matrices and their fold
// into the rank matrices, the claimed-vs-measured analysis fed by copies alone, and the results
// file's /copies and /matrix/gpu read back.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <set>

#include "core/error.h"
#include "orchestrator/analysis/analysis.h"
#include "orchestrator/analysis/matrices.h"
#include "orchestrator/run/planner.h"
#include "orchestrator/run/run_config.h"
#include "results/console.h"
#include "results/h5_reader.h"
#include "results/h5_writer.h"
#include "results/json.h"
#include "topologies/rank_map.h"

namespace fabricmap::orchestrator {
namespace {

RunConfig parse(std::vector<std::string> args) { return parseRunOptions(args).config; }

// `ranks` ranks in emulated nodes of `perNode` consecutive ranks (0: one host).
core::Topology hosts(int ranks, int perNode) {
  std::vector<core::HostProbe> probes(static_cast<std::size_t>(ranks), core::HostProbe{.hostname = std::string("h")});
  for (auto& p : probes) p.sharedLeader = 0;
  return topologies::buildTopology(probes, perNode);
}

TEST(CopyPlan, EveryLocalPairOnceBetweenCollectivesAndPairs) {
  EXPECT_EQ(core::copyPairs(4), (std::vector<std::pair<int, int>>{{0, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 3}}));
  EXPECT_EQ(core::copyPairs(8).size(), 28u);
  EXPECT_TRUE(core::copyPairs(1).empty());
  RunConfig c = parse({"--collectives", "--copies", "--pairwise", "--ops", "all_reduce", "-b", "1K", "-e", "1K",
                       "--copy-bytes", "2M", "--copy-iters", "3"});
  // uneven nodes of 3 and 2 ranks: the pairs of the larger node, the smaller one takes part where it can
  const core::Plan plan = makePlan(c, hosts(5, 3));
  const int collectives = static_cast<int>(plan.collectiveSteps.size());
  ASSERT_GT(collectives, 0);
  ASSERT_EQ(plan.copySteps.size(), 3u);
  for (std::size_t i = 0; i < plan.copySteps.size(); ++i) {
    const core::CopyStep& s = plan.copySteps[i];
    EXPECT_EQ(s.index, collectives + static_cast<int>(i));
    EXPECT_EQ(s.bytes, 2u << 20);
    EXPECT_EQ(s.iters, 3);
    EXPECT_LT(s.a, s.b);
  }
  ASSERT_FALSE(plan.pairSteps.empty());
  EXPECT_EQ(plan.pairSteps.front().index, collectives + 3);
  EXPECT_EQ(plan.stepCount(), collectives + 3 + static_cast<int>(plan.pairSteps.size()));
  // a copy step's two buffers count in the host-memory footprint
  EXPECT_GE(peakBytesPerRank(plan), 2u * (2u << 20));
}

TEST(CopyPlan, NothingToCopyWithOneRankPerNode) {
  EXPECT_THROW(makePlan(parse({"--copies"}), hosts(3, 1)), core::UsageError);
  // with other phases the copies are simply absent
  const core::Plan plan = makePlan(parse({"--copies", "--pairwise"}), hosts(3, 1));
  EXPECT_TRUE(plan.copySteps.empty());
  EXPECT_FALSE(plan.pairSteps.empty());
}

TEST(CopyOptions, PhasesCopySizesAndGpuDefaults) {
  RunConfig def = parse({});
  EXPECT_TRUE(def.collectives && def.pairwise);
  EXPECT_FALSE(def.copies);
  applyBackendDefaults(def, "mpi");
  EXPECT_FALSE(def.copies);  // host copies only when asked for
  EXPECT_EQ(def.copyBytes, 16u << 20);
  applyBackendDefaults(def, "nccl");
  EXPECT_TRUE(def.copies);  // GPUs: the copy matrix is part of the default run
  EXPECT_EQ(def.copyBytes, 256u << 20);
  RunConfig only = parse({"--copies", "--copy-bytes", "1M", "--suite", "full"});
  EXPECT_TRUE(only.copies);
  EXPECT_FALSE(only.collectives || only.pairwise);
  applyBackendDefaults(only, "nccl");
  EXPECT_EQ(only.copyBytes, 1u << 20);
  EXPECT_EQ(only.copyIters, 20);
  RunConfig chosen = parse({"--pairwise"});
  applyBackendDefaults(chosen, "nccl");
  EXPECT_FALSE(chosen.copies);  // phases chosen: only those
  EXPECT_THROW(parse({"--copy-bytes", "0"}), core::UsageError);
  EXPECT_THROW(parse({"--copy-iters", "0"}), core::UsageError);
  EXPECT_THROW(parse({"--copy-bytes", "8G"}), core::UsageError);
}

TEST(CopyOptions, CudaGraphNeedsTheNcclBackend) {
  EXPECT_FALSE(parse({}).cudaGraph);
  EXPECT_TRUE(parse({"--cuda-graph"}).cudaGraph);
  EXPECT_TRUE(parse({"-G", "1"}).cudaGraph);
  EXPECT_FALSE(parse({"-G", "0"}).cudaGraph);
  EXPECT_THROW(parse({"-G", "-1"}), core::UsageError);
  RunConfig graph = parse({"--cuda-graph"});
  try {
    applyBackendDefaults(graph, "mpi");
    FAIL() << "--cuda-graph on the mpi backend must be refused";
  } catch (const core::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("needs the nccl backend"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(applyBackendDefaults(graph, "nccl"));
}

core::CopyRecord copyRow(int node, int a, int b, int rankA, int rankB, const char* method, double write,
                         double read) {
  core::CopyRecord c;
  c.node = node;
  c.a = a;
  c.b = b;
  c.rankA = rankA;
  c.rankB = rankB;
  c.method = method;
  c.path = "peer";
  c.bytes = 1 << 20;
  c.iters = 5;
  c.writeAB = write;
  c.writeBA = write + 1;
  c.writeBidir = 2 * write;
  c.readAB = read;
  c.readBA = read + 1;
  c.readBidir = std::nan("");
  return c;
}

TEST(CopyMatrices, PerNodeByMethodAndFoldedIntoRanks) {
  const core::Topology t = hosts(5, 3);  // node 0: ranks 0-2, node 1: ranks 3-4
  MatrixBuilder b(t, matrixShapeOf(parse({"--copies"})));
  b.add(copyRow(0, 0, 1, 0, 1, "ce", 10, 12));
  b.add(copyRow(0, 0, 1, 0, 1, "sm", 20, 8));
  b.add(copyRow(1, 0, 1, 3, 4, "ce", 30, 5));
  core::CopyRecord staged = copyRow(0, 1, 2, 1, 2, "ce", 4, std::nan(""));
  staged.path = "host_staged";
  staged.readBA = std::nan("");
  b.add(staged);
  const core::Matrices m = b.build();
  EXPECT_FALSE(m.pairsMeasured);
  ASSERT_EQ(m.copies.size(), 2u);
  const core::CopyMatrices& n0 = m.copies[0];
  EXPECT_EQ(n0.node, 0);
  EXPECT_EQ(n0.ranks, (std::vector<int>{0, 1, 2}));
  ASSERT_EQ(n0.methods.size(), 2u);
  EXPECT_EQ(n0.methods[0].method, "ce");
  EXPECT_FLOAT_EQ(n0.methods[0].writeUnidir.at(0, 1), 10);
  EXPECT_FLOAT_EQ(n0.methods[0].writeUnidir.at(1, 0), 11);
  EXPECT_FLOAT_EQ(n0.methods[0].writeBidir.at(1, 0), 20);
  EXPECT_FLOAT_EQ(n0.methods[0].readUnidir.at(0, 1), 12);
  EXPECT_TRUE(std::isnan(n0.methods[0].readBidir.at(0, 1)));
  EXPECT_FLOAT_EQ(n0.methods[0].writeUnidir.at(1, 2), 4);
  EXPECT_TRUE(std::isnan(n0.methods[0].readUnidir.at(2, 1)));
  EXPECT_TRUE(std::isnan(n0.methods[1].writeUnidir.at(1, 2)));  // sm never ran on 1-2
  EXPECT_EQ(n0.path[0 * 3 + 1], "peer");
  EXPECT_EQ(n0.path[2 * 3 + 1], "host_staged");
  EXPECT_EQ(n0.path[1 * 3 + 1], "self");
  EXPECT_EQ(n0.path[0 * 3 + 2], "");  // not measured
  // the fold: the best any method and direction reached, per ordered rank pair
  EXPECT_FLOAT_EQ(m.rankCopyUnidir.at(0, 1), 20);  // sm write
  EXPECT_FLOAT_EQ(m.rankCopyUnidir.at(1, 0), 21);
  EXPECT_FLOAT_EQ(m.rankCopyUnidir.at(3, 4), 30);
  EXPECT_FLOAT_EQ(m.rankCopyBidir.at(4, 3), 60);
  EXPECT_TRUE(std::isnan(m.rankCopyUnidir.at(0, 3)));  // across nodes: never a copy
  EXPECT_EQ(m.copyBytes, 1u << 20);
}

// One 8-GPU node reported FULL_NVSWITCH (NV18 everywhere), measured by copies only.
struct CopiedNode {
  core::Topology topology;
  core::Matrices m;
};

CopiedNode copiedNode(const std::function<double(int, int)>& bw) {
  CopiedNode n;
  n.topology = hosts(8, 0);
  core::NodeRecord& node = n.topology.nodes[0];
  node.topologyClass = "FULL_NVSWITCH";
  node.nvswitch = "yes";
  for (int a = 0; a < 8; ++a) {
    for (int b = 0; b < 8; ++b) node.gpuLinks.push_back(a == b ? "X" : "NV18");
  }
  for (auto& r : n.topology.ranks) {
    r.gpuIndex = r.rank;
    r.gpuName = "NVIDIA H100 80GB HBM3";
  }
  MatrixBuilder b(n.topology, matrixShapeOf(parse({"--copies"})));
  for (const auto& [a, c] : core::copyPairs(8)) {
    core::CopyRecord r = copyRow(0, a, c, a, c, "ce", 0, 0);
    r.writeAB = r.readAB = bw(a, c);
    r.writeBA = r.readBA = bw(c, a);
    r.writeBidir = r.readBidir = bw(a, c) + bw(c, a);
    b.add(r);
  }
  n.m = b.build();
  fixBaselines(n.m, n.topology);
  return n;
}

TEST(CopyAnalysis, AnNvLinkPairCopyingAtPcieSpeedIsNamed) {
  const CopiedNode healthy = copiedNode([](int, int) { return 390.0; });
  for (const auto& f : analyze(healthy.m, healthy.topology, AnalysisConfig{})) {
    EXPECT_NE(f.kind, core::FindingKind::kClaimedVsMeasured) << f.message;
  }
  const CopiedNode broken = copiedNode([](int a, int b) { return a + b == 3 && (a == 1 || b == 1) ? 22.0 : 390.0; });
  std::vector<std::string> subjects;
  for (const auto& f : analyze(broken.m, broken.topology, AnalysisConfig{})) {
    if (f.kind == core::FindingKind::kClaimedVsMeasured) subjects.push_back(f.subject);
  }
  EXPECT_EQ(subjects, (std::vector<std::string>{"h GPU1-GPU2"}));
}

TEST(CopyAnalysis, FastCopiesOutweighASlowNcclTransfer) {
  // NCCL's send/recv slow on 0-4 (a protocol problem), the direct copy at NVLink speed: the path
  // is NVLink, so nothing claims otherwise
  CopiedNode n = copiedNode([](int, int) { return 390.0; });
  MatrixBuilder b(n.topology, matrixShapeOf(parse({"--copies", "--pairwise"})));
  for (const auto& [a, c] : core::copyPairs(8)) {
    core::CopyRecord r = copyRow(0, a, c, a, c, "ce", 390, 390);
    b.add(r);
    core::PairRecord p;
    p.level = "rank";
    p.a = a;
    p.b = c;
    p.bwAB = p.bwBA = a == 0 && c == 4 ? 20.0 : 370.0;
    b.add(p);
  }
  core::Matrices m = b.build();
  fixBaselines(m, n.topology);
  for (const auto& f : analyze(m, n.topology, AnalysisConfig{})) EXPECT_NE(f.kind, core::FindingKind::kClaimedVsMeasured) << f.message;
}

namespace fs = std::filesystem;

TEST(CopyResults, CopiesAndGpuMatricesReadBack) {
  const fs::path dir = fs::temp_directory_path() / ("fabricmap-copies-" + std::to_string(getpid()));
  fs::create_directories(dir);
  const std::string path = (dir / "copies.h5").string();
  const core::Topology t = hosts(5, 3);
  MatrixBuilder b(t, matrixShapeOf(parse({"--copies"})));
  core::StepRecord step;
  step.step = 0;
  step.kind = core::StepKind::kCopy;
  step.scope = "intra";
  step.op = "gpu_pair 0-1";
  step.status = "ok";
  std::vector<core::CopyRecord> rows{copyRow(0, 0, 1, 0, 1, "ce", 10, 12), copyRow(1, 0, 1, 3, 4, "ce", 30, 5)};
  rows[1].wrong = 7;
  for (const auto& r : rows) b.add(r);
  const core::Matrices m = b.build();
  {
    results::H5Sink sink(path);
    core::Provenance p;
    p.plannedSteps = 1;
    sink.begin(p, t, {});
    sink.step(step, rows);
    sink.analysis(m, {});
    sink.finish(true);
  }
  const results::ResultsFile f = results::readResults(path);
  ASSERT_EQ(f.copies.size(), 2u);
  EXPECT_EQ(f.copies[1].rankA, 3);
  EXPECT_EQ(f.copies[1].wrong, 7u);
  EXPECT_DOUBLE_EQ(f.copies[0].writeAB, 10);
  EXPECT_TRUE(std::isnan(f.copies[0].readBidir));
  EXPECT_EQ(f.steps.at(0).kind, core::StepKind::kCopy);
  ASSERT_TRUE(f.hasMatrices);
  EXPECT_FALSE(f.matrices.pairsMeasured);
  ASSERT_EQ(f.matrices.copies.size(), 2u);
  const core::CopyMatrices& n1 = f.matrices.copies[1];
  EXPECT_EQ(n1.ranks, (std::vector<int>{3, 4}));
  EXPECT_EQ(n1.gpus, (std::vector<int>{-1, -1}));
  ASSERT_EQ(n1.methods.size(), 1u);
  EXPECT_FLOAT_EQ(n1.methods[0].writeUnidir.at(1, 0), 31);
  EXPECT_EQ(n1.path[1], "peer");
  EXPECT_FLOAT_EQ(f.matrices.rankCopyUnidir.at(3, 4), 30);
  EXPECT_EQ(f.matrices.copyIters, 5);
  const auto j = results::toJson(f);
  EXPECT_EQ(j["copies"].size(), 2u);
  EXPECT_EQ(j["matrices"]["gpu"][0]["methods"]["ce"]["write_unidir"][0][1], 10.0);
  EXPECT_EQ(j["matrices"]["gpu"][0]["path"][0][1], "peer");
  EXPECT_EQ(j["matrices"]["pairs_measured"], false);
  std::FILE* out = std::tmpfile();
  results::printResults(out, f);
  std::rewind(out);
  std::string text(1 << 16, '\0');
  text.resize(std::fread(text.data(), 1, text.size(), out));
  std::fclose(out);
  EXPECT_NE(text.find("copy-engine copy write bandwidth"), std::string::npos) << text;
  EXPECT_NE(text.find("1 copy steps"), std::string::npos) << text;
  EXPECT_NE(text.find("Out of bounds values : 7 FAILED"), std::string::npos) << text;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace fabricmap::orchestrator
