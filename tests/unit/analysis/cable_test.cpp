// The cable rule: one slow cable among a leaf's uplinks, on a fabric routed by destination, named
// as that leaf's uplinks instead of the destinations' ingress and a link per pair; a slow node's
// ingress stays the node's.
#include <gtest/gtest.h>

#include <cmath>

#include <fmt/format.h>

#include "orchestrator/analysis/analysis.h"
#include "tests/unit/analysis/analysis_support.h"

namespace fabricmap::orchestrator {
namespace {

// 8 leaves of 8 hosts under 8 spines (the simulated 64-node fat tree's shape), leaf3's cable to
// spine5 at 0.3 GB/s: every node under leaf3 slow to the 7 hosts 5 mod 8 outside it, and host29
// (5 mod 8, under leaf3) slow from every node outside its leaf.
TEST(CableRule, OneCableOfALeafNotTheDestinationsIngress) {
  const Fabric f = destinationRouted(8, 8, 8, 3, 5, 0.3f);
  const auto all = analyze(f.m, f.topology, kDefaults);
  const auto found = serious(all);
  ASSERT_EQ(found.size(), 1u) << describe(all);
  EXPECT_EQ(found[0].kind, core::FindingKind::kUplink);
  EXPECT_EQ(found[0].subject.rfind("leaf3 port 9 -> spine0 port 4", 0), 0u) << found[0].subject;
  EXPECT_NE(found[0].message.find("one cable among the 8 uplinks of leaf3"), std::string::npos) << found[0].message;
  EXPECT_NE(found[0].message.find("reaches 7 destinations outside it slowly (host5, host13, host21, host37"),
            std::string::npos)
      << found[0].message;
  EXPECT_NE(found[0].message.find("one node under it (host29) slow from outside the leaf"), std::string::npos)
      << found[0].message;
  EXPECT_EQ(found[0].severity, core::Severity::kError);
  EXPECT_GE(found[0].confidence, kDefaults.minConfidence) << found[0].message;
}

// A pair the other way, whose acknowledgements go back over the cable, mildly slow (the simulated
// tree's host61 -> host31 at 0.82x): the cable's, not a link.
TEST(CableRule, APairWhoseAcknowledgementsCrossTheCableIsItsToo) {
  const Fabric f = destinationRouted(8, 8, 8, 3, 5, 0.3f, [](core::Matrices& m) { setBw(m, 61, 31, 8.2f); });
  const auto all = analyze(f.m, f.topology, kDefaults);
  const auto found = serious(all);
  ASSERT_EQ(found.size(), 1u) << describe(all);
  EXPECT_EQ(found[0].kind, core::FindingKind::kUplink);
  EXPECT_EQ(ofKindIn(all, "link"), 0) << describe(all);
}

// Where a node met few peers (quick mode), a destination behind the cable reached from only one
// node under the leaf shows no shape of its own: host24 -> host45 is the cable's too, not a link,
// as its ends are fine with everyone else.
TEST(CableRule, APairTheShapesMissedAtTheirLevelIsTheCables) {
  const Fabric f = destinationRouted(8, 8, 8, 3, 5, 0.3f, [](core::Matrices& m) {
    for (int a = 25; a < 32; ++a) setBw(m, a, 45, std::nanf(""));
  });
  const auto all = analyze(f.m, f.topology, kDefaults);
  const auto found = serious(all);
  ASSERT_EQ(found.size(), 1u) << describe(all);
  EXPECT_EQ(found[0].kind, core::FindingKind::kUplink);
  EXPECT_NE(found[0].message.find("reaches 6 destinations outside it slowly"), std::string::npos) << found[0].message;
  EXPECT_EQ(ofKindIn(all, "link"), 0) << describe(all);
}

// The same where nothing outside the leaf measured host45 (quick mode: its few other pairs were
// noisy): no pair says it is slow, so the pair is still the cable's.
TEST(CableRule, APairTheShapesMissedIsTheCablesWhenNothingElseMeasuredItsEnd) {
  const Fabric f = destinationRouted(8, 8, 8, 3, 5, 0.3f, [](core::Matrices& m) {
    for (int a = 0; a < 64; ++a) {
      if (a != 24 && a != 45) setBw(m, a, 45, std::nanf(""));
    }
  });
  const auto all = analyze(f.m, f.topology, kDefaults);
  ASSERT_EQ(serious(all).size(), 1u) << describe(all);
  EXPECT_EQ(ofKindIn(all, "link"), 0) << describe(all);
}

// Every cable of spine5 slow: every pair across leaves into a host 5 mod 8 crosses it. Each leaf
// shows the inward shape; one finding names the spines as candidates (which one carries those
// hosts is the routing's), not eight leaves' uplinks. Likewise on a 2:1 tree of 4 spines.
TEST(CableRule, EveryLeafsInwardShapeIsOneSpine) {
  for (const int spines : {8, 4}) {
    const Fabric f = destinationRouted(8, 8, spines, -1, 0, 10.0f, [&](core::Matrices& m) {
      for (int a = 0; a < 64; ++a) {
        for (int b = 0; b < 64; ++b) {
          if (a / 8 != b / 8 && b % spines == 1) setBw(m, a, b, 0.3f);
        }
      }
    });
    const auto all = analyze(f.m, f.topology, kDefaults);
    const auto found = serious(all);
    ASSERT_EQ(found.size(), 1u) << spines << " spines: " << describe(all);
    EXPECT_EQ(found[0].kind, core::FindingKind::kSwitch);
    EXPECT_EQ(found[0].subject, fmt::format("one of {} spines (spine0 .. spine{})", spines, spines - 1));
    EXPECT_NE(found[0].message.find("under each of 8 leaves, the nodes host1, host"), std::string::npos)
        << found[0].message;
    EXPECT_EQ(found[0].severity, core::Severity::kError);
  }
}

// A spine at 0.72x on a noisy 2:1 tree: the pairs into hosts 1 mod 4 from other leaves, each
// near the bar and most above it, are as a group below every other host's: one spine, named as
// candidates, and no pair of it a link. Under two leaves only, such hosts are not one spine.
TEST(CableRule, ASpineAboveTheBarIsNamedByItsNodesShift) {
  const auto spineAt = [](int leaves) {
    return destinationRouted(8, 8, 4, -1, 0, 10.0f, [leaves](core::Matrices& m) {
      for (int a = 0; a < 64; ++a) {
        for (int b = 0; b < 64; ++b) {
          if (a == b) continue;
          const float noise = 0.8f + 0.4f * static_cast<float>((a * 37 + b * 101) % 97) / 96.0f;
          const bool shifted = a / 8 != b / 8 && b % 4 == 1 && b / 8 < leaves;
          setBw(m, a, b, 10.0f * noise * (shifted ? 0.72f : 1.0f));
        }
      }
    });
  };
  const Fabric spine = spineAt(8);
  const auto all = analyze(spine.m, spine.topology, kDefaults);
  const auto found = serious(all);
  ASSERT_EQ(found.size(), 1u) << describe(all);
  EXPECT_EQ(found[0].kind, core::FindingKind::kSwitch);
  EXPECT_EQ(found[0].subject, "one of 4 spines (spine0 .. spine3)");
  EXPECT_NE(found[0].message.find("under each of 8 leaves, the nodes host1, host5, host9"), std::string::npos)
      << found[0].message;
  EXPECT_NE(found[0].message.find("each such node's median pair below"), std::string::npos) << found[0].message;
  EXPECT_GT(found[0].confidence, 0.9);

  const Fabric two = spineAt(2);
  for (const auto& f : analyze(two.m, two.topology, kDefaults)) {
    EXPECT_EQ(f.subject.find("spines"), std::string::npos) << describe({f});
  }
}

// The one serious finding is the uplinks of `leaf`.
void expectOnlyUplinksOf(const Fabric& f, const std::string& leaf) {
  const auto all = analyze(f.m, f.topology, kDefaults);
  const auto found = serious(all);
  ASSERT_EQ(found.size(), 1u) << describe(all);
  EXPECT_EQ(found[0].kind, core::FindingKind::kUplink);
  EXPECT_EQ(found[0].subject.rfind(leaf + " ", 0), 0u) << found[0].subject;
}

// leaf6's cable up to spine1 slows its pairs to hosts 1 mod 4. host5 (leaf0) met few peers outside
// leaf6 (quick mode's second round brought it leaf6's nodes): mostly slow from outside, but from
// one leaf only, which a cable down to leaf0 would not be. leaf6's cable, not leaf0's.
TEST(CableRule, ANodeSlowFromOneLeafOnlyIsNotItsLeafsCable) {
  const Fabric f = destinationRouted(8, 8, 4, -1, 0, 10.0f, [](core::Matrices& m) {
    for (int a = 48; a < 56; ++a) {
      for (int b = 0; b < 64; ++b) {
        if (b / 8 != 6 && b % 4 == 1) setBw(m, a, b, 3.0f);
      }
    }
    for (int a = 8; a < 64; ++a) {
      if (a / 8 != 6 && a != 20 && a != 30) setBw(m, a, 5, std::nanf(""));
    }
  });
  expectOnlyUplinksOf(f, "leaf6");
}

// leaf7's cable up to spine6, where the second round measured one destination behind it (host38)
// from every node of the leaf, and the rest of the fabric reaches host38 well: that cable, not
// eight links.
TEST(CableRule, OneDestinationEveryNodeOfALeafReachesSlowlyIsItsCable) {
  const Fabric f = destinationRouted(8, 8, 8, -1, 0, 10.0f, [](core::Matrices& m) {
    for (int a = 56; a < 64; ++a) {
      for (int b = 0; b < 56; ++b) {
        if (b % 8 == 6) setBw(m, a, b, b == 38 ? 3.0f : std::nanf(""));
      }
    }
  });
  expectOnlyUplinksOf(f, "leaf7");
}

// leaf6's cable up to spine3, beside slow nodes: the few other nodes that measured host11 reach it
// well but for the slow nodes (which send slowly to everyone) and a noisy pair, which say nothing
// of host11's own cable, so host11 is one of the cable's destinations and leaf6's pairs to it are
// not links. Once with one slow node and a noisy pair, once with two slow nodes.
TEST(CableRule, NoisyPairsAndSlowSendersDoNotKeepADestinationOutOfTheShape) {
  for (const bool twoSlowNodes : {false, true}) {
    const Fabric f = destinationRouted(8, 8, 4, -1, 0, 10.0f, [twoSlowNodes](core::Matrices& m) {
      const auto slowNode = [&](int x) { return x == 34 || (twoSlowNodes && x == 36); };
      for (int a = 0; a < 64; ++a) {
        for (int b = 0; b < 64; ++b) {
          if (a == b) continue;
          if (a / 8 == 6 && b / 8 != 6 && b % 4 == 3) setBw(m, a, b, 3.0f);
          if (slowNode(a) || slowNode(b)) setBw(m, a, b, 5.0f);
          const bool kept = a / 8 == 6 || a == 28 || a == 29 || a == 34 || a == 36 || a == 40 || a == 44;
          if (b == 11 && !kept) setBw(m, a, b, std::nanf(""));
        }
      }
      if (!twoSlowNodes) m.rankUnidirWorst.at(40, 11) = 3.0f;
    });
    const auto all = analyze(f.m, f.topology, kDefaults);
    EXPECT_TRUE(ofKind(all, "link").empty()) << twoSlowNodes << describe(all);
    const auto uplinks = ofKind(all, "uplink");
    ASSERT_EQ(uplinks.size(), 1u) << describe(all);
    EXPECT_NE(uplinks[0].message.find("host11"), std::string::npos) << uplinks[0].message;
  }
}

// Two pods of two leaves of two hosts, each pod's two spines above every node of the pod, each
// spine with two cables up to the cores; p0s1's cables slow pod 0's pairs to pod 1's odd hosts.
// Which spine of pod 0 carries those pairs is the routing's: neither spine's uplinks are named
// as the cable (p0s0's were, the first of the two).
TEST(CableRule, APodsSpinesAboveTheSameNodesAreNotOneCable) {
  std::string text;
  for (int p = 0; p < 2; ++p) {
    for (int k = 0; k < 2; ++k) {
      for (int c = 0; c < 2; ++c) text += fmt::format("p{}s{}:{} -> core{}:{}\n", p, k, 3 + c, 2 * k + c, p + 1);
    }
    for (int j = 0; j < 2; ++j) {
      for (int k = 0; k < 2; ++k) text += fmt::format("p{}l{}:{} -> p{}s{}:{}\n", p, j, 3 + k, p, k, j + 1);
    }
  }
  for (int h = 0; h < 8; ++h) text += fmt::format("host{} -> p{}l{}:{}\n", h, h / 4, h / 2 % 2, h % 2 + 1);
  const Fabric bare = fabric(8, 1, 64, [](core::Matrices& m, const core::Topology&) {
    for (int a = 0; a < 4; ++a) {
      for (int b = 5; b < 8; b += 2) setBw(m, a, b, 3.0f);
    }
  });
  const Fabric f = withFabric(bare, text.c_str());
  const auto all = analyze(f.m, f.topology, kDefaults);
  for (const auto& finding : all) {
    EXPECT_NE(finding.subject.rfind("p0s", 0), 0u) << describe(all);
  }
}

// The same spine where host9's and host17's leafmates measured nothing to them (quick mode): they
// are the spine's too, not nodes' ingress.
TEST(CableRule, ASpinesNodeWithoutItsLeafmatesPairsIsTheSpines) {
  const Fabric f = destinationRouted(8, 8, 8, -1, 0, 10.0f, [](core::Matrices& m) {
    for (int a = 0; a < 64; ++a) {
      for (int b = 0; b < 64; ++b) {
        if (a / 8 != b / 8 && b % 8 == 1) setBw(m, a, b, 0.3f);
        if (a != b && a / 8 == b / 8 && (b == 9 || b == 17)) setBw(m, a, b, std::nanf(""));
      }
    }
  });
  const auto all = analyze(f.m, f.topology, kDefaults);
  const auto found = serious(all);
  ASSERT_EQ(found.size(), 1u) << describe(all);
  EXPECT_EQ(found[0].kind, core::FindingKind::kSwitch);
}

// Two leaves' cables to one spine at once: two cables, each its leaf's, not a spine.
TEST(CableRule, TwoLeavesCablesAreNotASpine) {
  const Fabric f = destinationRouted(8, 8, 8, 1, 2, 10.0f, [](core::Matrices& m) {
    for (int a = 0; a < 64; ++a) {
      for (int b = 0; b < 64; ++b) {
        const bool across = a / 8 != b / 8 && b % 8 == 2;
        if (across && (a / 8 == 1 || b / 8 == 1 || a / 8 == 5 || b / 8 == 5)) setBw(m, a, b, 0.3f);
      }
    }
  });
  const auto all = analyze(f.m, f.topology, kDefaults);
  const auto found = serious(all);
  ASSERT_EQ(found.size(), 2u) << describe(all);
  for (const auto& x : found) EXPECT_EQ(x.kind, core::FindingKind::kUplink) << describe(all);
}

// Only one way: the cable slow towards the spine. The destinations' own leaves reach them well.
TEST(CableRule, OneWayUp) {
  const Fabric f = destinationRouted(4, 4, 4, 1, 2, 10.0f, [](core::Matrices& m) {
    for (int a = 4; a < 8; ++a) {
      for (int b = 0; b < 16; ++b) {
        if (b / 4 != 1 && b % 4 == 2) setBw(m, a, b, 0.5f);
      }
    }
  });
  const auto all = analyze(f.m, f.topology, kDefaults);
  const auto found = serious(all);
  ASSERT_EQ(found.size(), 1u) << describe(all);
  EXPECT_EQ(found[0].kind, core::FindingKind::kUplink);
  EXPECT_NE(found[0].message.find("reaches 3 destinations outside it slowly"), std::string::npos) << found[0].message;
  EXPECT_EQ(found[0].message.find("from outside the leaf"), std::string::npos) << found[0].message;
}

// A node whose ingress is slow from everyone, its leafmates too, is the node's, not a cable's.
TEST(CableRule, ASlowIngressFromLeafmatesTooIsTheNode) {
  const Fabric f = destinationRouted(4, 4, 4, 1, 2, 10.0f, [](core::Matrices& m) {
    for (int a = 0; a < 16; ++a) {
      if (a != 6) setBw(m, a, 6, 0.5f);
    }
  });
  const auto all = analyze(f.m, f.topology, kDefaults);
  const auto found = serious(all);
  ASSERT_EQ(found.size(), 1u) << describe(all);
  EXPECT_EQ(found[0].kind, core::FindingKind::kNodeIngress);
  EXPECT_EQ(found[0].subject, "host6");
}

// Pairs inside a leaf run faster than across it (fewer cables): at 12 GB/s against 10. Host6's own
// cable slows what it receives: 8.5 from outside, 10.2 from its leafmates, above the fabric's bar
// but below their 12. Its ingress, not a cable above its leaf.
TEST(CableRule, AHostSlowerFromItsLeafmatesThanTheLeafIsItsOwn) {
  const Fabric f = destinationRouted(4, 4, 4, 1, 2, 10.0f, [](core::Matrices& m) {
    for (int a = 0; a < 16; ++a) {
      for (int b = 0; b < 16; ++b) {
        if (a != b && a / 4 == b / 4) setBw(m, a, b, 12.0f);
      }
    }
    for (int a = 0; a < 16; ++a) {
      if (a != 6) setBw(m, a, 6, a / 4 == 1 ? 10.2f : 8.5f);
    }
  });
  const auto all = analyze(f.m, f.topology, kDefaults);
  EXPECT_EQ(ofKindIn(all, "uplink"), 0) << describe(all);
  const auto ingress = ofKind(all, "node_ingress");  // 0.85x of the fabric: as sure as the node rule is
  ASSERT_EQ(ingress.size(), 1u) << describe(all);
  EXPECT_EQ(ingress[0].subject, "host6");
  for (const auto& x : serious(all)) EXPECT_EQ(x.nodeA, 6) << describe(all);
}

}  // namespace
}  // namespace fabricmap::orchestrator
