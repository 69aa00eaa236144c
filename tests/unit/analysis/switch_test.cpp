// The switch rule: with the fabric's topology, slow node pairs blamed on a leaf's uplinks, a whole
// switch or a spine instead of the innocent nodes under them; a single node stays a node; what no
// pair can tell apart is said as a tie.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "orchestrator/analysis/analysis.h"
#include "tests/unit/analysis/analysis_support.h"
#include "topologies/fabric_file.h"

namespace fabricmap::orchestrator {
namespace {

// host0..host7, two to a leaf, every leaf cabled to both spines.
constexpr const char* kTwoSpines = R"(
leaf0:33 -> spine0:1
leaf0:34 -> spine1:1
leaf1:33 -> spine0:2
leaf1:34 -> spine1:2
leaf2:33 -> spine0:3
leaf2:34 -> spine1:3
leaf3:33 -> spine0:4
leaf3:34 -> spine1:4
host0 -> leaf0:1
host1 -> leaf0:2
host2 -> leaf1:1
host3 -> leaf1:2
host4 -> leaf2:1
host5 -> leaf2:2
host6 -> leaf3:1
host7 -> leaf3:2
)";

constexpr float kSlow = 0.024f;  // far below the 10 GB/s of the healthy inter-node pairs

bool under(int node, const std::vector<int>& group) { return std::find(group.begin(), group.end(), node) != group.end(); }

// Every pair with exactly one end in `group` slow both ways: the group's way out is broken.
Fabric leavingSlow(int nodes, const std::vector<int>& group) {
  return fabric(nodes, 1, 64, [&](core::Matrices& m, const core::Topology&) {
    for (int a = 0; a < nodes; ++a) {
      for (int b = 0; b < nodes; ++b) {
        if (a != b && under(a, group) != under(b, group)) setBw(m, a, b, kSlow);
      }
    }
  });
}

Fabric withFabric(Fabric f, const char* text) {
  f.topology.fabric = topologies::parseFabric(text, "fabric.txt");
  return f;
}

TEST(SwitchRule, ALeafsUplinksNotTheNodesUnderIt) {
  const Fabric bare = leavingSlow(8, {2, 3});
  const auto without = serious(analyze(bare.m, bare.topology, kDefaults));
  EXPECT_EQ(ofKindIn(without, "node"), 2) << describe(without);  // what the fabric's topology changes

  const Fabric f = withFabric(bare, kTwoSpines);
  const auto found = serious(analyze(f.m, f.topology, kDefaults));
  ASSERT_EQ(found.size(), 1u) << describe(found);
  EXPECT_EQ(found[0].kind, core::FindingKind::kUplink);
  EXPECT_EQ(found[0].subject, "leaf1 port 33 -> spine0 port 2, port 34 -> spine1 port 2");
  EXPECT_EQ(found[0].nodeA, -1);
  EXPECT_NE(found[0].message.find("24 of 24 node pairs through it slow"), std::string::npos) << found[0].message;
  EXPECT_NE(found[0].message.find("under it host2, host3, whose 2 pairs among themselves are 2 fine"),
            std::string::npos)
      << found[0].message;
  EXPECT_GE(found[0].confidence, 0.5) << found[0].message;
  EXPECT_EQ(found[0].severity, core::Severity::kError);
}

TEST(SwitchRule, ASlowNodeStaysANode) {
  const Fabric f = withFabric(leavingSlow(8, {5}), kTwoSpines);
  const auto found = serious(analyze(f.m, f.topology, kDefaults));
  ASSERT_EQ(found.size(), 1u) << describe(found);
  EXPECT_EQ(found[0].kind, core::FindingKind::kNode);
  EXPECT_EQ(found[0].subject, "host5");
}

// Every pair touching leaf2's nodes slow, theirs among themselves too: the leaf switch.
TEST(SwitchRule, AWholeLeafSwitch) {
  Fabric f = fabric(8, 1, 64, [](core::Matrices& m, const core::Topology&) {
    for (int a = 0; a < 8; ++a) {
      for (int b = 0; b < 8; ++b) {
        if (a != b && (under(a, {4, 5}) || under(b, {4, 5}))) setBw(m, a, b, kSlow);
      }
    }
  });
  f = withFabric(f, kTwoSpines);
  const auto found = serious(analyze(f.m, f.topology, kDefaults));
  ASSERT_EQ(found.size(), 1u) << describe(analyze(f.m, f.topology, kDefaults));
  EXPECT_EQ(found[0].kind, core::FindingKind::kSwitch);
  EXPECT_EQ(found[0].subject, "leaf2");
  EXPECT_NE(found[0].message.find("26 of 26 node pairs"), std::string::npos) << found[0].message;
}

// Four pods of two leaves under a spine each, the spines under one core switch: spine0's one cable
// to the core is slow, so every pair between pod 0 and the others is, while pod 0's own pairs
// (across its two leaves, through spine0) are fine. (A fault every pair but a leaf's own crosses,
// such as the one spine of a small fabric, slows most pairs: the baseline, the median of the
// pairs, is then the slow figure, and nothing is named, with or without the fabric.)
TEST(SwitchRule, TheCableAboveAPod) {
  std::string text;
  for (int pod = 0; pod < 4; ++pod) {
    text += fmt::format("spine{}:1 -> core0:{}\n", pod, pod + 1);
    for (int leaf = 2 * pod; leaf < 2 * pod + 2; ++leaf) {
      text += fmt::format("leaf{} -> spine{}\n", leaf, pod);
      for (int host = 2 * leaf; host < 2 * leaf + 2; ++host) text += fmt::format("host{} -> leaf{}\n", host, leaf);
    }
  }
  const Fabric f = withFabric(leavingSlow(16, {0, 1, 2, 3}), text.c_str());
  const auto found = serious(analyze(f.m, f.topology, kDefaults));
  ASSERT_EQ(found.size(), 1u) << describe(analyze(f.m, f.topology, kDefaults));
  EXPECT_EQ(found[0].kind, core::FindingKind::kSwitchPort);
  EXPECT_EQ(found[0].subject, "spine0 port 1 -> core0 port 1");
  EXPECT_NE(found[0].message.find("96 of 96 node pairs"), std::string::npos) << found[0].message;
  EXPECT_NE(found[0].message.find("whose 12 pairs among themselves are 12 fine"), std::string::npos) << found[0].message;
}

// A leaf with one node: its uplinks and the node explain the same pairs. The node rule names the
// node; the tie is said, as information.
TEST(SwitchRule, ALeafWithOneNodeIsATieWithTheNode) {
  constexpr const char* kLonely = R"(
leaf0:9 -> spine0:1
leaf1:9 -> spine0:2
leaf2:9 -> spine0:3
host0 -> leaf0
host1 -> leaf0
host2 -> leaf1
host3 -> leaf1
host4 -> leaf2
)";
  const Fabric f = withFabric(leavingSlow(5, {4}), kLonely);
  const auto all = analyze(f.m, f.topology, kDefaults);
  const auto found = serious(all);
  ASSERT_EQ(found.size(), 1u) << describe(found);
  EXPECT_EQ(found[0].kind, core::FindingKind::kNode);
  EXPECT_EQ(found[0].subject, "host4");
  const auto tie = std::find_if(all.begin(), all.end(), [](const core::Finding& x) {
    return x.kind == core::FindingKind::kSwitchPort || x.kind == core::FindingKind::kSwitch;
  });
  ASSERT_NE(tie, all.end()) << describe(all);
  EXPECT_EQ(tie->severity, core::Severity::kInfo);
  EXPECT_NE(tie->message.find("a tie with"), std::string::npos) << tie->message;
  EXPECT_NE(tie->message.find("node host4"), std::string::npos) << tie->message;
}

// A clean fabric, and a fabric file naming none of the run's hosts: nothing.
TEST(SwitchRule, NothingWithoutSlowPairsOrPlacedNodes) {
  const Fabric clean = withFabric(fabric(8, 1), kTwoSpines);
  EXPECT_TRUE(serious(analyze(clean.m, clean.topology, kDefaults)).empty());
  Fabric elsewhere = leavingSlow(8, {2, 3});
  elsewhere.topology.fabric = topologies::parseFabric("other0 -> leaf0\nother1 -> leaf0\n", "fabric.txt");
  EXPECT_EQ(ofKindIn(serious(analyze(elsewhere.m, elsewhere.topology, kDefaults)), "node"), 2);
}

}  // namespace
}  // namespace fabricmap::orchestrator
