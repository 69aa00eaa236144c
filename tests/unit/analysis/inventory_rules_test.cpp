// The inventory rules over the saved sysfs trees (tests/data/sysfs): each faulty tree raises exactly
// its finding, the healthy one none; and the PCIe cases a tree does not hold.
#include <gtest/gtest.h>

#include <filesystem>
#include <tuple>

#include <fmt/format.h>

#include "orchestrator/analysis/inventory_rules.h"
#include "topologies/inventory_records.h"

namespace fabricmap::orchestrator {
namespace {

using topologies::Inventory;

Inventory tree(const std::string& name) {
  return topologies::readInventory(std::filesystem::path(FABRICMAP_TEST_DATA) / "sysfs" / name);
}

const InventorySubject kAt{"hgx-07", 3};

std::string describe(const std::vector<core::Finding>& all) {
  std::string s;
  for (const auto& f : all) s += fmt::format("[{}: {}] ", core::name(f.kind), f.message);
  return s.empty() ? "none" : s;
}

TEST(InventoryRules, TheHealthyNodeRaisesNothing) {
  EXPECT_TRUE(inventoryFindings(tree("healthy-8gpu-8nic"), kAt).empty())
      << describe(inventoryFindings(tree("healthy-8gpu-8nic"), kAt));
  EXPECT_TRUE(linkErrorFindings(tree("healthy-8gpu-8nic"), tree("healthy-8gpu-8nic"), kAt).empty());
}

TEST(InventoryRules, ANicAtHalfRateAndAPortDown) {
  const auto found = inventoryFindings(tree("nic-200g-port-down"), kAt);
  ASSERT_EQ(found.size(), 2u) << describe(found);
  EXPECT_EQ(found[0].kind, core::FindingKind::kNicDown);
  EXPECT_EQ(found[0].severity, core::Severity::kError);  // its only port
  EXPECT_EQ(found[0].subject, "hgx-07: mlx5_5 port 1");
  EXPECT_EQ(found[0].nodeA, 3);
  EXPECT_EQ(found[0].confidence, 1.0);
  EXPECT_NE(found[0].message.find("port state DOWN, physical state Disabled"), std::string::npos) << found[0].message;
  EXPECT_EQ(found[1].kind, core::FindingKind::kNicRateMismatch);
  EXPECT_EQ(found[1].severity, core::Severity::kWarning);
  EXPECT_EQ(found[1].subject, "hgx-07: mlx5_3 port 1");
  EXPECT_EQ(found[1].measured, 200);
  EXPECT_EQ(found[1].expected, 400);
  EXPECT_NE(found[1].message.find("200 Gb/s (4X HDR) where 6 of the node's active IB ports run 400 Gb/s (4X NDR)"),
            std::string::npos)
      << found[1].message;
}

TEST(InventoryRules, AGpuAtPcieX8) {
  const auto found = inventoryFindings(tree("gpu-pcie-x8"), kAt);
  ASSERT_EQ(found.size(), 1u) << describe(found);
  EXPECT_EQ(found[0].kind, core::FindingKind::kPcieDowntrained);
  EXPECT_EQ(found[0].severity, core::Severity::kWarning);
  EXPECT_EQ(found[0].subject, "hgx-07: GPU 0000:4d:00.0");
  EXPECT_DOUBLE_EQ(found[0].ratio, 0.5);
  EXPECT_NE(found[0].message.find("x8 at 32 GT/s where it can do x16 at 32 GT/s"), std::string::npos)
      << found[0].message;
}

TEST(InventoryRules, NoPeerMemoryModule) {
  const auto found = inventoryFindings(tree("no-peermem"), kAt);
  ASSERT_EQ(found.size(), 1u) << describe(found);
  EXPECT_EQ(found[0].kind, core::FindingKind::kNoGpuDirect);
  EXPECT_EQ(found[0].severity, core::Severity::kWarning);
}

TEST(InventoryRules, CountersThatGrewDuringTheRun) {
  const auto found = linkErrorFindings(tree("counters-before"), tree("counters-after"), kAt);
  ASSERT_EQ(found.size(), 2u) << describe(found);
  EXPECT_EQ(found[0].kind, core::FindingKind::kLinkErrors);
  EXPECT_EQ(found[0].severity, core::Severity::kError);  // link_downed: the link went down
  EXPECT_EQ(found[0].subject, "hgx-07: mlx5_2 port 1");
  EXPECT_EQ(found[1].severity, core::Severity::kWarning);
  EXPECT_EQ(found[1].measured, 12);
  EXPECT_NE(found[1].message.find("symbol_error grew by 12"), std::string::npos) << found[1].message;
  // the counts a node already had at the start raise nothing
  EXPECT_TRUE(inventoryFindings(tree("counters-before"), kAt).empty());
}

topologies::PcieLink link(bool gpu, double speed, int width, double slotSpeed = 32) {
  topologies::PcieLink l;
  l.busId = "0000:1b:00.0";
  l.device = gpu ? "GPU" : "mlx5_0";
  l.gpu = gpu;
  l.speedGTs = speed;
  l.width = width;
  l.maxSpeedGTs = 32;
  l.maxWidth = 16;
  l.slotMaxSpeedGTs = slotSpeed;
  l.slotMaxWidth = 16;
  return l;
}

TEST(InventoryRules, PcieSpeedBelowItsMaximum) {
  Inventory inv;
  inv.pcie = {link(true, 2.5, 16),   // an idle GPU: information
              link(false, 8, 16),    // a NIC at Gen3 of Gen5: a quarter, error
              link(false, 16, 16, 16),  // a Gen5 NIC in a Gen4 slot: information
              link(false, 32, 16), link(true, 0, 0)};  // fine; unknown: nothing
  const auto found = inventoryFindings(inv, {});
  ASSERT_EQ(found.size(), 3u) << describe(found);
  EXPECT_EQ(found[0].severity, core::Severity::kInfo);
  EXPECT_NE(found[0].message.find("a GPU lowers its link speed when idle"), std::string::npos) << found[0].message;
  EXPECT_EQ(found[0].subject, "GPU 0000:1b:00.0");
  EXPECT_EQ(found[1].severity, core::Severity::kError);
  EXPECT_DOUBLE_EQ(found[1].ratio, 0.25);
  EXPECT_EQ(found[2].severity, core::Severity::kInfo);
  EXPECT_NE(found[2].message.find("as its slot allows"), std::string::npos) << found[2].message;
}

// Four nodes; on one every port trained at HDR (200 Gb/s) while the others run NDR: the node is
// equal within itself, so only the comparison across nodes names it.
TEST(InventoryRules, ANodeWhosePortsAllRunSlowerThanTheOtherNodes) {
  std::vector<NodeInventory> nodes;
  for (int n = 0; n < 4; ++n) nodes.push_back({{fmt::format("hgx-{:02}", n), n}, tree("healthy-8gpu-8nic")});
  for (auto& p : nodes[2].inventory.ports) {
    p.rateGbps = 200;
    p.speed = "HDR";
  }
  EXPECT_TRUE(inventoryFindings(nodes[2].inventory, nodes[2].at).empty());
  const auto found = crossNodeRateFindings(nodes);
  ASSERT_EQ(found.size(), 1u) << describe(found);
  EXPECT_EQ(found[0].kind, core::FindingKind::kNicRateMismatch);
  EXPECT_EQ(found[0].nodeA, 2);
  EXPECT_EQ(found[0].severity, core::Severity::kWarning);
  EXPECT_DOUBLE_EQ(found[0].ratio, 0.5);
  EXPECT_NE(found[0].message.find("200 Gb/s (4X HDR) where 3 of 4 nodes' run 400 Gb/s (4X NDR)"), std::string::npos)
      << found[0].message;
  // every node alike, or one node faster than the rest: nothing
  for (auto& n : nodes) n.inventory = nodes[2].inventory;
  EXPECT_TRUE(crossNodeRateFindings(nodes).empty());
  nodes[0].inventory = tree("healthy-8gpu-8nic");
  EXPECT_TRUE(crossNodeRateFindings(nodes).empty()) << describe(crossNodeRateFindings(nodes));
}

// A mixed node as NVML names its GPUs: two A100 40 GB among 80 GB ones (one model), each GPU
// measured by two ranks (named once); H100s beside them are another model.
core::Topology mixedMemory() {
  core::Topology t;
  for (const char* name : {"a100-03", "h100-01"}) {
    core::NodeRecord node;
    node.node = static_cast<int>(t.nodes.size());
    node.name = name;
    t.nodes.push_back(node);
  }
  for (int r = 0; r < 10; ++r) {
    core::RankRecord rank;
    rank.rank = r;
    rank.node = r < 8 ? 0 : 1;
    rank.gpuIndex = r < 8 ? r / 2 : r - 8;
    rank.gpuUuid = fmt::format("GPU-{}-{}", rank.node, rank.gpuIndex);
    const bool small = rank.node == 0 && rank.gpuIndex >= 2;
    rank.gpuName = rank.node == 1 ? "NVIDIA H100 80GB HBM3" : small ? "NVIDIA A100-SXM4-40GB" : "NVIDIA A100-SXM4-80GB";
    rank.gpuMemoryBytes = (small ? 40ull : 80ull) << 30;
    t.ranks.push_back(rank);
  }
  return t;
}

TEST(InventoryRules, GpusWithLessMemoryThanTheirModelsOthers) {
  const auto found = gpuMemoryFindings(mixedMemory());
  ASSERT_EQ(found.size(), 2u) << describe(found);
  EXPECT_EQ(found[0].kind, core::FindingKind::kGpuMemory);
  EXPECT_EQ(found[0].subject, "a100-03: GPU 2");
  EXPECT_EQ(found[0].rank, 4);
  EXPECT_EQ(found[1].subject, "a100-03: GPU 3");
  EXPECT_DOUBLE_EQ(found[0].ratio, 0.5);
  EXPECT_NE(found[0].message.find("NVIDIA A100-SXM4-40GB): 40 GiB where 2 of the run's 4 GPUs of this model have 80 GiB"),
            std::string::npos)
      << found[0].message;
  // a minimum asked for: every GPU below it, whatever the others have
  const auto below = gpuMemoryFindings(mixedMemory(), 60);
  EXPECT_EQ(below.size(), 2u) << describe(below);
  const auto all = gpuMemoryFindings(mixedMemory(), 96);
  EXPECT_EQ(all.size(), 6u) << describe(all);
  EXPECT_NE(all.back().message.find("below the 96 GiB asked for"), std::string::npos) << all.back().message;
  // no memory known (a CPU run): nothing
  core::Topology cpu = mixedMemory();
  for (auto& r : cpu.ranks) r.gpuMemoryBytes = 0;
  EXPECT_TRUE(gpuMemoryFindings(cpu, 80).empty());
}

// Ranks on the saved HGX node (GPUs 0-3 near CPUs 0-55,112-167, NUMA 0; GPUs 4-7 near
// 56-111,168-223, NUMA 1), bound as srun --cpu-bind would, wrongly, or not at all.
TEST(InventoryRules, RanksBoundAwayFromTheirGpu) {
  core::Topology t = mixedMemory();
  t.inventory = topologies::inventoryRows(tree("healthy-8gpu-8nic"), 0);
  const std::vector<std::pair<std::string, std::string>> ranks{
      {"00000000:1B:00.0", "0-13"},     // GPU 0, its own socket's cores
      {"00000000:9D:00.0", "0-13"},     // GPU 4 (NUMA 1), bound to NUMA 0: warning
      {"00000000:AE:00.0", "0-223"},    // GPU 5, not bound: information
      {"00000000:BD:00.0", ""},         // its CPUs unknown: nothing
      {"00000000:77:00.0", "0-13"}};    // a GPU the inventory does not list: nothing
  t.ranks.resize(ranks.size());
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    t.ranks[i].rank = static_cast<int>(i);
    t.ranks[i].node = 0;
    std::tie(t.ranks[i].gpuBusId, t.ranks[i].cpus) = ranks[i];
  }
  const auto found = bindingFindings(t);
  ASSERT_EQ(found.size(), 2u) << describe(found);
  EXPECT_EQ(found[0].kind, core::FindingKind::kBinding);
  EXPECT_EQ(found[0].severity, core::Severity::kWarning);
  EXPECT_EQ(found[0].rank, 1);
  EXPECT_EQ(found[0].subject, "a100-03: rank 1");
  EXPECT_NE(found[0].message.find("may run on CPUs 0-13 (0 of them near its GPU 0000:9d:00.0, whose CPUs are "
                                  "56-111,168-223, NUMA 1)"),
            std::string::npos)
      << found[0].message;
  EXPECT_EQ(found[1].severity, core::Severity::kInfo);
  EXPECT_EQ(found[1].rank, 2);
  EXPECT_DOUBLE_EQ(found[1].measured, 112.0 / 224.0);
}

// A rank near its GPU whose NIC (as the GPU topology named it) hangs off the other socket: said, as
// information; recordBindings writes both answers on the ranks.
TEST(InventoryRules, ARankNearItsGpuButNotItsNic) {
  core::Topology t = mixedMemory();
  t.inventory = topologies::inventoryRows(tree("healthy-8gpu-8nic"), 0);
  const std::vector<std::tuple<std::string, std::string, std::string>> ranks{
      {"0000:1b:00.0", "mlx5_0", "0-13"},    // GPU 0 and its NIC on NUMA 0: nothing
      {"0000:2d:00.0", "mlx5_4", "0-13"},    // GPU 1 on NUMA 0, its NIC on NUMA 1: information
      {"0000:9d:00.0", "mlx5_4", "0-13"},    // GPU 4 and NIC on NUMA 1, bound to NUMA 0: warning
      {"0000:ae:00.0", "mlx5_9", "56-60"}};  // a NIC the inventory does not list: GPU judged alone
  t.ranks.resize(ranks.size());
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    t.ranks[i].rank = static_cast<int>(i);
    t.ranks[i].node = 0;
    std::tie(t.ranks[i].gpuBusId, t.ranks[i].nic, t.ranks[i].cpus) = ranks[i];
  }
  const auto found = bindingFindings(t);
  ASSERT_EQ(found.size(), 2u) << describe(found);
  EXPECT_EQ(found[0].rank, 1);
  EXPECT_EQ(found[0].severity, core::Severity::kInfo);
  EXPECT_NE(found[0].message.find("0 of them near its NIC mlx5_4 (56-111,168-223, NUMA 1)"), std::string::npos)
      << found[0].message;
  EXPECT_NE(found[0].message.find("different sockets"), std::string::npos) << found[0].message;
  EXPECT_EQ(found[1].rank, 2);
  EXPECT_EQ(found[1].severity, core::Severity::kWarning);

  recordBindings(t);
  const std::vector<std::pair<std::string, std::string>> near{{"yes", "yes"}, {"yes", "no"}, {"no", "no"}, {"yes", ""}};
  for (std::size_t i = 0; i < near.size(); ++i) {
    EXPECT_EQ(t.ranks[i].nearGpu, near[i].first) << "rank " << i;
    EXPECT_EQ(t.ranks[i].nearNic, near[i].second) << "rank " << i;
  }
  t.ranks[0].cpus = "0-13,56";  // one CPU on the far socket
  recordBindings(t);
  EXPECT_EQ(t.ranks[0].nearGpu, "partly");
}

// NVML's view of each GPU's memory: one finding per GPU at its worst, nothing where all is well or
// NVML could not say.
TEST(InventoryRules, GpuMemoryHealth) {
  core::Topology t = mixedMemory();
  const auto gpu = [](int index, auto&& set) {
    core::GpuInventoryRecord g;
    g.node = 0;
    g.index = index;
    g.busId = fmt::format("0000:{:02x}:00.0", 0x1b + index);
    g.name = "NVIDIA A100-SXM4-80GB";
    g.ecc = g.eccPending = "yes";
    g.retirePending = g.remapPending = g.remapFailed = "no";
    g.retiredSingleBit = g.retiredDoubleBit = g.remappedCorrectable = g.remappedUncorrectable = 0;
    set(g);
    return g;
  };
  t.inventory.gpus = {
      gpu(0, [](auto&) {}),                                       // healthy
      gpu(1, [](auto& g) { g.remapFailed = "yes"; g.remappedUncorrectable = 3; }),
      gpu(2, [](auto& g) { g.remapPending = "yes"; }),
      gpu(3, [](auto& g) { g.ecc = g.eccPending = "no"; }),
      gpu(4, [](auto& g) { g.remappedCorrectable = 2; }),        // repaired: information
      gpu(5, [](auto& g) { g.retiredDoubleBit = 1; g.retiredSingleBit = 4; }),
      gpu(6, [](auto& g) {                                        // NVML could not say
        g.ecc = g.eccPending = g.retirePending = g.remapPending = g.remapFailed = "unknown";
        g.retiredSingleBit = g.retiredDoubleBit = g.remappedCorrectable = g.remappedUncorrectable = -1;
      }),
  };
  t.ranks[0].gpuBusId = "00000000:1C:00.0";  // GPU 1 is rank 0's
  const auto found = gpuHealthFindings(t);
  ASSERT_EQ(found.size(), 5u) << describe(found);
  const std::vector<std::pair<std::string, core::Severity>> expected{{"a100-03: GPU 1", core::Severity::kError},
                                                                      {"a100-03: GPU 2", core::Severity::kWarning},
                                                                      {"a100-03: GPU 3", core::Severity::kWarning},
                                                                      {"a100-03: GPU 4", core::Severity::kInfo},
                                                                      {"a100-03: GPU 5", core::Severity::kWarning}};
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(found[i].kind, core::FindingKind::kGpuMemory);
    EXPECT_EQ(found[i].subject, expected[i].first);
    EXPECT_EQ(found[i].severity, expected[i].second) << found[i].message;
  }
  EXPECT_EQ(found[0].rank, 0);
  EXPECT_EQ(found[1].rank, -1);
  EXPECT_NE(found[0].message.find("a memory row remap failed"), std::string::npos) << found[0].message;
  EXPECT_NE(found[0].message.find("3 rows remapped (3 uncorrectable, 0 correctable errors)"), std::string::npos)
      << found[0].message;
  EXPECT_DOUBLE_EQ(found[0].measured, 3);
  EXPECT_NE(found[2].message.find("ECC is off: memory errors go undetected"), std::string::npos) << found[2].message;
  EXPECT_NE(found[4].message.find("1 page retired for double-bit ECC errors; 4 pages retired for single-bit"),
            std::string::npos)
      << found[4].message;
}

TEST(InventoryRules, EveryRuleIsListed) {
  std::vector<std::string> names;
  for (const AnalysisRule& r : inventoryRules()) names.emplace_back(r.name);
  EXPECT_EQ(names, (std::vector<std::string>{"nic_down", "nic_rate_mismatch", "pcie_downtrained", "no_gpudirect",
                                             "link_errors", "binding", "gpu_memory", "gpu_memory_health"}));
}

}  // namespace
}  // namespace fabricmap::orchestrator
