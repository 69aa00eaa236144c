// Acceptance checks: the plateau rule (not an average over sizes), each check's pass, fail and
// missing, the profile file format and its errors with line numbers, and /verdict written back.
#include "orchestrator/verdicts/verify.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/error.h"
#include "orchestrator/analysis/plateau.h"
#include "orchestrator/verdicts/profiles.h"
#include "results/console.h"
#include "results/h5_reader.h"
#include "results/json.h"
#include "results/report.h"
#include "results/verdict.h"

namespace fabricmap::orchestrator {
namespace {

constexpr std::uint64_t kMiB = 1ull << 20;

core::CollectiveRecord arRow(const std::string& scope, int group, const std::string& ranks, int nranks,
                             std::uint64_t bytes, double busbw) {
  core::CollectiveRecord r;
  r.scope = scope;
  r.op = "all_reduce";
  r.group = group;
  r.ranks = ranks;
  r.nranks = nranks;
  r.bytes = bytes;
  r.busbw = busbw;
  r.busbwMedian = busbw;
  r.dtype = "float";
  r.checked = true;
  return r;
}

// `nodes` nodes of `perNode` ranks, each a GPU named `gpu`, nodes classed `cls`.
results::ResultsFile fileWith(int nodes, int perNode, const std::string& cls = "FULL_NVSWITCH",
                              const std::string& gpu = "NVIDIA H100 80GB HBM3") {
  results::ResultsFile f;
  f.path = "test.h5";
  f.complete = true;
  for (int n = 0; n < nodes; ++n) {
    core::NodeRecord node;
    node.node = n;
    node.name = "host" + std::to_string(n);
    node.ranks = perNode;
    node.gpus = gpu.empty() ? 0 : perNode;
    node.topologyClass = cls;
    f.topology.nodes.push_back(node);
    for (int l = 0; l < perNode; ++l) {
      core::RankRecord r;
      r.rank = n * perNode + l;
      r.node = n;
      r.localRank = l;
      r.gpuName = gpu;
      f.topology.ranks.push_back(r);
    }
  }
  return f;
}

// An intra sweep 1 MiB..32 MiB per node: busbw(size) from `curve`.
template <typename Curve>
void addIntraSweep(results::ResultsFile& f, int perNode, Curve curve) {
  const int nodes = static_cast<int>(f.topology.nodes.size());
  for (int n = 0; n < nodes; ++n) {
    const std::string ranks = std::to_string(n * perNode) + "-" + std::to_string(n * perNode + perNode - 1);
    for (std::uint64_t s = kMiB; s <= 32 * kMiB; s *= 2) f.collectives.push_back(arRow("intra", n, ranks, perNode, s, curve(n, s)));
  }
}

Profile intraOnly(double min) {
  Profile p;
  p.name = "t";
  p.minIntraAllReduceBusbw = min;
  return p;
}

const Check* find(const Verification& v, const std::string& check, const std::string& subjectPart = "") {
  for (const Check& c : v.checks) {
    if (c.check == check && c.subject.find(subjectPart) != std::string::npos) return &c;
  }
  return nullptr;
}

TEST(Plateau, SizesAreTheTopQuarter) {
  EXPECT_EQ(plateauSizes({kMiB, 2 * kMiB, 4 * kMiB, 8 * kMiB, 16 * kMiB, 32 * kMiB}),
            (std::vector<std::uint64_t>{8 * kMiB, 16 * kMiB, 32 * kMiB}));
  // a factor-8 sweep: only the largest size is within a quarter of itself
  EXPECT_EQ(plateauSizes({8, 64, 512, 4096}), (std::vector<std::uint64_t>{4096}));
  EXPECT_EQ(plateauSizes({10, 3, 10, 2}), (std::vector<std::uint64_t>{3, 10}));  // 2 < 10/4 <= 3
  EXPECT_TRUE(plateauSizes({}).empty());
}

TEST(Plateau, MedianPerGroupThenOverGroupsSkippingWrongRows) {
  std::vector<core::CollectiveRecord> rows;
  for (int g = 0; g < 3; ++g) {
    for (std::uint64_t s : {kMiB, 8 * kMiB, 16 * kMiB, 32 * kMiB}) rows.push_back(arRow("intra", g, std::to_string(g * 2) + "-" + std::to_string(g * 2 + 1), 2, s, 10.0 * (g + 1) + static_cast<double>(s / kMiB)));
  }
  core::CollectiveRecord wrong = arRow("intra", 0, "0-1", 2, 32 * kMiB, 1e6);
  wrong.wrong = 3;
  rows.push_back(wrong);
  const auto p = plateauOf(rows, "intra", "all_reduce");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->fromBytes, 8 * kMiB);
  EXPECT_EQ(p->toBytes, 32 * kMiB);
  ASSERT_EQ(p->groups.size(), 3u);
  EXPECT_DOUBLE_EQ(p->groups[0].busbw, 26);  // median of 18, 26, 42
  EXPECT_EQ(p->groups[2].firstRank, 4);
  EXPECT_DOUBLE_EQ(p->busbw, 36);            // median of 26, 36, 46
  EXPECT_FALSE(plateauOf(rows, "inter", "all_reduce"));
}

TEST(VerifyPlateau, AnAverageOverSizesWouldPassWhereThePlateauFails) {
  // fast small messages, large ones collapse (a NIC or link that falls over under load)
  results::ResultsFile f = fileWith(1, 8);
  addIntraSweep(f, 8, [](int, std::uint64_t s) { return s >= 8 * kMiB ? 100.0 : 500.0; });
  double sum = 0;
  for (const auto& r : f.collectives) sum += r.busbwMedian;
  ASSERT_GT(sum / static_cast<double>(f.collectives.size()), 296);  // nccl-tests' "Avg bus bandwidth" passes
  const Verification v = verify(intraOnly(296), f, false);
  ASSERT_EQ(v.checks.size(), 1u);
  EXPECT_EQ(v.checks[0].status, CheckStatus::kFail);
  EXPECT_DOUBLE_EQ(*v.checks[0].measuredValue, 100);
  EXPECT_FALSE(v.pass);
}

TEST(VerifyPlateau, AnAverageOverSizesWouldFailWhereThePlateauPasses) {
  // a healthy ramp: small sizes are latency-bound, the plateau is what the fabric delivers
  results::ResultsFile f = fileWith(1, 8);
  addIntraSweep(f, 8, [](int, std::uint64_t s) { return s >= 8 * kMiB ? 380.0 : 20.0; });
  double sum = 0;
  for (const auto& r : f.collectives) sum += r.busbwMedian;
  ASSERT_LT(sum / static_cast<double>(f.collectives.size()), 296);
  const Verification v = verify(intraOnly(296), f, false);
  EXPECT_TRUE(v.pass);
  EXPECT_EQ(v.checks[0].status, CheckStatus::kPass);
}

// A profile without the hardware keys (the tests of the other checks).
Profile withoutInventory(Profile p) {
  p.minGpuMemoryGb.reset();
  p.minNicRateGbps.reset();
  p.minNicsPerGpu.reset();
  p.gpuDirectRequired = false;
  p.numaBindingRequired = false;
  p.gpuMemoryHealthRequired = false;
  p.maxLinkErrors.reset();
  p.minLineRateFraction.reset();
  return p;
}

// Two nodes of 8 GPUs as a run records them: 8 active 400G ports each, GPUDirect, GPU memory as
// NVML gives it (an 80 GB H100: 81559 MiB), counters unchanged, node pairs at 45 GB/s.
results::ResultsFile hardwareFile() {
  results::ResultsFile f = fileWith(2, 8);
  for (auto& r : f.topology.ranks) r.gpuMemoryBytes = 81559ull << 20;
  for (int n = 0; n < 2; ++n) {
    for (int d = 0; d < 8; ++d) {
      f.topology.inventory.nics.push_back({n, fmt::format("mlx5_{}", d), 1, "rdma", "ACTIVE", "LinkUp", 400, 4, "NDR",
                                           "IB", "", "", 0});
      f.topology.inventory.counters.push_back({n, fmt::format("mlx5_{}", d), 1, "symbol_error", 7, 7});
    }
    f.topology.inventory.nodes.push_back({n, 8, "yes", "nvidia_peermem loaded", ""});
    for (int g = 0; g < 8; ++g) {
      f.topology.inventory.gpus.push_back({n, g, fmt::format("0000:{}b:00.0", g + 1), "NVIDIA H100 80GB HBM3",
                                           81559ull << 20, g / 4, "", "", "yes", "yes", -1, -1, "unknown", 0, 0, "no",
                                           "no"});
      f.topology.inventory.pcie.push_back({n, "GPU", fmt::format("0000:{}b:00.0", g + 1), true, 32, 32, 16, 16, 32, 16,
                                           g / 4, g < 4 ? "0-55" : "56-111"});
    }
  }
  for (auto& r : f.topology.ranks) {
    r.gpuBusId = fmt::format("00000000:{}B:00.0", r.localRank + 1);
    r.cpus = r.localRank < 4 ? fmt::format("{}", r.localRank) : fmt::format("{}", 56 + r.localRank);
  }
  f.matrices.pairsMeasured = true;
  f.matrices.nodeMeasured = true;
  f.matrices.nodeBw.n = 2;
  f.matrices.nodeBw.values = {std::nanf(""), 360.0f, 360.0f, std::nanf("")};  // 0.9 of 8 x 50 GB/s
  return f;
}

Profile hardwareOnly() {
  Profile p;
  p.minGpuMemoryGb = 80;
  p.minNicRateGbps = 400;
  p.minNicsPerGpu = 1;
  p.gpuDirectRequired = true;
  p.numaBindingRequired = true;
  p.gpuMemoryHealthRequired = true;
  p.maxLinkErrors = 10;
  p.minLineRateFraction = 0.8;
  return p;
}

TEST(Verify, TheHardwareAsLeased) {
  const Verification v = verify(hardwareOnly(), hardwareFile(), false);
  EXPECT_EQ(v.checks.size(), 16u);  // eight checks on each of two nodes
  EXPECT_TRUE(v.pass) << (v.reasons.empty() ? "" : v.reasons[0]);
  EXPECT_NEAR(*find(v, "gpu_memory_gb", "node1")->measuredValue, 85.52, 0.01);
  EXPECT_DOUBLE_EQ(*find(v, "line_rate_fraction", "node0")->measuredValue, 0.9);
}

// What a lease's "8x H100 80GB, 8x 400G, GPUDirect" hides, one fault at a time.
TEST(Verify, TheHardwareThatIsNot) {
  const auto failing = [](const results::ResultsFile& f) {
    const Verification v = verify(hardwareOnly(), f, false);
    std::vector<std::string> out;
    for (const Check& c : v.checks) {
      if (c.status != CheckStatus::kPass) out.push_back(c.check + " " + c.subject + " " + std::string(name(c.status)));
    }
    return out;
  };
  results::ResultsFile f = hardwareFile();
  for (auto& r : f.topology.ranks) {
    if (r.node == 1 && r.localRank == 3) r.gpuMemoryBytes = 40960ull << 20;  // a 40 GB card
  }
  EXPECT_EQ(failing(f), std::vector<std::string>{"gpu_memory_gb node1 (host1) fail"});
  f = hardwareFile();
  f.topology.inventory.nics[2].rateGbps = 200;  // node0's mlx5_2 trained at HDR
  f.topology.inventory.nics[12].state = "DOWN";  // node1's mlx5_4 down: 7 ports for 8 GPUs
  EXPECT_EQ(failing(f), (std::vector<std::string>{"nic_rate_gbps node0 (host0) fail", "nics_per_gpu node1 (host1) fail"}));
  f = hardwareFile();
  f.topology.inventory.nodes[0].gpuDirect = "no";
  f.topology.inventory.counters[9].end = 30;  // node1's mlx5_1: 23 symbol errors during the run
  EXPECT_EQ(failing(f), (std::vector<std::string>{"gpudirect node0 (host0) fail", "max_link_errors node1 (host1) fail"}));
  f = hardwareFile();
  f.topology.ranks[13].cpus = "0-7";  // node1's GPU 5 (NUMA 1) rank bound to NUMA 0
  EXPECT_EQ(failing(f), std::vector<std::string>{"numa_binding node1 (host1) fail"});
  f = hardwareFile();
  f.topology.inventory.gpus[3].ecc = "no";             // node0's GPU 3 with ECC off
  f.topology.inventory.gpus[12].remapPending = "yes";  // node1's GPU 4 waits for a reset
  EXPECT_EQ(failing(f), (std::vector<std::string>{"gpu_memory_health node0 (host0) fail",
                                                  "gpu_memory_health node1 (host1) fail"}));
  EXPECT_EQ(find(verify(hardwareOnly(), f, false), "gpu_memory_health", "node1")->measured, "GPU 4: row remap pending");
  f = hardwareFile();
  f.matrices.nodeBw.values = {std::nanf(""), 200.0f, 200.0f, std::nanf("")};  // 0.5 of the line rate, both nodes
  EXPECT_EQ(failing(f), (std::vector<std::string>{"line_rate_fraction node0 (host0) fail",
                                                  "line_rate_fraction node1 (host1) fail"}));
  // a file without the inventory (schema 3, or a node whose sysfs was not read): missing, not failed
  f = hardwareFile();
  f.topology.inventory = {};
  const Verification v = verify(hardwareOnly(), f, false);
  EXPECT_EQ(v.failed, 0);
  EXPECT_EQ(v.missing, 14);  // the GPU memory comes from the ranks
  EXPECT_FALSE(v.pass);
}

TEST(Verify, EveryNodeJudgedAndTheSlowOneNamed) {
  results::ResultsFile f = fileWith(3, 8);
  f.topology.nodes[2].topologyClass = "PCIE_ONLY";
  addIntraSweep(f, 8, [](int n, std::uint64_t) { return n == 1 ? 150.0 : 370.0; });
  Profile p = *findProfile("hgx-h100-8");
  p.minPlateauBytes = 0;
  p.minInterAllReduceBusbwPerNic.reset();
  p.minPairFraction.reset();
  p.minScalingEfficiency.reset();
  p = withoutInventory(p);
  const Verification v = verify(p, f, false);
  EXPECT_EQ(find(v, "topology_class", "node0")->status, CheckStatus::kPass);
  EXPECT_EQ(find(v, "topology_class", "node2")->status, CheckStatus::kFail);
  EXPECT_EQ(find(v, "topology_class", "node2")->measured, "PCIE_ONLY");
  EXPECT_EQ(find(v, "gpus_per_node", "node1")->status, CheckStatus::kPass);
  EXPECT_EQ(find(v, "gpu_model", "node1")->status, CheckStatus::kPass);
  EXPECT_EQ(find(v, "intra_allreduce_busbw", "node0")->status, CheckStatus::kPass);
  EXPECT_EQ(find(v, "intra_allreduce_busbw", "node1 (host1)")->status, CheckStatus::kFail);
  EXPECT_EQ(v.failed, 2);
  EXPECT_FALSE(v.pass);
  ASSERT_EQ(v.reasons.size(), 2u);
  EXPECT_NE(v.reasons[0].find("node2"), std::string::npos);
}

TEST(Verify, GpuCountAndModel) {
  results::ResultsFile f = fileWith(1, 4, "FULL_NVSWITCH", "NVIDIA A100-SXM4-80GB");
  Profile p;
  p.gpusPerNode = 8;
  p.gpuModel = "H100";
  const Verification v = verify(p, f, false);
  EXPECT_EQ(find(v, "gpus_per_node")->status, CheckStatus::kFail);
  EXPECT_EQ(find(v, "gpu_model")->status, CheckStatus::kFail);
  EXPECT_EQ(find(v, "gpu_model")->measured, "NVIDIA A100-SXM4-80GB");
  // whole words: a Grace Hopper superchip is not an H200, an A100-SXM4 is an A100
  p.gpuModel = "H200";
  EXPECT_EQ(find(verify(p, fileWith(1, 4, "FULL_NVSWITCH", "NVIDIA GH200 120GB"), false), "gpu_model")->status,
            CheckStatus::kFail);
  EXPECT_EQ(find(verify(p, fileWith(1, 4, "FULL_NVSWITCH", "NVIDIA H200"), false), "gpu_model")->status,
            CheckStatus::kPass);
  p.gpuModel = "a100";
  EXPECT_EQ(find(verify(p, f, false), "gpu_model")->status, CheckStatus::kPass);
}

TEST(Verify, MissingMeasurementsAreNotJudgedUnlessAllowed) {
  results::ResultsFile f = fileWith(1, 8);
  f.scopes = {{"intra", 1, "0-7", "waived", "no GPU"}};
  Profile p;
  p.gpusPerNode = 8;  // the one check this file answers
  p.minIntraAllReduceBusbw = 1;
  p.minInterAllReduceBusbwPerNic = 1;
  p.minPairFraction = 0.5;
  p.minScalingEfficiency = 0.5;
  const Verification v = verify(p, f, false);
  ASSERT_EQ(v.checks.size(), 5u);
  for (const Check& c : v.checks) {
    EXPECT_EQ(c.status, c.check == "gpus_per_node" ? CheckStatus::kPass : CheckStatus::kMissing) << c.check;
  }
  EXPECT_NE(find(v, "intra_allreduce_busbw")->detail.find("waived: no GPU"), std::string::npos);
  EXPECT_NE(find(v, "inter_allreduce_busbw_per_nic")->detail.find("one node"), std::string::npos);
  EXPECT_FALSE(v.pass);
  EXPECT_EQ(v.acceptance, results::Acceptance::kNotJudged);
  EXPECT_EQ(v.missing, 4);
  const Verification allowed = verify(p, f, true);
  EXPECT_TRUE(allowed.pass);
  EXPECT_EQ(allowed.acceptance, results::Acceptance::kPass);
  EXPECT_TRUE(allowed.reasons.empty());
}

// One server's file (a run on one node, a log of one server) has only a world scope, which is the
// node's inside: its intra check is judged on it. On two nodes the world crosses the network and
// answers nothing about a node's inside.
TEST(Verify, OneNodesWorldIsItsInside) {
  results::ResultsFile f = fileWith(1, 8);
  f.scopes = {{"world", 1, "0-7", "active", ""}, {"intra", 1, "0-7", "waived", "same groups as scope world"}};
  for (std::uint64_t s = kMiB; s <= 32 * kMiB; s *= 2) f.collectives.push_back(arRow("world", 0, "0-7", 8, s, 235));
  Verification v = verify(intraOnly(184), f, false);
  ASSERT_EQ(v.checks.size(), 1u);
  EXPECT_EQ(v.checks[0].status, CheckStatus::kPass);
  EXPECT_DOUBLE_EQ(*v.checks[0].measuredValue, 235);
  EXPECT_NE(v.checks[0].detail.find("one node: its world scope is the node's inside"), std::string::npos)
      << v.checks[0].detail;
  EXPECT_EQ(verify(intraOnly(300), f, false).checks[0].status, CheckStatus::kFail);

  results::ResultsFile two = fileWith(2, 4);
  for (std::uint64_t s = kMiB; s <= 32 * kMiB; s *= 2) two.collectives.push_back(arRow("world", 0, "0-7", 8, s, 235));
  v = verify(intraOnly(184), two, false);
  ASSERT_EQ(v.checks.size(), 1u);
  EXPECT_EQ(v.checks[0].status, CheckStatus::kMissing);
  EXPECT_EQ(v.checks[0].subject, "all nodes");
}

// A check the file cannot answer is missing, never failed: a log carries no GPU links (its node is
// UNCLASSIFIED) and may not name its GPUs; the verdict is then NOT JUDGED, not FAIL, and says how
// many checks were judged.
TEST(Verify, WhatTheFileCannotAnswerIsMissingNotFailed) {
  results::ResultsFile f = fileWith(1, 8, "UNCLASSIFIED", "A100-SXM4-40GB");
  f.provenance.importedFrom = R"(["a100.log"])";
  for (std::uint64_t s = kMiB; s <= 32 * kMiB; s *= 2) f.collectives.push_back(arRow("world", 0, "0-7", 8, s, 235));
  Profile p = intraOnly(184);
  p.topologyClass = "FULL_NVSWITCH";
  p.gpuModel = "A100";
  p.minGpuMemoryGb = 40;
  Verification v = verify(p, f, false);
  EXPECT_EQ(find(v, "topology_class")->status, CheckStatus::kMissing);
  EXPECT_NE(find(v, "topology_class")->detail.find("--topo FILE"), std::string::npos) << find(v, "topology_class")->detail;
  EXPECT_EQ(find(v, "gpu_model")->status, CheckStatus::kPass);
  EXPECT_EQ(find(v, "gpu_memory_gb")->status, CheckStatus::kMissing);
  EXPECT_EQ(v.acceptance, results::Acceptance::kNotJudged);
  EXPECT_FALSE(v.pass);
  EXPECT_EQ(v.passed, 2);
  EXPECT_EQ(v.missing, 2);
  EXPECT_EQ(v.failed, 0);
  EXPECT_EQ(verificationToJson(v)["verdict"], "not_judged");
  EXPECT_EQ(verificationToJson(v)["passed"], 2);
  const std::string text = verificationText(v);
  const std::string last = text.substr(text.rfind("VERDICT:"));
  EXPECT_EQ(last.rfind("VERDICT: NOT JUDGED (2 of 4 checks judged: 2 passed, 0 failed; 2 missing: topology_class", 0), 0u)
      << last;
  EXPECT_EQ(results::acceptanceHeadline(verdictRecordOf(v)),
            "ACCEPTANCE: NOT JUDGED against profile t: 2 of 4 checks missing (2 judged, 2 passed)");

  // what the planner adds turns it into a verdict: the memory its GPU names tell, the class
  for (auto& r : f.topology.ranks) r.gpuMemoryBytes = 40ull << 30;
  f.topology.nodes[0].topologyClass = "FULL_NVSWITCH";
  v = verify(p, f, false);
  EXPECT_EQ(v.acceptance, results::Acceptance::kPass);
  EXPECT_NE(find(v, "gpu_memory_gb")->detail.find("as its name in the log tells it"), std::string::npos);
  // a failure outweighs anything missing
  f.topology.nodes[0].topologyClass = "NVLINK_PAIRS";
  for (auto& r : f.topology.ranks) r.gpuMemoryBytes = 0;
  v = verify(p, f, false);
  EXPECT_EQ(v.acceptance, results::Acceptance::kFail);
  EXPECT_EQ(verificationText(v).substr(verificationText(v).rfind("VERDICT:")).rfind("VERDICT: FAIL (3 of 4 checks "
                                                                                   "judged: 2 passed, 1 failed: "
                                                                                   "topology_class",
                                                                                   0),
            0u);
  // a run whose discovery could not classify a node says why, from its warnings
  f.provenance.importedFrom.clear();
  f.topology.nodes[0].topologyClass = "UNCLASSIFIED";
  f.topology.nodes[0].topologyWarnings = "NVML not available";
  v = verify(p, f, false);
  EXPECT_EQ(find(v, "topology_class")->status, CheckStatus::kMissing);
  EXPECT_NE(find(v, "topology_class")->detail.find("NVML not available"), std::string::npos);
  // GPUs whose names were not recorded: the model is missing; ranks without a GPU still fail it
  for (auto& r : f.topology.ranks) {
    r.gpuName.clear();
    r.gpuIndex = r.localRank;
  }
  EXPECT_EQ(find(verify(p, f, false), "gpu_model")->status, CheckStatus::kMissing);
  for (auto& r : f.topology.ranks) r.gpuIndex = -1;
  EXPECT_EQ(find(verify(p, f, false), "gpu_model")->status, CheckStatus::kFail);
}

// NCCL's Tree/NVLS can beat the line rate on two nodes: the caveat is said for a log as for a run.
TEST(Verify, TwoNodeCaveatForLogsToo) {
  results::ResultsFile f = fileWith(2, 4);
  for (std::uint64_t s = kMiB; s <= 32 * kMiB; s *= 2) f.collectives.push_back(arRow("world", 0, "0-7", 8, s, 123));
  Profile p;
  p.minInterAllReduceBusbwPerNic = 20;
  const auto caveat = [](const Verification& v) {
    return std::any_of(v.notes.begin(), v.notes.end(), [](const std::string& n) { return n.find("Tree/NVLS") != std::string::npos; });
  };
  EXPECT_FALSE(caveat(verify(p, f, false)));  // host memory: Open MPI's algorithms
  f.provenance.backend = "nccl-tests (imported)";
  f.provenance.importedFrom = R"(["gh200.log"])";
  EXPECT_TRUE(caveat(verify(p, f, false)));
  f.provenance = {};
  f.provenance.backend = "nccl";
  EXPECT_TRUE(caveat(verify(p, f, false)));
}

TEST(Verify, PlateauBelowTheProfilesSizesIsNotMeasured) {
  results::ResultsFile f = fileWith(1, 8);
  addIntraSweep(f, 8, [](int, std::uint64_t) { return 400.0; });
  Profile p = intraOnly(296);
  p.minPlateauBytes = 1ull << 30;
  const Verification v = verify(p, f, false);
  EXPECT_EQ(v.checks[0].status, CheckStatus::kMissing);
  EXPECT_NE(v.checks[0].detail.find("largest intra all_reduce measured is 32 MiB"), std::string::npos);
}

TEST(Verify, InterPerRailAndPerNicFromWorld) {
  // 3 nodes of 2 ranks; rails {0,2,4} and {1,3,5}; two NICs recorded per node
  results::ResultsFile f = fileWith(3, 2);
  for (auto& n : f.topology.nodes) n.nics = "mlx5_0 400G IB, mlx5_1 400G IB";
  for (std::uint64_t s = kMiB; s <= 32 * kMiB; s *= 2) {
    f.collectives.push_back(arRow("inter", 0, "0,2,4", 3, s, 45));
    f.collectives.push_back(arRow("inter", 1, "1,3,5", 3, s, 20));
  }
  Profile p;
  p.minInterAllReduceBusbwPerNic = 36.8;
  Verification v = verify(p, f, false);
  ASSERT_EQ(v.checks.size(), 2u);
  EXPECT_EQ(find(v, "inter_allreduce_busbw_per_nic", "rail 0")->status, CheckStatus::kPass);
  EXPECT_EQ(find(v, "inter_allreduce_busbw_per_nic", "rail 1")->status, CheckStatus::kFail);
  // one NIC for both rails: each rail's busbw is half the NIC's
  for (auto& n : f.topology.nodes) n.nics = "mlx5_0 400G IB";
  v = verify(p, f, false);
  EXPECT_DOUBLE_EQ(*find(v, "inter_allreduce_busbw_per_nic", "rail 0")->measuredValue, 90);
  // no inter scope: the world busbw over the NICs per node
  f.collectives.clear();
  for (auto& n : f.topology.nodes) n.nics = "a, b";
  for (std::uint64_t s = kMiB; s <= 32 * kMiB; s *= 2) f.collectives.push_back(arRow("world", 0, "0-5", 6, s, 80));
  v = verify(p, f, false);
  ASSERT_EQ(v.checks.size(), 1u);
  EXPECT_EQ(v.checks[0].subject, "world (3 nodes)");
  EXPECT_DOUBLE_EQ(*v.checks[0].measuredValue, 40);
  EXPECT_EQ(v.checks[0].status, CheckStatus::kPass);
}

TEST(Verify, PairFractionPerLinkClassAndNodeMatrix) {
  results::ResultsFile f = fileWith(2, 2);
  f.hasMatrices = true;
  core::Matrices& m = f.matrices;
  m.pairsMeasured = true;
  m.rankUnidir = core::nanMatrix(4);
  m.rankLinkClass.n = 4;
  m.rankLinkClass.table.assign(16, core::LinkClass::kInterNode);
  for (int a = 0; a < 4; ++a) {
    for (int b = 0; b < 4; ++b) {
      if (a == b) {
        m.rankLinkClass.table[m.rankUnidir.index(a, b)] = core::LinkClass::kSelf;
        continue;
      }
      const bool same = a / 2 == b / 2;
      m.rankLinkClass.table[m.rankUnidir.index(a, b)] = same ? core::LinkClass::kNvswitch : core::LinkClass::kInterNode;
      m.rankUnidir.at(a, b) = same ? 380.f : 45.f;
    }
  }
  m.rankUnidir.at(3, 1) = 20.f;  // one slow inter-node direction
  m.nodeBw = core::nanMatrix(2);
  m.nodeBw.at(0, 1) = 90.f;
  m.nodeBw.at(1, 0) = 88.f;
  Profile p;
  p.minPairFraction = 0.9;
  const Verification v = verify(p, f, false);
  ASSERT_EQ(v.checks.size(), 3u);
  EXPECT_EQ(find(v, "pair_fraction", "nvswitch")->status, CheckStatus::kPass);
  const Check* inter = find(v, "pair_fraction", "inter_node");
  EXPECT_EQ(inter->status, CheckStatus::kFail);
  EXPECT_NEAR(*inter->measuredValue, 20.0 / 45.0, 1e-9);
  EXPECT_NE(inter->detail.find("3 -> 1"), std::string::npos);
  EXPECT_EQ(find(v, "pair_fraction", "node pairs")->status, CheckStatus::kPass);
  // no matrix: not measured
  f.hasMatrices = false;
  EXPECT_EQ(verify(p, f, false).checks[0].status, CheckStatus::kMissing);
}

// The largest count against the best at fewer GPUs: 8 against 4 (the renter's guide) and against 2
// at once, as the run's scaling finding; one point alone, or a noisy one, is nothing to judge.
TEST(Verify, ScalingEfficiencyAgainstTheBestAtFewerGpus) {
  results::ResultsFile f = fileWith(1, 8);
  const auto point = [](const std::string& level, int n, double busbw) {
    core::ScalingRecord r;
    r.level = level;
    r.n = n;
    r.busbw = busbw;
    r.bytes = 8 * kMiB;
    return r;
  };
  f.scaling = {point("gpus", 2, 100), point("gpus", 8, 60), point("gpus", 4, 95), point("nodes", 1, 100)};
  Profile p;
  p.minScalingEfficiency = 0.8;
  Verification v = verify(p, f, false);
  ASSERT_EQ(v.checks.size(), 1u);
  EXPECT_EQ(v.checks[0].subject, "8 GPUs per node");
  EXPECT_EQ(v.checks[0].status, CheckStatus::kFail);
  EXPECT_NEAR(*v.checks[0].measuredValue, 0.6, 1e-12);
  EXPECT_NE(v.checks[0].detail.find("60.000 GB/s on 8 GPUs / 100.000 GB/s on 2 GPUs"), std::string::npos)
      << v.checks[0].detail;
  // bridged pairs: fast on 2 GPUs, PCIe from 4 on; 8 against 4 alone (0.97) would pass them
  f.scaling = {point("gpus", 2, 100), point("gpus", 4, 30), point("gpus", 8, 29)};
  EXPECT_EQ(verify(p, f, false).checks[0].status, CheckStatus::kFail);
  // 4 GPUs beat 2: 8 is judged against 4
  f.scaling = {point("gpus", 2, 80), point("gpus", 4, 100), point("gpus", 8, 90)};
  v = verify(p, f, false);
  EXPECT_EQ(v.checks[0].status, CheckStatus::kPass);
  EXPECT_NEAR(*v.checks[0].measuredValue, 0.9, 1e-12);
  f.scaling[2].noisy = true;
  v = verify(p, f, false);
  EXPECT_EQ(v.checks[0].status, CheckStatus::kMissing);
  EXPECT_NE(v.checks[0].detail.find("noisy"), std::string::npos);
  f.scaling = {point("gpus", 2, 100)};
  v = verify(p, f, false);
  EXPECT_EQ(v.checks[0].status, CheckStatus::kMissing);
  EXPECT_NE(v.checks[0].detail.find("one point only (2 GPUs)"), std::string::npos);
  f.scaling.clear();
  EXPECT_EQ(verify(p, f, false).checks[0].status, CheckStatus::kMissing);
}

// Nothing judged is never a pass, --allow-missing or not.
TEST(Verify, NothingJudgedIsNeverAPass) {
  results::ResultsFile f = fileWith(1, 8);
  Profile p;
  p.name = "errors-only";
  p.maxLinkErrors = 0;
  const Verification v = verify(p, f, true);
  ASSERT_EQ(v.checks.size(), 1u);
  EXPECT_EQ(v.checks[0].status, CheckStatus::kMissing);
  EXPECT_FALSE(v.pass);
  EXPECT_EQ(v.acceptance, results::Acceptance::kNotJudged);
  results::VerdictRecord allowed = verdictRecordOf(v);
  allowed.pass = true;  // a record written by an older fabricmap
  EXPECT_EQ(results::acceptanceOf(allowed), results::Acceptance::kNotJudged);
}

// A log shows the GPUs its ranks used, not the server's: fewer than the profile's is missing, and
// an all_reduce on part of a node is not the node's figure.
TEST(Verify, ALogOnPartOfTheServer) {
  results::ResultsFile f = fileWith(1, 4, "UNCLASSIFIED", "A100-SXM4-40GB");
  f.provenance.importedFrom = R"(["a100-4.log"])";
  for (auto& r : f.topology.ranks) r.gpuIndex = r.localRank;
  for (std::uint64_t s = kMiB; s <= 32 * kMiB; s *= 2) f.collectives.push_back(arRow("world", 0, "0-3", 4, s, 200));
  Profile p = intraOnly(184);
  p.gpusPerNode = 8;
  Verification v = verify(p, f, false);
  EXPECT_EQ(find(v, "gpus_per_node")->status, CheckStatus::kMissing);
  EXPECT_NE(find(v, "gpus_per_node")->detail.find("used 4 of the server's GPUs"), std::string::npos);
  EXPECT_EQ(find(v, "intra_allreduce_busbw")->status, CheckStatus::kPass);  // the 4 GPUs it knows of
  // with the server's topology (8 GPUs): the count passes, the 4-rank all_reduce is not the node's
  f.topology.nodes[0].gpus = 8;
  f.topology.nodes[0].gpuLinks.assign(64, "NV12");
  v = verify(p, f, false);
  EXPECT_EQ(find(v, "gpus_per_node")->status, CheckStatus::kPass);
  EXPECT_EQ(find(v, "intra_allreduce_busbw")->status, CheckStatus::kMissing);
  EXPECT_NE(find(v, "intra_allreduce_busbw")->detail.find("ran on 4 of the node's 8 GPUs"), std::string::npos);
}

TEST(Verify, JsonShape) {
  results::ResultsFile f = fileWith(1, 8, "NO_GPU", "");
  const Verification v = verify(*findProfile("hgx-h100-8"), f, false);
  const auto j = verificationToJson(v);
  EXPECT_EQ(j["verdict"], "fail");
  EXPECT_EQ(j["profile"]["name"], "hgx-h100-8");
  EXPECT_EQ(j["total"], v.checks.size());
  EXPECT_EQ(j["checks"][0]["check"], "topology_class");
  EXPECT_EQ(j["checks"][0]["measured"], "NO_GPU");
  EXPECT_EQ(j["checks"][0]["required"], "FULL_NVSWITCH");
  EXPECT_EQ(j["checks"][0]["status"], "fail");
}

TEST(Profiles, BuiltinsStateEveryRequirementWithSources) {
  for (const std::string name : {"hgx-h100-8", "hgx-a100-8", "hgx-a100-40gb-8", "hgx-h200-8", "pcie-8"}) {
    const auto p = findProfile(name);
    ASSERT_TRUE(p) << name;
    EXPECT_TRUE(p->topologyClass && p->gpusPerNode && p->minIntraAllReduceBusbw && p->minInterAllReduceBusbwPerNic &&
                p->minPairFraction && p->minScalingEfficiency)
        << name;
    EXPECT_GE(p->sources.size(), 4u) << name;
  }
  EXPECT_DOUBLE_EQ(*findProfile("hgx-h100-8")->minIntraAllReduceBusbw, 0.8 * 370);
  EXPECT_DOUBLE_EQ(*findProfile("hgx-a100-8")->minGpuMemoryGb, 80);
  EXPECT_DOUBLE_EQ(*findProfile("hgx-a100-40gb-8")->minGpuMemoryGb, 40);
  EXPECT_DOUBLE_EQ(*findProfile("hgx-h200-8")->minNicRateGbps, 400);
  EXPECT_TRUE(findProfile("hgx-h100-8")->gpuDirectRequired);
  EXPECT_TRUE(findProfile("hgx-h100-8")->numaBindingRequired);
  EXPECT_FALSE(findProfile("pcie-8")->minGpuMemoryGb);
  EXPECT_FALSE(findProfile("custom"));
}

TEST(Profiles, ParsesKeysCommentsAndBase) {
  const Profile p = parseProfile(
      "# acceptance of the March lease\n"
      "base = hgx-h100-8\n"
      "name = lease-march   # trailing comment\n"
      "\n"
      "  min_intra_allreduce_busbw = 350.5\r\n"
      "min_scaling_efficiency = none\n"
      "min_plateau_bytes = 4G\n",
      "p.txt");
  EXPECT_EQ(p.name, "lease-march");
  EXPECT_EQ(p.source, "p.txt");
  EXPECT_EQ(p.topologyClass, "FULL_NVSWITCH");  // from the base
  EXPECT_DOUBLE_EQ(*p.minIntraAllReduceBusbw, 350.5);
  EXPECT_FALSE(p.minScalingEfficiency);
  EXPECT_EQ(p.minPlateauBytes, 4ull << 30);
  bool noted = false;
  for (const std::string& s : p.sources) noted |= s == "min_intra_allreduce_busbw 350.5 GB/s: p.txt:5";
  EXPECT_TRUE(noted);

  const Profile q = parseProfile("topology_class = NO_GPU\ngpus_per_node = 0\nmin_pair_fraction=0.5", "q");
  EXPECT_EQ(q.name, "custom");
  EXPECT_EQ(q.gpusPerNode, 0);
  EXPECT_DOUBLE_EQ(*q.minPairFraction, 0.5);
}

std::string errorOf(std::string_view text) {
  try {
    parseProfile(text, "bad.txt");
  } catch (const core::UsageError& e) {
    return e.what();
  }
  return "no error";
}

TEST(Profiles, ErrorsNameTheLine) {
  EXPECT_EQ(errorOf("gpus_per_node = 8\nfrobnicate = 1\n").rfind("bad.txt:2: unknown key 'frobnicate'", 0), 0u);
  EXPECT_EQ(errorOf("# c\n\nmin_pair_fraction 0.5\n").rfind("bad.txt:3: expected key = value", 0), 0u);
  EXPECT_EQ(errorOf("min_pair_fraction = 1.5\n"), "bad.txt:1: min_pair_fraction: 1.5 is outside 0..1");
  EXPECT_EQ(errorOf("min_intra_allreduce_busbw = fast\n"),
            "bad.txt:1: min_intra_allreduce_busbw: 'fast' is not a number");
  EXPECT_EQ(errorOf("min_intra_allreduce_busbw = nan\n"),
            "bad.txt:1: min_intra_allreduce_busbw: 'nan' is not a number");
  EXPECT_EQ(errorOf("min_intra_allreduce_busbw = 1e999\n"),
            "bad.txt:1: min_intra_allreduce_busbw: '1e999' is not a number");
  EXPECT_EQ(errorOf("gpus_per_node = 8.5\n"), "bad.txt:1: gpus_per_node: '8.5' is not a whole number");
  EXPECT_EQ(errorOf("gpus_per_node = 8\ngpus_per_node = 4\n"), "bad.txt:2: gpus_per_node given twice");
  EXPECT_EQ(errorOf("gpus_per_node = 8\nbase = pcie-8\n"), "bad.txt:2: base must come before every other key");
  EXPECT_EQ(errorOf("base = dgx-9000\n").rfind("bad.txt:1: base: unknown profile 'dgx-9000'", 0), 0u);
  EXPECT_EQ(errorOf("topology_class = FAST\n").rfind("bad.txt:1: topology_class: unknown class 'FAST'", 0), 0u);
  EXPECT_EQ(errorOf("min_plateau_bytes = 1Q\n"),
            "bad.txt:1: min_plateau_bytes: '1Q' is not a byte count such as 256M or 1G");
  EXPECT_EQ(errorOf("gpu_model =\n"), "bad.txt:1: gpu_model has no value");
  EXPECT_EQ(errorOf(" = 3\n"), "bad.txt:1: no key before '='");
  EXPECT_EQ(errorOf(std::string("gpu_model = H\x01" "100\n")), "bad.txt:1: control character in the line");
  EXPECT_EQ(errorOf("# only comments\n"), "bad.txt: the profile states no requirement");
  EXPECT_EQ(errorOf(std::string(2000, 'x')), "bad.txt:1: line longer than 1024 bytes");
  EXPECT_EQ(errorOf(std::string(70000, '\n')), "bad.txt: larger than 64 KiB; a profile is a few lines");
  // hostile bytes come back escaped and short
  EXPECT_EQ(errorOf("\xff\xfe = 1\n"), "bad.txt:1: unknown key '\\xff\\xfe' (base, name, topology_class, "
                                       "gpus_per_node, gpu_model, min_intra_allreduce_busbw, "
                                       "min_inter_allreduce_busbw_per_nic, nics_per_node, min_pair_fraction, "
                                       "min_scaling_efficiency, min_plateau_bytes, gpu_memory_gb, nic_rate_gbps, "
                                       "nics_per_gpu, gpudirect, numa_binding, gpu_memory_health, max_link_errors, "
                                       "min_line_rate_fraction)");
  EXPECT_EQ(errorOf("gpudirect = wanted\n"), "bad.txt:1: gpudirect: 'wanted' is not required or none");
  EXPECT_EQ(errorOf("min_line_rate_fraction = 1.5\n"), "bad.txt:1: min_line_rate_fraction: 1.5 is outside 0..1");
}

TEST(Profiles, ReadsAFileAndRefusesWhatIsNot) {
  const auto dir = std::filesystem::temp_directory_path() / ("fabricmap-profile-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "p.txt").string();
  std::ofstream(path) << "min_pair_fraction = 0.7\n";
  EXPECT_DOUBLE_EQ(*readProfileFile(path).minPairFraction, 0.7);
  EXPECT_THROW(readProfileFile((dir / "absent.txt").string()), core::UsageError);
  EXPECT_THROW(readProfileFile(dir.string()), core::UsageError);  // a directory
  std::filesystem::remove_all(dir);
}

TEST(Verdict, RecordedAndReadBack) {
  const auto dir = std::filesystem::temp_directory_path() / ("fabricmap-verdict-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "r.h5").string();
  std::filesystem::copy_file(FABRICMAP_TEST_TEMPLATES "/complete-copies-pairs.h5", path);
  EXPECT_FALSE(results::readVerdict(path));
  results::VerdictRecord v;
  v.pass = false;
  v.profile = "hgx-h100-8";
  v.checks = 12;
  v.failed = 2;
  v.reasons = "a\nb";
  results::writeVerdict(path, v);
  v.failed = 3;  // a second verify replaces the first verdict
  results::writeVerdict(path, v);
  const auto back = results::readVerdict(path);
  ASSERT_TRUE(back);
  EXPECT_FALSE(back->pass);
  EXPECT_EQ(back->profile, "hgx-h100-8");
  EXPECT_EQ(back->failed, 3);
  EXPECT_EQ(back->reasons, "a\nb");
  EXPECT_FALSE(std::filesystem::exists(path + ".verdict")) << "the copy was renamed over the file";
  EXPECT_THROW(results::writeVerdict((dir / "absent.h5").string(), v), core::UsageError);

  // show, --json and report read it with the rest of the file
  const results::ResultsFile file = results::readResults(path);
  ASSERT_TRUE(file.acceptance);
  EXPECT_EQ(file.acceptance->failed, 3);
  EXPECT_FALSE(file.steps.empty()) << "the measurements are still there";
  const auto j = results::toJson(file);
  EXPECT_EQ(j["acceptance"]["profile"], "hgx-h100-8");
  EXPECT_EQ(j["acceptance"]["verdict"], "fail");  // SCHEMA.md: the /verdict attributes, `verdict` among them
  EXPECT_EQ(j["acceptance"]["pass"], false);
  EXPECT_EQ(j["acceptance"]["reasons"], nlohmann::ordered_json::array({"a", "b"}));
  char* text = nullptr;
  std::size_t size = 0;
  std::FILE* out = open_memstream(&text, &size);
  results::printResults(out, file);
  std::fclose(out);
  const std::string shown(text, size);
  std::free(text);
  // the verdict is the first line of show and the headline of the report
  const std::string headline = "ACCEPTANCE: FAIL against profile hgx-h100-8: 3 of 12 checks failed, 9 passed, 0 missing";
  EXPECT_EQ(shown.rfind("# " + headline + "\n#   a\n#   b\n", 0), 0u) << shown;
  EXPECT_NE(shown.find("# acceptance: FAIL against profile hgx-h100-8"), std::string::npos) << shown;
  const std::string html = results::renderReport(file);
  const auto box = html.find("<div class=\"verdict v-fail\">" + headline + "</div>");
  EXPECT_NE(box, std::string::npos);
  EXPECT_LT(box, html.find("Findings: "));
  const auto unrecorded = results::toJson(results::readResults(FABRICMAP_TEST_TEMPLATES "/complete-copies-pairs.h5"));
  EXPECT_TRUE(unrecorded["acceptance"].is_null());
  std::filesystem::remove_all(dir);
}

// When the copy cannot be made (here a non-empty directory sits where it would go) nothing
// changes: the file keeps its measurements and its previous verdict, and nothing is left behind.
TEST(Verdict, AFailedRecordLeavesTheFileAsItWas) {
  const auto dir = std::filesystem::temp_directory_path() / ("fabricmap-verdict-fail-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "r.h5").string();
  std::filesystem::copy_file(FABRICMAP_TEST_TEMPLATES "/complete-copies-pairs.h5", path);
  results::VerdictRecord v;
  v.pass = true;
  v.profile = "first";
  results::writeVerdict(path, v);
  const auto before = std::filesystem::file_size(path);
  std::filesystem::create_directories(path + ".verdict/occupied");
  v.profile = "second";
  try {
    results::writeVerdict(path, v);
    ADD_FAILURE() << "recorded over a blocked copy";
  } catch (const core::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot record the verdict"), std::string::npos) << e.what();
  }
  EXPECT_EQ(std::filesystem::file_size(path), before);
  const auto back = results::readVerdict(path);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->profile, "first");
  EXPECT_TRUE(results::readResults(path).complete);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace fabricmap::orchestrator
