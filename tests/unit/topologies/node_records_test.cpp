// A node's discovered topology recorded for a run: class, NICs, link codes, each rank's GPU by bus
// id; and the CPUs a host's ranks share.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "topologies/classify.h"
#include "topologies/host_probe.h"
#include "topologies/node_records.h"
#include "topologies/rank_map.h"

namespace fabricmap::topologies {
namespace {

core::Topology twoNodesOfTwo() {
  std::vector<core::HostProbe> probes;
  for (int r = 0; r < 4; ++r) {
    core::HostProbe p{.hostname = std::string(r < 2 ? "a" : "b")};
    p.sharedLeader = r < 2 ? 0 : 2;
    p.gpuCount = 2;
    probes.push_back(p);
  }
  return buildTopology(probes, 0);
}

GpuTopology bridgedPair() {
  GpuTopology t = makeTopology(2, 1);
  t.gpus[0].name = t.gpus[1].name = "NVIDIA RTX A6000";
  t.gpus[0].pciBusId = "0000:3b:00.0";
  t.gpus[1].pciBusId = "0000:5e:00.0";
  t.gpus[0].uuid = "GPU-aaa";
  t.gpus[1].uuid = "GPU-bbb";
  t.gpus[1].memoryBytes = 51527024640;
  t.gpuLinks[0][1] = t.gpuLinks[1][0] = Link{LinkKind::kNvLink, 4, Tristate::kYes};
  t.nics[0].name = "mlx5_0";
  t.nics[0].rateGbps = 200;
  t.nics[0].linkLayer = LinkLayer::kInfiniBand;
  t.nics[0].rdma = true;
  t.gpuNic[0][0] = LinkKind::kPix;
  t.gpuNic[1][0] = LinkKind::kSys;
  t.nvswitch = Tristate::kNo;
  return t;
}

TEST(NodeRecords, NodeAndRanksFromTheDescription) {
  core::Topology topo = twoNodesOfTwo();
  const GpuTopology gpus = bridgedPair();
  // ranks 2 and 3 (node 1) measure with GPU 1 and GPU 0, as CUDA names their bus ids
  const std::vector<std::string> busIds{"", "", "0000:5E:00.0", "00000000:3B:00.0"};
  applyNodeDescription(topo, 1, describeNode(gpus, classify(gpus)), busIds);
  const core::NodeRecord& node = topo.nodes[1];
  EXPECT_EQ(node.topologyClass, "NVLINK_PAIRS");
  EXPECT_EQ(node.nvswitch, "no");
  EXPECT_EQ(node.nics, "mlx5_0 200G IB");
  EXPECT_EQ(node.gpuLinkCount(), 2);
  EXPECT_EQ(node.gpuLinks, (std::vector<std::string>{"X", "NV4", "NV4", "X"}));
  EXPECT_NE(node.topologyWarnings.find("GPU1"), std::string::npos) << node.topologyWarnings;  // SYS to its NIC
  EXPECT_EQ(topo.ranks[2].gpuIndex, 1);
  EXPECT_EQ(topo.ranks[2].gpuUuid, "GPU-bbb");
  EXPECT_EQ(topo.ranks[2].gpuName, "NVIDIA RTX A6000");
  EXPECT_EQ(topo.ranks[2].gpuMemoryBytes, 51527024640u);
  EXPECT_EQ(topo.ranks[2].nic, "mlx5_0");
  EXPECT_EQ(topo.ranks[2].nicPath, "SYS");
  EXPECT_EQ(topo.ranks[3].gpuIndex, 0);
  EXPECT_EQ(topo.ranks[3].nicPath, "PIX");
  // node 0 untouched
  EXPECT_EQ(topo.nodes[0].topologyClass, "UNCLASSIFIED");
  EXPECT_EQ(topo.ranks[0].gpuIndex, -1);
}

// Every GPU of the node becomes an /inventory/gpus row, its memory's health as NVML said it.
TEST(NodeRecords, EveryGpuAnInventoryRow) {
  core::Topology topo = twoNodesOfTwo();
  GpuTopology gpus = bridgedPair();
  gpus.gpus[0].numaNode = 1;
  gpus.gpus[1].health = {.ecc = Tristate::kYes,
                         .eccPending = Tristate::kNo,
                         .retiredSingleBit = 2,
                         .retiredDoubleBit = 0,
                         .retirePending = Tristate::kNo,
                         .remappedCorrectable = 0,
                         .remappedUncorrectable = 7,
                         .remapPending = Tristate::kYes,
                         .remapFailed = Tristate::kNo};
  applyNodeDescription(topo, 1, describeNode(gpus, classify(gpus)), {});
  const auto& rows = topo.inventory.gpus;
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].node, 1);
  EXPECT_EQ(rows[0].index, 0);
  EXPECT_EQ(rows[0].busId, "0000:3b:00.0");
  EXPECT_EQ(rows[0].name, "NVIDIA RTX A6000");
  EXPECT_EQ(rows[0].numaNode, 1);
  EXPECT_EQ(rows[0].nic, "mlx5_0");
  EXPECT_EQ(rows[0].nicPath, "PIX");
  EXPECT_EQ(rows[0].ecc, "unknown");  // NVML said nothing of it
  EXPECT_EQ(rows[0].remappedUncorrectable, -1);
  EXPECT_EQ(rows[1].memoryBytes, 51527024640u);
  EXPECT_EQ(rows[1].numaNode, -1);
  EXPECT_EQ(rows[1].nicPath, "SYS");
  EXPECT_EQ(rows[1].ecc, "yes");
  EXPECT_EQ(rows[1].eccPending, "no");
  EXPECT_EQ(rows[1].retiredSingleBit, 2);
  EXPECT_EQ(rows[1].retiredDoubleBit, 0);
  EXPECT_EQ(rows[1].retirePending, "no");
  EXPECT_EQ(rows[1].remappedCorrectable, 0);
  EXPECT_EQ(rows[1].remappedUncorrectable, 7);
  EXPECT_EQ(rows[1].remapPending, "yes");
  EXPECT_EQ(rows[1].remapFailed, "no");
  // hostile descriptions give what they can, and never throw
  EXPECT_TRUE(gpuInventoryRows(nlohmann::json::parse(R"({"gpu_list": 3})"), 0).empty());
  const auto odd = gpuInventoryRows(
      nlohmann::json::parse(R"({"gpu_list": [1, {"index": "x", "memory_health": [], "memory_bytes": -4}]})"), 2);
  ASSERT_EQ(odd.size(), 1u);
  EXPECT_EQ(odd[0].node, 2);
  EXPECT_EQ(odd[0].index, -1);
  EXPECT_EQ(odd[0].memoryBytes, 0u);
  EXPECT_EQ(odd[0].remapFailed, "unknown");
}

TEST(NodeRecords, GpusThatDiscoveryCannotSeeStayUnclassified) {
  core::Topology topo = twoNodesOfTwo();  // the driver lists 2 GPUs per node
  const GpuTopology none = makeTopology(0, 0);  // NVML missing
  applyNodeDescription(topo, 0, describeNode(none, classify(none)), {});
  EXPECT_EQ(topo.nodes[0].topologyClass, "UNCLASSIFIED");
  EXPECT_EQ(topo.nodes[0].gpus, 2);
  EXPECT_TRUE(topo.nodes[0].gpuLinks.empty());
}

TEST(NodeRecords, BusIdsNormalize) {
  EXPECT_EQ(normalizeBusId("00000000:3B:00.0"), "0000:3b:00.0");
  EXPECT_EQ(normalizeBusId("0000:3b:00.0"), "0000:3b:00.0");
}

// Every process of this machine reads the same boot id (a UUID, 36 characters); a node carries
// its ranks' so that nodes of one machine can be told apart from separate ones.
TEST(NodeRecords, TheKernelsBootIdIsReadAndKeptPerNode) {
  std::ifstream file("/proc/sys/kernel/random/boot_id");
  std::string id;
  if (!std::getline(file, id)) GTEST_SKIP() << "no /proc/sys/kernel/random/boot_id here";
  EXPECT_EQ(id.size(), 36u);
  EXPECT_EQ(probeHost().bootId, id);
  std::vector<core::HostProbe> probes(4, core::HostProbe{.hostname = std::string("h")});
  for (int r = 0; r < 4; ++r) {
    auto& p = probes[static_cast<std::size_t>(r)];
    p.hostname = r < 2 ? "h0" : "h1";
    p.sharedLeader = r < 2 ? 0 : 2;
    p.bootId = r < 2 ? id : "";
  }
  const core::Topology t = buildTopology(probes, 0);
  ASSERT_EQ(t.nodes.size(), 2u);
  EXPECT_EQ(t.nodes[0].bootId, id);
  EXPECT_EQ(t.nodes[1].bootId, "");
}

TEST(NodeRecords, HostCpusAreTheUnionOfTheRanksMasks) {
  // two ranks bound to one core each: the host has 2 CPUs for them, not 1
  std::vector<core::HostProbe> probes(2, core::HostProbe{.hostname = std::string("h")});
  for (int r = 0; r < 2; ++r) {
    probes[static_cast<std::size_t>(r)].cpus = 1;
    probes[static_cast<std::size_t>(r)].cpuMask = {std::uint64_t{1} << r};
    probes[static_cast<std::size_t>(r)].sharedLeader = 0;
  }
  EXPECT_EQ(buildTopology(probes, 0).nodes[0].cpus, 2);
  // unbound ranks see all CPUs: the union is the same set
  for (auto& p : probes) p.cpuMask = {0xffu};
  EXPECT_EQ(buildTopology(probes, 0).nodes[0].cpus, 8);
}

}  // namespace
}  // namespace fabricmap::topologies
