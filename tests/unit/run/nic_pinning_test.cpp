// --nic-per-rank: which NIC each rank's library is pinned to, from the ranks' GPUs' nearest NICs
// and the nodes' inventory, or from a list.
#include "orchestrator/run/nic_pinning.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace fabricmap::orchestrator {
namespace {

core::NicRecord rdma(int node, const std::string& device, int port, const std::string& state) {
  core::NicRecord n;
  n.node = node;
  n.device = device;
  n.port = port;
  n.kind = "rdma";
  n.state = state;
  return n;
}

core::NicRecord ethernet(int node, const std::string& device, const std::string& state) {
  core::NicRecord n;
  n.node = node;
  n.device = device;
  n.kind = "ethernet";
  n.state = state;
  return n;
}

// Node 0: two ranks with GPUs whose nearest NICs are mlx5_0 (port 1 up) and mlx5_1 (port 1 down,
// port 2 up). Node 1: three ranks without GPUs, two active RDMA ports and one down. Node 2: two
// ranks, Ethernet only (lo is not listed by the inventory). Node 3: one rank, nothing known.
core::Topology sampleTopology() {
  core::Topology t;
  const int nodes[] = {0, 0, 1, 1, 1, 2, 2, 3};
  const int locals[] = {0, 1, 0, 1, 2, 0, 1, 0};
  for (int r = 0; r < 8; ++r) {
    core::RankRecord rank;
    rank.rank = r;
    rank.node = nodes[r];
    rank.localRank = locals[r];
    t.ranks.push_back(rank);
  }
  t.ranks[0].nic = "mlx5_0";
  t.ranks[1].nic = "mlx5_1";
  for (int n = 0; n < 4; ++n) {
    core::NodeRecord node;
    node.node = n;
    node.name = "node" + std::to_string(n);
    t.nodes.push_back(node);
  }
  t.inventory.nics = {rdma(0, "mlx5_0", 1, "ACTIVE"), rdma(0, "mlx5_1", 1, "DOWN"), rdma(0, "mlx5_1", 2, "ACTIVE"),
                      rdma(1, "mlx5_2", 1, "ACTIVE"), rdma(1, "mlx5_0", 1, "ACTIVE"), rdma(1, "mlx5_1", 1, "DOWN"),
                      ethernet(2, "eth1", "up"), ethernet(2, "eth0", "up"), ethernet(2, "eth2", "down")};
  return t;
}

std::vector<std::string> names(const std::vector<NicChoice>& choices) {
  std::vector<std::string> out;
  for (const NicChoice& c : choices) out.push_back(c.name());
  return out;
}

TEST(NicPinning, AutoTakesTheGpusNearestNicElseTheNodesPortsInTurn) {
  const std::vector<std::string> got = names(pinNics(sampleTopology(), "auto"));
  const std::vector<std::string> want{"mlx5_0:1", "mlx5_1:2",              // nearest their GPUs, active port
                                      "mlx5_0:1", "mlx5_2:1", "mlx5_0:1",  // active ports in turn
                                      "eth0",     "eth1",                  // interfaces that are up
                                      ""};                                 // nothing known: the library's choice
  EXPECT_EQ(got, want);
}

TEST(NicPinning, AListIsTakenByLocalRankAndCheckedAgainstTheInventory) {
  core::Topology t = sampleTopology();
  t.inventory.nics.push_back(rdma(2, "mlx5_0", 1, "ACTIVE"));
  t.inventory.nics.push_back(rdma(2, "mlx5_1", 1, "ACTIVE"));
  t.inventory.nics.push_back(rdma(1, "mlx5_1", 2, "ACTIVE"));
  const std::vector<std::string> got = names(pinNics(t, "mlx5_0:1,mlx5_1"));
  // a device named without a port: its active port on each node
  const std::vector<std::string> want{"mlx5_0:1", "mlx5_1:2", "mlx5_0:1", "mlx5_1:2", "mlx5_0:1", "mlx5_0:1", "mlx5_1:1",
                                      "mlx5_0:1"};  // node 3: nothing known, the list trusted
  EXPECT_EQ(got, want);
  try {
    (void)pinNics(sampleTopology(), "mlx5_0:1,mlx5_1:1");  // node 2 has neither
    ADD_FAILURE() << "a NIC node 2 lacks was taken";
  } catch (const core::UsageError& e) {
    EXPECT_STREQ(e.what(), "--nic-per-rank: node 2 (node2) has no NIC mlx5_0:1 (it has eth0, eth1, eth2)");
  }
}

TEST(NicPinning, ABadEntryOrNoModeIsRefusedOrNothing) {
  for (const char* bad : {"mlx5_0:", ":1", "mlx5_0:x", "mlx5_0:0", "a b", ","}) {
    EXPECT_THROW((void)pinNics(sampleTopology(), bad), core::UsageError) << bad;
  }
  const std::vector<NicChoice> none = pinNics(sampleTopology(), "");
  ASSERT_EQ(none.size(), 8u);
  for (const NicChoice& c : none) EXPECT_TRUE(c.empty());
}

}  // namespace
}  // namespace fabricmap::orchestrator
