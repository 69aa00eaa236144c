// Fabric topology files: real ibnetdiscover outputs, the text form, and every refusal with its line.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/fabric.h"
#include "topologies/fabric_file.h"

namespace fabricmap::topologies {
namespace {

namespace fs = std::filesystem;
using core::FabricDevice;
using core::FabricDeviceKind;
using core::FabricGraph;
using core::FabricLink;

fs::path fabricData(const std::string& name) { return fs::path(FABRICMAP_TEST_DATA) / "fabric" / name; }

FabricGraph readData(const std::string& name) { return readFabricFile(fabricData(name).string()); }

// The message parseFabric throws for `text`, or "no error".
std::string errorOf(const std::string& text) {
  try {
    parseFabric(text, "fabric.txt");
  } catch (const core::UsageError& e) {
    return e.what();
  }
  return "no error";
}

std::string fileErrorOf(const std::string& name) {
  try {
    readData(name);
  } catch (const core::UsageError& e) {
    return e.what();
  }
  return "no error";
}

int deviceNamed(const FabricGraph& g, const std::string& name, const std::string& nic = "") {
  for (std::size_t d = 0; d < g.devices.size(); ++d) {
    if (g.devices[d].name == name && g.devices[d].nic == nic) return static_cast<int>(d);
  }
  ADD_FAILURE() << "no device " << name << " " << nic;
  return -1;
}

const FabricDevice& device(const FabricGraph& g, const std::string& name, const std::string& nic = "") {
  static const FabricDevice kNone;
  const int d = deviceNamed(g, name, nic);
  return d < 0 ? kNone : g.devices[static_cast<std::size_t>(d)];
}

std::vector<const FabricLink*> linksOf(const FabricGraph& g, int d) {
  std::vector<const FabricLink*> out;
  for (const FabricLink& link : g.links) {
    if (link.a == d || link.b == d) out.push_back(&link);
  }
  return out;
}

// The names of the switches `host`'s adapters hang off, sorted.
std::vector<std::string> switchesOfHost(const FabricGraph& g, const std::string& host) {
  std::vector<std::string> out;
  for (const int adapter : core::adaptersOfHost(g, host)) {
    for (const FabricLink* link : linksOf(g, adapter)) {
      out.push_back(g.devices[static_cast<std::size_t>(link->a == adapter ? link->b : link->a)].name);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

int cablesBetween(const FabricGraph& g, int x, int y) {
  return static_cast<int>(std::count_if(g.links.begin(), g.links.end(), [&](const FabricLink& l) {
    return (l.a == x && l.b == y) || (l.a == y && l.b == x);
  }));
}

int countKind(const FabricGraph& g, FabricDeviceKind kind) {
  return static_cast<int>(std::count_if(g.devices.begin(), g.devices.end(),
                                        [&](const FabricDevice& d) { return d.kind == kind; }));
}

bool anyContains(const std::vector<std::string>& texts, const std::string& part) {
  return std::any_of(texts.begin(), texts.end(), [&](const std::string& t) { return t.find(part) != std::string::npos; });
}

// Every cable's `a` is the lower end and no two links share a port.
void expectWellFormed(const FabricGraph& g) {
  std::set<std::pair<int, int>> ports;
  for (const FabricLink& link : g.links) {
    EXPECT_LE(g.devices[static_cast<std::size_t>(link.a)].level, g.devices[static_cast<std::size_t>(link.b)].level);
    for (const std::pair<int, int>& port : {std::pair(link.a, link.portA), std::pair(link.b, link.portB)}) {
      if (port.second == 0) continue;
      EXPECT_TRUE(ports.insert(port).second) << port.first << "[" << port.second << "]";
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Real ibnetdiscover outputs

TEST(FabricIbnetdiscover, SmallFabricFromIbm) {
  const FabricGraph g = readData("ibnetdiscover-ibm-two-hosts.topo");
  EXPECT_EQ(g.source, "ibnetdiscover");
  ASSERT_EQ(g.devices.size(), 3u);
  ASSERT_EQ(g.links.size(), 2u);
  EXPECT_TRUE(g.warnings.empty()) << g.warnings.front();
  const FabricDevice& sw = device(g, "MT43132 Mellanox Technologies");
  EXPECT_EQ(sw.kind, FabricDeviceKind::kSwitch);
  EXPECT_EQ(sw.guid, "0x000b8cffff0053ee");
  EXPECT_EQ(sw.level, 1);
  // "compute-00-00 HCA-1": HCA-1 is the OFED script's numbering, not a device name
  const int host = deviceNamed(g, "compute-00-00");
  const FabricDevice& adapter = g.devices[static_cast<std::size_t>(host)];
  EXPECT_EQ(adapter.kind, FabricDeviceKind::kHost);
  EXPECT_EQ(adapter.description, "compute-00-00 HCA-1");
  EXPECT_EQ(adapter.guid, "0x0002c9030002847c");
  EXPECT_EQ(adapter.level, 0);
  const std::vector<const FabricLink*> cable = linksOf(g, host);
  ASSERT_EQ(cable.size(), 1u);
  EXPECT_EQ(cable[0]->a, host);  // the host adapter is the lower end
  EXPECT_EQ(cable[0]->portA, 2);
  EXPECT_EQ(cable[0]->b, deviceNamed(g, "MT43132 Mellanox Technologies"));
  EXPECT_EQ(cable[0]->portB, 2);
  EXPECT_EQ(cable[0]->rate, "4xSDR");
  EXPECT_EQ(switchesOfHost(g, "compute-00-01"), std::vector<std::string>{"MT43132 Mellanox Technologies"});
}

TEST(FabricIbnetdiscover, LeafSpineFabricOfEightSwitches) {
  const FabricGraph g = readData("ibnetdiscover-sx6036-leaf-spine.topo");
  ASSERT_EQ(g.devices.size(), 152u);
  EXPECT_EQ(countKind(g, FabricDeviceKind::kSwitch), 8);
  EXPECT_EQ(countKind(g, FabricDeviceKind::kHost), 144);
  EXPECT_EQ(g.links.size(), 192u);  // 384 port lines, each cable from both ends
  EXPECT_TRUE(g.warnings.empty()) << g.warnings.front();
  expectWellFormed(g);
  for (const char* leaf : {"MF0;ib1:SX6036/U1", "MF0;ib2:SX6036/U1", "MF0;ib3:SX6036/U1", "MF0;ib4:SX6036/U1",
                           "MF0;ib5:SX6036/U1", "MF0;ib6:SX6036/U1"}) {
    EXPECT_EQ(device(g, leaf).level, 1) << leaf;
  }
  // the spine ib7 has the storage hosts tank1 and tank2 of its own: a leaf of theirs
  EXPECT_EQ(device(g, "MF0;ib7:SX6036/U1").level, 1);
  EXPECT_EQ(device(g, "MF0;ib8:SX6036/U1").level, 2);
  EXPECT_EQ(device(g, "MF0;ib8:SX6036/U1").guid, "0xf4521403007ea570");

  const FabricDevice& stage = device(g, "stage114", "mlx4_0");
  EXPECT_EQ(stage.description, "stage114 mlx4_0");
  EXPECT_EQ(switchesOfHost(g, "stage114"), std::vector<std::string>{"MF0;ib5:SX6036/U1"});
  // tank1's one adapter has both ports on ib7
  EXPECT_EQ(core::adaptersOfHost(g, "tank1").size(), 1u);
  EXPECT_EQ(switchesOfHost(g, "tank1"), (std::vector<std::string>{"MF0;ib7:SX6036/U1", "MF0;ib7:SX6036/U1"}));

  const int ib1 = deviceNamed(g, "MF0;ib1:SX6036/U1");
  const int ib2 = deviceNamed(g, "MF0;ib2:SX6036/U1");
  const int ib8 = deviceNamed(g, "MF0;ib8:SX6036/U1");
  EXPECT_EQ(cablesBetween(g, ib2, ib8), 4);
  EXPECT_EQ(cablesBetween(g, ib1, ib8), 3);  // one of ib1's uplinks to ib8 is missing in this fabric
  int fdr10 = 0;
  int qdr = 0;
  for (const FabricLink& link : g.links) {
    const bool uplink = g.devices[static_cast<std::size_t>(link.a)].kind == FabricDeviceKind::kSwitch;
    EXPECT_EQ(link.rate, uplink ? "4xFDR10" : "4xQDR");
    ++(uplink ? fdr10 : qdr);
    if (uplink) {  // to ib7 (a leaf of the tanks, level 1) or to ib8
      EXPECT_EQ(g.devices[static_cast<std::size_t>(link.b)].level, link.b == ib8 ? 2 : 1);
    }
  }
  EXPECT_EQ(fdr10, 47);
  EXPECT_EQ(qdr, 145);
}

TEST(FabricIbnetdiscover, DefaultDescriptionsKeepTheGuidAndWarn) {
  const FabricGraph g = readData("ibnetdiscover-manpage-voltaire.topo");
  ASSERT_EQ(g.devices.size(), 6u);
  ASSERT_EQ(g.links.size(), 7u);
  // four HCAs read "MT23108 InfiniHost Mellanox Technologies": no host name
  for (const char* id : {"H-0008f10403960984", "H-005442b100004900", "H-0008f10403961354", "H-0008f10403960558"}) {
    const FabricDevice& adapter = device(g, id);
    EXPECT_EQ(adapter.kind, FabricDeviceKind::kHost);
    EXPECT_EQ(adapter.nic, "");
    EXPECT_TRUE(anyContains(g.warnings, std::string("host adapter \"") + id +
                                            "\" has the default node description \"MT23108 InfiniHost"))
        << id;
  }
  EXPECT_TRUE(anyContains(g.warnings, "line 32: host adapter \"H-0008f10403960984\""));
  // the man page's example reads 1xSDR at one end of two cables and 4xSDR at the other; the first
  // end's rate is kept
  EXPECT_TRUE(anyContains(g.warnings, "lines 15 and 26: the ends of a cable read 4xSDR and 1xSDR"));
  EXPECT_TRUE(anyContains(g.warnings, "lines 18 and 52: the ends of a cable read 4xSDR and 1xSDR"));
  for (const FabricLink& link : g.links) EXPECT_EQ(link.rate, "4xSDR");
  EXPECT_EQ(g.warnings.size(), 6u);
  const int isr = deviceNamed(g, "ISR9024 Voltaire");
  const int sw6 = deviceNamed(g, "SW-6IB4 Voltaire");
  EXPECT_EQ(cablesBetween(g, isr, sw6), 2);
  EXPECT_EQ(cablesBetween(g, deviceNamed(g, "H-0008f10403960558"), isr), 2);  // both ports of one HCA
  EXPECT_EQ(g.devices[static_cast<std::size_t>(isr)].level, 1);
  EXPECT_EQ(g.devices[static_cast<std::size_t>(sw6)].level, 1);
  expectWellFormed(g);
}

TEST(FabricIbnetdiscover, OneHostAndABlankLine) {
  const FabricGraph g = readData("ibnetdiscover-sun-dcs-one-host.topo");
  ASSERT_EQ(g.links.size(), 1u);
  EXPECT_EQ(switchesOfHost(g, "nsn33-43"), std::vector<std::string>{"Sun DCS 36 QDR switch localhost"});
  EXPECT_EQ(g.links[0].portA, 2);
  EXPECT_EQ(g.links[0].portB, 23);
  EXPECT_EQ(g.links[0].rate, "4xQDR");
}

TEST(FabricIbnetdiscover, HostsWithSeveralAdaptersAndNdrRates) {
  // what today's ibnetdiscover prints for an NDR fabric: mlx5 names, 2xNDR ports, an aggregation node
  const FabricGraph g = readData("ndr-leaf-spine-handwritten.topo");
  ASSERT_EQ(g.devices.size(), 6u);
  ASSERT_EQ(g.links.size(), 5u);
  EXPECT_EQ(core::adaptersOfHost(g, "gpu01"),
            (std::vector<int>{deviceNamed(g, "gpu01", "mlx5_0"), deviceNamed(g, "gpu01", "mlx5_1")}));
  EXPECT_EQ(switchesOfHost(g, "gpu01"), (std::vector<std::string>{"MF0;leaf-01:MQM9700/U1", "MF0;leaf-01:MQM9700/U1"}));
  EXPECT_EQ(switchesOfHost(g, "gpu02"), std::vector<std::string>{"MF0;leaf-01:MQM9700/U1"});
  EXPECT_TRUE(core::adaptersOfHost(g, "gpu03").empty());
  const int leaf = deviceNamed(g, "MF0;leaf-01:MQM9700/U1");
  const int spine = deviceNamed(g, "MF0;spine-01:MQM9700/U1");
  for (const FabricLink& link : g.links) {
    const bool uplink = link.b == spine;
    EXPECT_EQ(link.rate, uplink || g.devices[static_cast<std::size_t>(link.a)].nic.empty() ? "4xNDR" : "2xNDR");
  }
  EXPECT_EQ(g.devices[static_cast<std::size_t>(spine)].level, 2);
  ASSERT_EQ(cablesBetween(g, leaf, spine), 1);
  const FabricLink& uplink = *linksOf(g, spine)[0];
  EXPECT_EQ(uplink.a, leaf);  // turned: ibnetdiscover listed it from the leaf's end, the spine is b
  EXPECT_EQ(uplink.portA, 127);
  EXPECT_EQ(uplink.portB, 1);
  // a switch's SHARP engine is a CA with the firmware's description
  EXPECT_EQ(device(g, "H-9c0591030012ab48").kind, FabricDeviceKind::kHost);
  ASSERT_EQ(g.warnings.size(), 1u);
  EXPECT_NE(g.warnings[0].find("\"Mellanox Technologies Aggregation Node\""), std::string::npos);
}

TEST(FabricIbnetdiscover, GroupingExtPortsFullInfoAndCrlf) {
  // ibnetdiscover -g -f: chassis headers, [ext N] ports, s= w= v= after the rate; saved on Windows
  const std::string text =
      "#\r\n# Topology file: generated on Tue Jun  5 14:15:10 2007\r\n#\r\n\r\n"
      "Chassis 1 (guid 0x8f104004121f5)\r\n\r\n# Spine Nodes\r\n"
      "vendid=0x8f1\r\ndevid=0x5a31\r\nsysimgguid=0x8f104004121f5\t\t# Chassis 1 (ISR9288)\r\n"
      "switchguid=0x8f104004121f4(8f104004121f4)\t# Voltaire ISR9288 Line 3 Chip 1\r\n"
      "Switch\t24 \"S-0008f104004121f4\"\t\t# \"ISR9288 Voltaire sLB-24\" base port 0 lid 3 lmc 0\r\n"
      "[1][ext 17]\t\"H-0008f10403961354\"[1](8f10403961355) \t\t# \"node01 mthca0\" lid 4 4xDDR s=2 w=2 v=4\r\n"
      "\r\nNon-Chassis Nodes\r\n\r\n"
      "vendid=0x2c9\r\ndevid=0x5a44\r\ncaguid=0x8f10403961354\r\n"
      "Ca\t2 \"H-0008f10403961354\"\t\t# \"node01 mthca0\"\r\n"
      "[1](8f10403961355) \t\"S-0008f104004121f4\"[1][ext 17]\t\t# lid 4 lmc 0 \"ISR9288 Voltaire sLB-24\" lid 3 "
      "4xDDR s=2 w=2 v=4\r\n";
  const FabricGraph g = parseFabric(text, "grouped.topo");
  ASSERT_EQ(g.links.size(), 1u);
  EXPECT_EQ(g.links[0].rate, "4xDDR");
  EXPECT_EQ(device(g, "node01", "mthca0").level, 0);
  EXPECT_EQ(device(g, "ISR9288 Voltaire sLB-24").guid, "0x0008f104004121f4");
  EXPECT_TRUE(g.warnings.empty());
}

TEST(FabricIbnetdiscover, IbsimNetFilesAndRouters) {
  // ibsim's own net files: Hca, ids that are not GUIDs, no descriptions, no rates
  const FabricGraph g = parseFabric(
      "Switch\t8 \"Switch1\"\n[1]\t\"Hca1\"[1]\n[3]\t\"Switch2\"[3]\n[5]\t\"Switch2\"[5]\n\n"
      "Switch 8 \"Switch2\"\n[3]\t\"Switch1\"[3]\n[5]\t\"Switch1\"[5]\n[7]\t\"Rt1\"[1]\n\n"
      "Hca\t2 \"Hca1\"\n[1]\t\"Switch1\"[1]\n\n"
      "rtguid=0x2c90000000abc\nRt\t2 \"Rt1\"\n[1]\t\"Switch2\"[7]\n",
      "net");
  ASSERT_EQ(g.devices.size(), 4u);
  EXPECT_EQ(g.links.size(), 4u);
  EXPECT_EQ(device(g, "Hca1").kind, FabricDeviceKind::kHost);
  EXPECT_EQ(device(g, "Switch2").level, 2);
  EXPECT_EQ(device(g, "Rt1").kind, FabricDeviceKind::kSwitch);
  EXPECT_EQ(device(g, "Rt1").guid, "0x0002c90000000abc");
  EXPECT_EQ(device(g, "Rt1").level, 3);
  EXPECT_EQ(cablesBetween(g, deviceNamed(g, "Switch1"), deviceNamed(g, "Switch2")), 2);
  EXPECT_EQ(g.links[0].rate, "");
  EXPECT_TRUE(anyContains(g.warnings, "host adapter \"Hca1\" has no node description"));
}

TEST(FabricIbnetdiscover, SwitchesWithoutHostsAreNumberedFromTheBottom) {
  const FabricGraph g = parseFabric("Switch 8 \"A\"\n[1] \"B\"[1]\nSwitch 8 \"B\"\n[1] \"A\"[1]\n", "net");
  EXPECT_EQ(device(g, "A").level, 1);
  EXPECT_EQ(device(g, "B").level, 2);
}

TEST(FabricIbnetdiscover, SwitchesWithTheSameDescriptionKeepTheirGuid) {
  const FabricGraph g = parseFabric(
      "Switch 36 \"S-e41d2d030003e470\" # \"SwitchIB Mellanox Technologies\" base port 0 lid 268 lmc 0\n"
      "[1] \"S-e41d2d030003e470\"[2] # \"SwitchIB Mellanox Technologies\" lid 268 4xEDR\n"
      "[2] \"S-e41d2d030003e470\"[1] # \"SwitchIB Mellanox Technologies\" lid 268 4xEDR\n"
      "[3] \"S-e41d2d030003e480\"[1] # \"SwitchIB Mellanox Technologies\" lid 269 4xEDR\n"
      "[4] \"H-0002c903003421b0\"[1](2c903003421b2) # \"r-ufm111 HCA-1\" lid 3 4xFDR\n"
      "Switch 36 \"S-e41d2d030003e480\" # \"SwitchIB Mellanox Technologies\" base port 0 lid 269 lmc 0\n"
      "[1] \"S-e41d2d030003e470\"[3] # \"SwitchIB Mellanox Technologies\" lid 268 4xEDR\n"
      "Ca 2 \"H-0002c903003421b0\" # \"r-ufm111 HCA-1\"\n"
      "[1](2c903003421b2) \"S-e41d2d030003e470\"[4] # lid 3 lmc 0 \"SwitchIB Mellanox Technologies\" lid 268 4xFDR\n",
      "lab.topo");
  EXPECT_EQ(device(g, "S-e41d2d030003e470").description, "SwitchIB Mellanox Technologies");
  EXPECT_EQ(device(g, "S-e41d2d030003e480").level, 2);
  ASSERT_EQ(g.links.size(), 3u);
  // a cable from port 1 to port 2 of the same switch, as in a lab: one link, and a warning
  EXPECT_EQ(cablesBetween(g, 0, 0), 1);
  EXPECT_TRUE(anyContains(g.warnings, "line 2: \"S-e41d2d030003e470\"[1] and port 2 are cabled to each other"));
}

// ---------------------------------------------------------------------------------------------
// ibnetdiscover refusals

TEST(FabricIbnetdiscover, EndsThatDisagreeAreAnError) {
  EXPECT_EQ(fileErrorOf("damaged-ibnetdiscover-ends-disagree.topo"),
            fabricData("damaged-ibnetdiscover-ends-disagree.topo").string() +
                ":26: the ends of a cable disagree: line 12 says \"S-000b8cffff0053ee\"[2] leads to "
                "\"H-0002c9030002847c\"[2], line 26 says \"H-0002c9030002847c\"[2] leads to \"S-000b8cffff0053ee\"[1]");
}

TEST(FabricIbnetdiscover, TruncatedOutputIsAnError) {
  const std::string error = fileErrorOf("damaged-ibnetdiscover-truncated.topo");
  EXPECT_NE(error.find("truncated.topo:12: \"H-0002c9030002847c\" has no Switch or Ca line in this file"),
            std::string::npos)
      << error;
}

TEST(FabricIbnetdiscover, CableListedFromOneEndOnly) {
  EXPECT_EQ(errorOf("Switch 8 \"S-0000000000000001\"\n[1] \"H-0000000000000002\"[1]\n[2] \"H-0000000000000002\"[2]\n"
                    "Ca 2 \"H-0000000000000002\" # \"node01 mlx5_0\"\n[1] \"S-0000000000000001\"[1]\n"),
            "fabric.txt:3: \"S-0000000000000001\"[2] leads to \"H-0000000000000002\"[2], which the block of line 4 "
            "does not list");
}

TEST(FabricIbnetdiscover, MalformedLines) {
  const std::string sw = "Switch 8 \"S-0000000000000001\" # \"leaf1\" enhanced port 0 lid 1 lmc 0\n";
  EXPECT_EQ(errorOf(sw + "[1] \"H-0000000000000002\"[1]\nhello\n"),
            "fabric.txt:3: not a line of ibnetdiscover output: 'hello'");
  EXPECT_EQ(errorOf("[1] \"S-0000000000000001\"[1]\n" + sw), "fabric.txt:1: a port line before any Switch or Ca line");
  EXPECT_EQ(errorOf(sw + "[9] \"H-0000000000000002\"[1]\n"),
            "fabric.txt:2: port 9 of \"S-0000000000000001\", which has 8 ports");
  EXPECT_EQ(errorOf(sw + "[0] \"H-0000000000000002\"[1]\n"), "fabric.txt:2: expected a port number 1..255 in [ ]");
  EXPECT_EQ(errorOf(sw + "[1] H-0000000000000002[1]\n"), "fabric.txt:2: expected the far end's node id in quotes");
  EXPECT_EQ(errorOf(sw + "[1] \"H-0000000000000002\"\n"),
            "fabric.txt:2: expected [PORT] after the far end's node id");
  EXPECT_EQ(errorOf(sw + "[1] \"H-0000000000000002\"[1](xyz)\n"), "fabric.txt:2: malformed port GUID in ( )");
  EXPECT_EQ(errorOf(sw + "[1][ext x] \"H-0000000000000002\"[1]\n"), "fabric.txt:2: malformed [ext N]");
  EXPECT_EQ(errorOf(sw + "[1] \"H-0000000000000002\"[1] lid 3\n"), "fabric.txt:2: unexpected text after the far end");
  EXPECT_EQ(errorOf(sw + "[1] \"H-0000000000000002\"[1]\n[1] \"H-0000000000000002\"[2]\n"),
            "fabric.txt:3: \"S-0000000000000001\"[1] is listed twice (first on line 2)");
  EXPECT_EQ(errorOf(sw + sw), "fabric.txt:2: node \"S-0000000000000001\" is described twice (first on line 1)");
  EXPECT_EQ(errorOf("Switch x \"S-1\"\n"), "fabric.txt:1: expected the node's port count (1..255) after its type");
  EXPECT_EQ(errorOf("Ca 2 H-1\n"), "fabric.txt:1: expected the node id in quotes, e.g. \"S-0002c90000ff2d80\"");
  EXPECT_EQ(errorOf("Ca 2 \"H-1\" # \"node01\n"), "fabric.txt:1: the node description's quote is not closed");
  EXPECT_EQ(errorOf("caguid=zz\nCa 2 \"H-1\"\n"), "fabric.txt:1: 'zz' is not a hex number");
  EXPECT_EQ(errorOf(sw + "[1] \"S-0000000000000001\"[1]\n"), "fabric.txt:2: \"S-0000000000000001\"[1] is cabled to itself");
}

TEST(FabricIbnetdiscover, NoNodeIsAnError) {
  EXPECT_EQ(errorOf("#\n# Topology file\n#\nvendid=0x2c9\ndevid=0x1017\ncaguid=0x2c9\n"),
            "fabric.txt:6: no devices: no Switch or Ca line");
}

// ---------------------------------------------------------------------------------------------
// The text form

TEST(FabricText, TwoLevelFabric) {
  const FabricGraph g = readData("two-level.fabric");
  EXPECT_EQ(g.source, "text");
  ASSERT_EQ(g.devices.size(), 15u);  // 2 spines, 4 leaves, 9 adapters on 8 hosts
  EXPECT_EQ(countKind(g, FabricDeviceKind::kSwitch), 6);
  EXPECT_EQ(g.links.size(), 25u);
  EXPECT_TRUE(g.warnings.empty());
  expectWellFormed(g);
  for (const char* leaf : {"leaf1", "leaf2", "leaf3", "leaf4"}) EXPECT_EQ(device(g, leaf).level, 1) << leaf;
  EXPECT_EQ(device(g, "spine1").level, 2);
  EXPECT_EQ(device(g, "spine2").level, 2);
  EXPECT_EQ(device(g, "node03", "mlx5_0").level, 0);
  EXPECT_EQ(device(g, "leaf1").guid, "");
  // the rail host: one adapter per leaf
  EXPECT_EQ(core::adaptersOfHost(g, "node08").size(), 2u);
  EXPECT_EQ(switchesOfHost(g, "node08"), (std::vector<std::string>{"leaf3", "leaf4"}));
  EXPECT_EQ(switchesOfHost(g, "node06"), std::vector<std::string>{"leaf3"});
  // leaf4's parallel uplinks without ports, leaf1's with
  EXPECT_EQ(cablesBetween(g, deviceNamed(g, "leaf4"), deviceNamed(g, "spine1")), 2);
  EXPECT_EQ(cablesBetween(g, deviceNamed(g, "leaf1"), deviceNamed(g, "spine2")), 2);
  const FabricLink& uplink = g.links[0];  // leaf1:33 -> spine1:1
  EXPECT_EQ(uplink.a, deviceNamed(g, "leaf1"));
  EXPECT_EQ(uplink.portA, 33);
  EXPECT_EQ(uplink.b, deviceNamed(g, "spine1"));
  EXPECT_EQ(uplink.portB, 1);
  EXPECT_EQ(uplink.rate, "");
  const FabricLink& host = g.links.back();  // node08:mlx5_1 -> leaf4:5
  EXPECT_EQ(host.a, deviceNamed(g, "node08", "mlx5_1"));
  EXPECT_EQ(host.portA, 0);
  EXPECT_EQ(host.portB, 5);
}

TEST(FabricText, CommentsPortsAndAdapterPorts) {
  const FabricGraph g = parseFabric(
      "# rack 1\r\n"
      "  node01:mlx5_0:1 -> leaf1:3   # port 1 of the adapter\r\n"
      "node01:mlx5_0:2 -> leaf2:3\r\n"
      "node02:1 -> leaf1\r\n"
      "leaf1 -> spine1\n"
      "leaf2->spine1\n",
      "rack.fabric");
  ASSERT_EQ(g.devices.size(), 5u);
  ASSERT_EQ(g.links.size(), 5u);
  EXPECT_EQ(g.links[0].portA, 1);
  EXPECT_EQ(g.links[1].portA, 2);
  EXPECT_EQ(g.links[1].a, g.links[0].a);  // one adapter, two ports
  EXPECT_EQ(g.links[2].portA, 1);
  EXPECT_EQ(device(g, "node02").kind, FabricDeviceKind::kHost);
  EXPECT_EQ(device(g, "spine1").level, 2);
}

TEST(FabricText, ParallelUplinks) {
  const FabricGraph g = parseFabric("node01 -> leaf1\nleaf1 -> spine1\nleaf1 -> spine1\nleaf1:1 -> spine1:1\n"
                                    "leaf1:2 -> spine1:2\nleaf1:3 -> spine1\n",
                                    "f");
  EXPECT_EQ(cablesBetween(g, deviceNamed(g, "leaf1"), deviceNamed(g, "spine1")), 5);
  EXPECT_EQ(errorOf("leaf1:1 -> spine1:1\nleaf1:2 -> spine1:1\n"),
            "fabric.txt:2: \"spine1:1\" is cabled on line 1 already: one cable per port");
}

TEST(FabricText, NamesOnlyOnTheLeftAreHosts) {
  const FabricGraph g = parseFabric("edge1 -> agg1\nagg1 -> core1\nedge2 -> agg1\n", "f");
  EXPECT_EQ(device(g, "edge1").kind, FabricDeviceKind::kHost);
  EXPECT_EQ(device(g, "edge2").level, 0);
  EXPECT_EQ(device(g, "agg1").kind, FabricDeviceKind::kSwitch);
  EXPECT_EQ(device(g, "agg1").level, 1);
  EXPECT_EQ(device(g, "core1").level, 2);
}

// ---------------------------------------------------------------------------------------------
// Text-form refusals, each with its line

TEST(FabricText, MalformedLines) {
  EXPECT_EQ(errorOf("node01 -> leaf1\n\nnode02 leaf1\n"),
            "fabric.txt:3: expected CHILD -> PARENT (e.g. node01 -> leaf1), got 'node02 leaf1'");
  EXPECT_EQ(errorOf("node01 -> leaf1 -> spine1\n"), "fabric.txt:1: more than one '->': one cable per line");
  EXPECT_EQ(errorOf("node01 -> leaf1\n -> leaf1\n"), "fabric.txt:2: no name left of ->");
  EXPECT_EQ(errorOf("node01 ->   # no parent\n"), "fabric.txt:1: no name right of ->");
  EXPECT_EQ(errorOf(":mlx5_0 -> leaf1\n"), "fabric.txt:1: empty name in ':mlx5_0'");
  EXPECT_EQ(errorOf("node01: -> leaf1\n"), "fabric.txt:1: nothing after ':' in 'node01:'");
  EXPECT_EQ(errorOf("node 01 -> leaf1\n"), "fabric.txt:1: 'node 01' left of ->: a name has no blanks");
  EXPECT_EQ(errorOf("node01:a:1:2 -> leaf1\n"), "fabric.txt:1: too many ':' in 'node01:a:1:2'");
  EXPECT_EQ(errorOf("node01:7:mlx5_0 -> leaf1\n"), "fabric.txt:1: 'node01:7:mlx5_0': the port comes last");
}

TEST(FabricText, BadPortNumbers) {
  EXPECT_EQ(errorOf("node01 -> leaf1:0\n"), "fabric.txt:1: bad port number '0' in 'leaf1:0' (ports are 1..65535)");
  EXPECT_EQ(errorOf("n -> l\nnode01 -> leaf1:65536\n"),
            "fabric.txt:2: bad port number '65536' in 'leaf1:65536' (ports are 1..65535)");
  EXPECT_EQ(errorOf("node01 -> leaf1:x7\n"), "fabric.txt:1: bad port number 'x7' in 'leaf1:x7' (ports are 1..65535)");
  EXPECT_EQ(errorOf("node01:-1 -> leaf1\n"), "fabric.txt:1: bad port number '-1' in 'node01:-1' (ports are 1..65535)");
  EXPECT_EQ(errorOf("node01:mlx5_0:p1 -> leaf1\n"),
            "fabric.txt:1: bad port number 'p1' in 'node01:mlx5_0:p1' (ports are 1..65535)");
  EXPECT_EQ(errorOf("node01:99999999999 -> leaf1\n"),
            "fabric.txt:1: bad port number '99999999999' in 'node01:99999999999' (ports are 1..65535)");
}

TEST(FabricText, HostAndSwitchUnderOneName) {
  EXPECT_EQ(fileErrorOf("damaged-host-and-switch.fabric"),
            fabricData("damaged-host-and-switch.fabric").string() +
                ":7: \"leaf1\" is a host on line 2 and a switch here");
  EXPECT_EQ(errorOf("node01 -> leaf1\nleaf1:mlx5_0 -> spine1\n"),
            "fabric.txt:2: \"leaf1\" is a switch on line 1 and a host here");
  EXPECT_EQ(errorOf("node01:mlx5_0 -> node01\n"), "fabric.txt:1: \"node01\" is on both sides of ->");
}

TEST(FabricText, SwitchPortUsedTwice) {
  EXPECT_EQ(fileErrorOf("damaged-port-twice.fabric"),
            fabricData("damaged-port-twice.fabric").string() +
                ":3: \"leaf1:2\" is cabled on line 2 already: one cable per port");
  EXPECT_EQ(errorOf("node01 -> leaf1\nleaf1:33 -> spine1\nleaf1:33 -> spine2\n"),
            "fabric.txt:3: \"leaf1:33\" is cabled on line 2 already: one cable per port");
}

TEST(FabricText, HostLineRepeated) {
  EXPECT_EQ(errorOf("node01 -> leaf1\nnode02 -> leaf1\nnode01 -> leaf1\n"), "fabric.txt:3: repeats line 1");
  EXPECT_EQ(errorOf("node01:mlx5_0:1 -> leaf1:4\n\nnode01:mlx5_0:1 -> leaf1:4\n"), "fabric.txt:3: repeats line 1");
}

TEST(FabricText, AdapterOnTwoSwitches) {
  EXPECT_EQ(errorOf("node01:mlx5_0 -> leaf1\nnode01:mlx5_0 -> leaf2\n"),
            "fabric.txt:2: \"node01:mlx5_0\" hangs off \"leaf1\" on line 1 and off \"leaf2\" here (two ports of "
            "one adapter need a :PORT each)");
  EXPECT_EQ(errorOf("node01 -> leaf1:1\nnode01 -> leaf1:2\n"),
            "fabric.txt:2: \"node01\" hangs off \"leaf1:1\" on line 1 and off \"leaf1:2\" here (two ports of one "
            "adapter need a :PORT each)");
  EXPECT_EQ(errorOf("node01:mlx5_0:1 -> leaf1\nnode01:mlx5_0 -> leaf2\n").substr(0, 14), "fabric.txt:2: ");
  // two adapters of one host, or two ports of one adapter, are fine
  EXPECT_EQ(errorOf("node01:mlx5_0 -> leaf1\nnode01:mlx5_1 -> leaf1\nnode02:mlx5_0:1 -> leaf1\n"
                    "node02:mlx5_0:2 -> leaf2\n"),
            "no error");
}

TEST(FabricText, CyclesAmongSwitches) {
  EXPECT_EQ(fileErrorOf("damaged-cycle.fabric"),
            fabricData("damaged-cycle.fabric").string() +
                ":6: a cycle among switches: leaf2 -> spine1 -> core1 -> leaf2");
  EXPECT_EQ(errorOf("node01 -> a\na -> b\nb -> a\n"), "fabric.txt:3: a cycle among switches: a -> b -> a");
  EXPECT_EQ(errorOf("node01 -> a\na -> a\n"), "fabric.txt:2: a cycle among switches: a -> a");
  // a long cycle names its first switches
  std::string ring;
  for (int i = 0; i < 20; ++i) ring += fmt::format("s{} -> s{}\n", i, (i + 1) % 20);
  EXPECT_EQ(errorOf(ring),
            "fabric.txt:20: a cycle among switches: s0 -> s1 -> s2 -> s3 -> s4 -> s5 -> s6 -> s7 -> ... -> s0");
  // a diamond is no cycle
  EXPECT_EQ(errorOf("node01 -> a\na -> b\na -> c\nb -> d\nc -> d\n"), "no error");
}

TEST(FabricText, LongChainIsNoCycleAndNeedsNoDeepStack) {
  std::string chain = "node01 -> s0\n";
  for (int i = 0; i < 100000; ++i) chain += fmt::format("s{} -> s{}\n", i, i + 1);
  const FabricGraph g = parseFabric(chain, "chain");
  EXPECT_EQ(g.devices.back().level, 100001);
}

// ---------------------------------------------------------------------------------------------
// Either format

TEST(FabricFile, EmptyAndForeignFiles) {
  EXPECT_EQ(errorOf(""), "fabric.txt:1: no devices: the file is empty or holds only comments");
  EXPECT_EQ(errorOf("# nothing yet\n\n   \n"), "fabric.txt:1: no devices: the file is empty or holds only comments");
  EXPECT_EQ(errorOf("# a saved nvidia-smi topo -m\n\tGPU0\tGPU1\nGPU0\t X \tNV8\n"),
            "fabric.txt:2: neither ibnetdiscover output nor \"child -> parent\" lines: 'GPU0\\x09GPU1'");
  EXPECT_EQ(errorOf("node01 -> leaf1\nnode02 -> leaf1\x01\n"), "fabric.txt:2: control character in the line");
  EXPECT_EQ(errorOf(std::string(5000, 'a') + " -> b\n"), "fabric.txt:1: line longer than 4096 bytes");
  EXPECT_EQ(errorOf(std::string((16u << 20) + 1, '#')), "fabric.txt: 16777217 bytes is too large for a fabric topology file");
}

TEST(FabricFile, MissingFileNamesThePath) {
  const std::string path = fabricData("no-such-file.topo").string();
  try {
    readFabricFile(path);
    FAIL() << "no error";
  } catch (const core::UsageError& e) {
    EXPECT_EQ(std::string(e.what()), "cannot read fabric file '" + path + "': No such file or directory");
  }
  EXPECT_THROW(readFabricFile(fabricData("").string()), core::UsageError);  // a directory
}

TEST(FabricLevels, OrientationAndHostlessParts) {
  FabricGraph g;
  const auto add = [&](FabricDeviceKind kind, const char* name) {
    g.devices.push_back({.kind = kind, .name = name, .nic = "", .guid = "", .description = "", .level = -7});
    return static_cast<int>(g.devices.size()) - 1;
  };
  const int spine = add(FabricDeviceKind::kSwitch, "spine");
  const int leaf = add(FabricDeviceKind::kSwitch, "leaf");
  const int host = add(FabricDeviceKind::kHost, "host");
  const int lone = add(FabricDeviceKind::kSwitch, "lone");
  const int ringA = add(FabricDeviceKind::kSwitch, "ringA");
  const int ringB = add(FabricDeviceKind::kSwitch, "ringB");
  g.links.push_back({.a = spine, .portA = 1, .b = leaf, .portB = 9, .rate = ""});
  g.links.push_back({.a = leaf, .portA = 2, .b = host, .portB = 1, .rate = ""});
  g.links.push_back({.a = ringA, .portA = 1, .b = ringB, .portB = 1, .rate = ""});
  g.links.push_back({.a = ringB, .portA = 2, .b = ringA, .portB = 2, .rate = ""});
  core::assignLevels(g);
  EXPECT_EQ(g.devices[static_cast<std::size_t>(host)].level, 0);
  EXPECT_EQ(g.devices[static_cast<std::size_t>(leaf)].level, 1);
  EXPECT_EQ(g.devices[static_cast<std::size_t>(spine)].level, 2);
  EXPECT_EQ(g.devices[static_cast<std::size_t>(lone)].level, 1);
  EXPECT_EQ(g.devices[static_cast<std::size_t>(ringA)].level, 1);  // every switch of the ring is some link's top
  EXPECT_EQ(g.devices[static_cast<std::size_t>(ringB)].level, 2);
  // turned: the lower end first, its port with it
  EXPECT_EQ(g.links[0].a, leaf);
  EXPECT_EQ(g.links[0].portA, 9);
  EXPECT_EQ(g.links[0].portB, 1);
  EXPECT_EQ(g.links[1].a, host);
  EXPECT_EQ(g.links[1].portA, 1);
  EXPECT_EQ(g.links[3].a, ringA);
}

}  // namespace
}  // namespace fabricmap::topologies
