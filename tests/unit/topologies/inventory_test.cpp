// The node inventory read from saved sysfs trees (tests/data/sysfs, written by make_trees.py) and
// from this machine's /sys, and the parsers of the kernel's texts.
#include <gtest/gtest.h>

#include "tests/unit/topologies/topo_support.h"
#include "topologies/inventory.h"
#include "topologies/inventory_records.h"

namespace fabricmap::topologies {
namespace {

fs::path tree(const std::string& name) { return fs::path(FABRICMAP_TEST_DATA) / "sysfs" / name; }

TEST(Inventory, TheKernelsTexts) {
  const auto ndr = parseIbRateText("400 Gb/sec (4X NDR)");
  ASSERT_TRUE(ndr.has_value());
  EXPECT_EQ(ndr->width, 4);
  EXPECT_EQ(ndr->speed, "NDR");
  EXPECT_EQ(parseIbRateText("100 Gb/sec (2X HDR)")->width, 2);
  EXPECT_EQ(parseIbRateText("10 Gb/sec (4X)")->speed, "");
  EXPECT_FALSE(parseIbRateText("400 Gb/sec").has_value());
  EXPECT_FALSE(parseIbRateText("(X NDR)").has_value());
  EXPECT_FALSE(parseIbRateText(")(").has_value());
  EXPECT_EQ(parsePcieSpeed("32.0 GT/s PCIe"), 32.0);
  EXPECT_EQ(parsePcieSpeed("2.5 GT/s"), 2.5);
  EXPECT_FALSE(parsePcieSpeed("Unknown speed").has_value());
  EXPECT_FALSE(parsePcieSpeed("infinity GT/s").has_value());  // found by fuzzing
  EXPECT_FALSE(parsePcieSpeed("").has_value());
  EXPECT_EQ(portStateName("4: ACTIVE"), "ACTIVE");
  EXPECT_EQ(portStateName("5: LinkUp "), "LinkUp");
  EXPECT_EQ(portStateName("ACTIVE"), "ACTIVE");
}

TEST(Inventory, AHealthyHgxNode) {
  const Inventory inv = readInventory(tree("healthy-8gpu-8nic"));
  ASSERT_EQ(inv.ports.size(), 8u);
  const NicPort& p = inv.ports[0];
  EXPECT_EQ(p.device, "mlx5_0");
  EXPECT_EQ(p.port, 1);
  EXPECT_TRUE(p.active());
  EXPECT_TRUE(p.linkUp());
  EXPECT_EQ(p.rateGbps, 400);
  EXPECT_EQ(p.width, 4);
  EXPECT_EQ(p.speed, "NDR");
  EXPECT_EQ(p.linkLayer, LinkLayer::kInfiniBand);
  EXPECT_EQ(p.netdev, "ibp28s0");
  EXPECT_EQ(p.pciBusId, "0000:1c:00.0");
  EXPECT_EQ(p.numaNode, 0);
  EXPECT_EQ(p.counters.size(), std::size(kInventoryCounters));
  EXPECT_EQ(p.counters.at("symbol_error"), 0u);
  EXPECT_EQ(inv.ports[7].device, "mlx5_7");
  EXPECT_EQ(inv.ports[7].numaNode, 1);
  // the management port only: not lo (virtual), not the IPoIB netdevs of the RDMA ports
  ASSERT_EQ(inv.ethernet.size(), 1u);
  EXPECT_EQ(inv.ethernet[0].name, "eno1");
  EXPECT_EQ(inv.ethernet[0].rateGbps, 25);
  EXPECT_EQ(inv.ethernet[0].state, "up");
  EXPECT_EQ(inv.ethernet[0].pciBusId, "0000:04:00.0");
  EXPECT_EQ(inv.gpus, 8);
  ASSERT_EQ(inv.pcie.size(), 17u);  // 8 GPUs, then 8 NICs and eno1
  EXPECT_TRUE(inv.pcie[0].gpu);
  EXPECT_EQ(inv.pcie[0].busId, "0000:1b:00.0");
  EXPECT_EQ(inv.pcie[0].speedGTs, 32);
  EXPECT_EQ(inv.pcie[0].width, 16);
  EXPECT_EQ(inv.pcie[0].maxWidth, 16);
  EXPECT_EQ(inv.pcie[0].slotMaxSpeedGTs, 32);  // the switch's downstream port above it
  EXPECT_EQ(inv.pcie[0].slotMaxWidth, 16);
  EXPECT_EQ(inv.pcie[8].device, "mlx5_0");
  EXPECT_FALSE(inv.pcie[8].gpu);
  EXPECT_EQ(inv.pcie[16].device, "eno1");
  EXPECT_EQ(inv.pcie[16].width, 8);
  EXPECT_EQ(inv.pcie[16].slotMaxWidth, 0);  // at its root complex: no port above it in the tree
  EXPECT_EQ(inv.gpuDirect.ready, Tristate::kYes);
  EXPECT_EQ(inv.gpuDirect.how, "nvidia_peermem loaded");
  EXPECT_TRUE(inv.notes.empty());
}

TEST(Inventory, FaultyTreesReadAsTheyAre) {
  const Inventory down = readInventory(tree("nic-200g-port-down"));
  EXPECT_EQ(down.ports[3].rateGbps, 200);
  EXPECT_EQ(down.ports[3].speed, "HDR");
  EXPECT_EQ(down.ports[5].state, "DOWN");
  EXPECT_EQ(down.ports[5].physState, "Disabled");
  EXPECT_EQ(readInventory(tree("gpu-pcie-x8")).pcie[3].width, 8);
  const Inventory plain = readInventory(tree("no-peermem"));
  EXPECT_EQ(plain.gpuDirect.ready, Tristate::kNo);
  EXPECT_NE(plain.gpuDirect.how.find("no peer-memory module"), std::string::npos);
}

TEST(Inventory, CountersThatGrew) {
  const auto grown = counterGrowth(readInventory(tree("counters-before")), readInventory(tree("counters-after")));
  ASSERT_EQ(grown.size(), 2u);  // port_xmit_discards stayed at 40
  EXPECT_EQ(grown[0].device, "mlx5_2");
  EXPECT_EQ(grown[0].counter, "link_downed");
  EXPECT_EQ(grown[0].growth, 1u);
  EXPECT_EQ(grown[1].counter, "symbol_error");
  EXPECT_EQ(grown[1].growth, 12u);
  // a counter read lower the second time was reset: all of its value is new
  Inventory before = readInventory(tree("counters-after"));
  before.ports[2].counters["symbol_error"] = 100;
  const auto reset = counterGrowth(before, readInventory(tree("counters-after")));
  ASSERT_EQ(reset.size(), 1u);
  EXPECT_EQ(reset[0].growth, 15u);
}

TEST(Inventory, NothingToReadIsANoteNotAnError) {
  const Inventory none = readInventory(tree("missing"));
  EXPECT_TRUE(none.ports.empty());
  EXPECT_TRUE(none.pcie.empty());
  EXPECT_EQ(none.gpuDirect.ready, Tristate::kUnknown);
  ASSERT_EQ(none.notes.size(), 1u);
  EXPECT_NE(none.notes[0].find("no sysfs here"), std::string::npos);
}

// This machine: whatever it has, reading it does not fail, and a node without RDMA NICs says so.
TEST(Inventory, ThisMachine) {
  const Inventory inv = readInventory("/sys");
  if (!inv.ports.empty()) GTEST_SKIP() << "this machine has RDMA ports; the no-RDMA case is covered elsewhere";
  EXPECT_EQ(inv.gpuDirect.ready, Tristate::kUnknown);
  EXPECT_TRUE(inv.gpuDirect.how == "no GPU" || inv.gpuDirect.how == "no RDMA NIC") << inv.gpuDirect.how;
}

// The forms an inventory travels in: JSON (rank to rank 0, `inventory --json`) and the results
// file's rows, each read back whole.
TEST(Inventory, ThroughJsonAndTheFilesRows) {
  for (const char* name : {"healthy-8gpu-8nic", "nic-200g-port-down", "gpu-pcie-x8", "no-peermem"}) {
    const Inventory inv = readInventory(tree(name));
    const auto json = inventoryJson(inv);
    const Inventory back = fromInventoryJson(nlohmann::json::parse(json.dump()));
    EXPECT_EQ(inventoryJson(back), json) << name;
    const core::InventoryRows rows = inventoryRows(inv, 5);
    EXPECT_EQ(rows.nics.size(), inv.ports.size() + inv.ethernet.size()) << name;
    ASSERT_EQ(rows.nodes.size(), 1u);
    EXPECT_EQ(rows.nodes[0].node, 5);
    EXPECT_EQ(rows.nodes[0].gpuDirect, std::string(tristateName(inv.gpuDirect.ready))) << name;
    EXPECT_EQ(inventoryJson(inventoryOf(rows, 5)), json) << name;
    EXPECT_TRUE(inventoryOf(rows, 4).ports.empty()) << "another node's rows";
  }
  // what another build might send: unknown keys ignored, wrong types unknown, never an exception
  const Inventory odd = fromInventoryJson(nlohmann::json::parse(
      R"({"ports": [{"device": 7, "port": "one", "rate_gbps": 400, "counters": {"symbol_error": -1}}], "gpus": "8",
          "gpudirect": {"ready": "maybe"}, "extra": true})"));
  ASSERT_EQ(odd.ports.size(), 1u);
  EXPECT_EQ(odd.ports[0].device, "");
  EXPECT_EQ(odd.ports[0].port, 0);
  EXPECT_EQ(odd.ports[0].rateGbps, 400);
  EXPECT_TRUE(odd.ports[0].counters.empty());
  EXPECT_EQ(odd.gpus, 0);
  EXPECT_EQ(odd.gpuDirect.ready, Tristate::kUnknown);
  EXPECT_TRUE(fromInventoryJson(nlohmann::json::parse("[1, 2]")).ports.empty());
}

}  // namespace
}  // namespace fabricmap::topologies
