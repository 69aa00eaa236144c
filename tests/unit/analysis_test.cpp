// Bottleneck analysis on synthetic matrices: each planted fault is named precisely, a clean or
// merely noisy fabric raises nothing.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "orchestrator/analysis.h"
#include "orchestrator/matrices.h"
#include "orchestrator/run_config.h"
#include "topologies/rank_map.h"

namespace fabricmap::orchestrator {
namespace {

// A fabric of `nodes` x `perNode` ranks where every rank pair was measured once: inter-node pairs
// at 10 GB/s and 20 us, same-node pairs at 100 GB/s and 2 us, each with a deterministic +-2%
// jitter. `plant` changes cells before the node matrix is derived.
struct Fabric {
  core::Topology topology;
  core::Matrices m;
};

Fabric fabric(int nodes, int perNode, int cpus = 64,
              const std::function<void(core::Matrices&, const core::Topology&)>& plant = {}) {
  std::vector<core::HostProbe> probes;
  for (int r = 0; r < nodes * perNode; ++r) {
    core::HostProbe p{.hostname = std::string("host") + std::to_string(r / perNode)};
    p.sharedLeader = r / perNode * perNode;
    p.cpus = cpus;
    probes.push_back(p);
  }
  Fabric f;
  f.topology = topologies::buildTopology(probes, 0);
  const int n = nodes * perNode;
  MatrixBuilder b(f.topology, parseRunOptions({"--pairwise"}).config);
  for (int a = 0; a < n; ++a) {
    for (int c = a + 1; c < n; ++c) {
      const bool same = a / perNode == c / perNode;
      const double jitter = 1.0 + 0.02 * std::sin(a * 7.0 + c * 3.0);
      core::PairRecord s;
      s.level = "rank";
      s.a = a;
      s.b = c;
      s.bwAB = (same ? 100.0 : 10.0) * jitter;
      s.bwBA = (same ? 100.0 : 10.0) / jitter;
      s.latencyUs = (same ? 2.0 : 20.0) * jitter;
      b.add(s);
    }
  }
  f.m = b.build();
  if (plant) {
    // planted cells may carry a worst sample: start the worst matrices as copies (as a retest does)
    f.m.rankUnidirWorst = f.m.rankUnidir;
    f.m.rankLatencyWorst = f.m.rankLatency;
    plant(f.m, f.topology);
    // recompute the derived node matrix from the planted rank matrix
    MatrixBuilder again(f.topology, parseRunOptions({"--pairwise"}).config);
    for (int a = 0; a < n; ++a) {
      for (int c = a + 1; c < n; ++c) {
        core::PairRecord s;
        s.level = "rank";
        s.a = a;
        s.b = c;
        s.bwAB = f.m.rankUnidir.at(a, c);
        s.bwBA = f.m.rankUnidir.at(c, a);
        s.latencyUs = f.m.rankLatency.at(a, c);
        again.add(s);
        s.sample = 1;  // the worst sample, as a retest
        s.bwAB = f.m.rankUnidirWorst.at(a, c);
        s.bwBA = f.m.rankUnidirWorst.at(c, a);
        s.latencyUs = f.m.rankLatencyWorst.at(a, c);
        again.add(s);
      }
    }
    f.m = again.build();
  }
  return f;
}

// Sets both the best and the worst sample of a directed cell (a consistent measurement).
void setBw(core::Matrices& m, int a, int b, float v) {
  m.rankUnidir.at(a, b) = v;
  m.rankUnidirWorst.at(a, b) = v;
}

std::vector<core::Finding> serious(const std::vector<core::Finding>& all) {
  std::vector<core::Finding> out;
  for (const auto& f : all) {
    if (f.severity != "info") out.push_back(f);
  }
  return out;
}

std::string describe(const std::vector<core::Finding>& all) {
  std::string s;
  for (const auto& f : all) s += "[" + f.severity + " " + f.kind + " " + f.subject + ": " + f.message + "] ";
  return s.empty() ? "none" : s;
}

const AnalysisConfig kDefaults{};

int ofKindIn(const std::vector<core::Finding>& all, const std::string& kind) {
  return static_cast<int>(std::count_if(all.begin(), all.end(), [&](const auto& f) { return f.kind == kind; }));
}

TEST(Analysis, CleanFabricRaisesNothing) {
  for (int perNode : {1, 2, 4}) {
    const Fabric f = fabric(4, perNode);
    const auto findings = analyze(f.m, f.topology, kDefaults);
    EXPECT_TRUE(serious(findings).empty()) << perNode << " per node: " << describe(findings);
    EXPECT_TRUE(suspectRankPairs(f.m, kDefaults).empty());
  }
}

TEST(Analysis, BaselinesAreTheHealthyMedianEvenWithHalfThePairsSlow) {
  // node 3 of 4 slow both ways: half of all directed node pairs at 0.1 GB/s
  const Fabric f = fabric(4, 1, 64, [](core::Matrices& m, const core::Topology&) {
    for (int x = 0; x < 3; ++x) {
      setBw(m, x, 3, 0.1f);
      setBw(m, 3, x, 0.1f);
    }
  });
  EXPECT_NEAR(nodeBaseline(f.m).bandwidth, 10.0, 0.3);
  EXPECT_NEAR(classBaseline(f.m, core::LinkClass::kInterNode).bandwidth, 10.0, 0.3);
  EXPECT_LT(nodeBaseline(f.m).bandwidthSpread, 0.05);
}

// Two of seven nodes throttled both ways slow 22 of the 42 node pairs: the healthy values lie
// above a wide gap and are the baseline, and both nodes are named.
TEST(Analysis, AFaultyMajorityDoesNotBecomeTheBaseline) {
  const Fabric f = fabric(7, 1, 64, [](core::Matrices& m, const core::Topology&) {
    for (int x = 0; x < 7; ++x) {
      for (int slow : {2, 5}) {
        if (x == slow) continue;
        setBw(m, x, slow, 0.1f);
        setBw(m, slow, x, 0.1f);
      }
    }
  });
  EXPECT_NEAR(nodeBaseline(f.m).bandwidth, 10.0, 0.3);
  EXPECT_LT(nodeBaseline(f.m).bandwidthSpread, 0.05);
  const auto found = serious(analyze(f.m, f.topology, kDefaults));
  ASSERT_EQ(found.size(), 2u) << describe(found);
  EXPECT_EQ(found[0].kind, "node");
  EXPECT_EQ(found[1].kind, "node");
  EXPECT_EQ(std::min(found[0].nodeA, found[1].nodeA), 2);
  EXPECT_EQ(std::max(found[0].nodeA, found[1].nodeA), 5);
}

// Healthy pairs differ by +-50% (the bar falls to its 0.1x floor), a node's pairs all sit at 0.15x,
// more than 3x below the slowest healthy one: the gap, not the noise, sets the bar, and the node
// is named; without the gap (its pairs at 0.5x, within the healthy spread) nothing is.
TEST(Analysis, AWideGapSetsTheBarOnANoisyFabric) {
  const auto plant = [](float slow) {
    return [slow](core::Matrices& m, const core::Topology&) {
      for (int a = 0; a < 6; ++a) {
        for (int b = 0; b < 6; ++b) {
          if (a == b) continue;
          setBw(m, a, b, a == 5 || b == 5 ? slow : static_cast<float>(10.0 * (0.5 + ((a * 5 + b * 3) % 7) / 6.0)));
        }
      }
    };
  };
  const Fabric gap = fabric(6, 1, 64, plant(1.5f));
  EXPECT_GT(nodeBaseline(gap.m).bandwidthSpread, 0.3);
  EXPECT_GT(nodeBaseline(gap.m).bandwidthGapBar, 0.2);
  const auto found = serious(analyze(gap.m, gap.topology, kDefaults));
  ASSERT_EQ(found.size(), 1u) << describe(found);
  EXPECT_EQ(found[0].kind, "node");
  EXPECT_EQ(found[0].nodeA, 5);
  const Fabric within = fabric(6, 1, 64, plant(5.0f));
  EXPECT_EQ(nodeBaseline(within.m).bandwidthGapBar, 0.0);
  const auto none = analyze(within.m, within.topology, kDefaults);
  EXPECT_TRUE(serious(none).empty()) << describe(none);
}

// Baselines fixed from noisy first samples (median 2.2, +-65%: the bar at its 0.1x floor, 0.22)
// leave a node whose retested pairs all sit at 0.27 unnamed; once retested, the healthy pairs and
// the node's are 20x apart, and that gap judges the retested cells. Cells measured once keep the
// fixed bar.
TEST(Analysis, RetestedCellsAreJudgedAgainstTheGapTheyShow) {
  Fabric f = fabric(8, 1);
  f.m.nodeMeasured = true;
  for (int x = 0; x < 8; ++x) {
    for (int y = 0; y < 8; ++y) {
      if (x == y) continue;
      f.m.nodeBw.at(x, y) = x == 7 || y == 7 ? 0.27f : static_cast<float>(6.0 + (x * 3 + y * 5) % 11);
      f.m.nodeCv.at(x, y) = 0.0f;  // retested
    }
  }
  f.m.nodeBwWorst = f.m.nodeBw;
  f.m.expectedFixed = true;
  f.m.nodeExpected = {2.2, 20.0, 0.65, 0.0, 0.0};
  f.m.classExpected = classBaselines(f.m);
  f.m.classExpected[static_cast<std::size_t>(core::LinkClass::kInterNode)] = f.m.nodeExpected;
  auto found = serious(analyze(f.m, f.topology, kDefaults));
  ASSERT_EQ(found.size(), 1u) << describe(found);
  EXPECT_EQ(found[0].kind, "node");
  EXPECT_EQ(found[0].nodeA, 7);
  for (float& v : f.m.nodeCv.values) v = std::isnan(v) ? v : 0.05f;  // measured once: the fixed bar
  found = serious(analyze(f.m, f.topology, kDefaults));
  EXPECT_TRUE(found.empty()) << describe(found);
}

TEST(Analysis, NamesASlowNode) {
  const Fabric f = fabric(4, 1, 64, [](core::Matrices& m, const core::Topology&) {
    for (int x = 0; x < 3; ++x) {
      setBw(m, x, 3, 0.024f);
      setBw(m, 3, x, 0.024f);
    }
  });
  const auto found = serious(analyze(f.m, f.topology, kDefaults));
  ASSERT_EQ(found.size(), 1u) << describe(found);
  EXPECT_EQ(found[0].kind, "node");
  EXPECT_EQ(found[0].nodeA, 3);
  EXPECT_EQ(found[0].subject, "host3");
  EXPECT_EQ(found[0].severity, "error");
  EXPECT_NEAR(found[0].ratio, 0.0024, 0.0005);
  EXPECT_NE(found[0].message.find("3 of 3 peers"), std::string::npos) << found[0].message;
  EXPECT_NE(found[0].message.find("24.0 MB/s"), std::string::npos) << found[0].message;
}

TEST(Analysis, NamesEgressAndIngress) {
  const Fabric egress = fabric(4, 1, 64, [](core::Matrices& m, const core::Topology&) {
    for (int x = 0; x < 4; ++x) {
      if (x != 1) setBw(m, 1, x, 0.5f);
    }
  });
  auto found = serious(analyze(egress.m, egress.topology, kDefaults));
  ASSERT_EQ(found.size(), 1u) << describe(found);
  EXPECT_EQ(found[0].kind, "node_egress");
  EXPECT_EQ(found[0].nodeA, 1);
  const Fabric ingress = fabric(5, 1, 64, [](core::Matrices& m, const core::Topology&) {
    for (int x = 0; x < 5; ++x) {
      if (x != 4) setBw(m, x, 4, 6.0f);  // 0.6x: a warning, not an error
    }
  });
  found = serious(analyze(ingress.m, ingress.topology, kDefaults));
  ASSERT_EQ(found.size(), 1u) << describe(found);
  EXPECT_EQ(found[0].kind, "node_ingress");
  EXPECT_EQ(found[0].nodeA, 4);
  EXPECT_EQ(found[0].severity, "warning");
}

TEST(Analysis, NamesASingleLinkNotItsNodes) {
  const Fabric oneWay = fabric(4, 1, 64, [](core::Matrices& m, const core::Topology&) { setBw(m, 0, 3, 0.02f); });
  auto found = serious(analyze(oneWay.m, oneWay.topology, kDefaults));
  ASSERT_EQ(found.size(), 1u) << describe(found);
  EXPECT_EQ(found[0].kind, "link");
  EXPECT_EQ(found[0].nodeA, 0);
  EXPECT_EQ(found[0].nodeB, 3);
  EXPECT_EQ(found[0].subject, "host0 -> host3");
  const Fabric bothWays = fabric(4, 1, 64, [](core::Matrices& m, const core::Topology&) {
    setBw(m, 1, 2, 0.02f);
    setBw(m, 2, 1, 0.03f);
  });
  found = serious(analyze(bothWays.m, bothWays.topology, kDefaults));
  ASSERT_EQ(found.size(), 1u) << describe(found);
  EXPECT_EQ(found[0].subject, "host1 <-> host2");
}

TEST(Analysis, TwoNodesCannotTellANodeFromALink) {
  const Fabric f = fabric(2, 2, 64, [](core::Matrices& m, const core::Topology&) {
    for (int a : {0, 1}) {
      for (int b : {2, 3}) setBw(m, a, b, 0.05f);
    }
  });
  const auto found = serious(analyze(f.m, f.topology, kDefaults));
  ASSERT_EQ(found.size(), 1u) << describe(found);
  EXPECT_EQ(found[0].kind, "link");
}

TEST(Analysis, NamesASlowRankOnAnOtherwiseHealthyNode) {
  // 4 nodes x 2 ranks; rank 5 (node 2) slow to and from every other node
  const Fabric f = fabric(4, 2, 64, [](core::Matrices& m, const core::Topology& t) {
    for (int q = 0; q < 8; ++q) {
      if (t.ranks[static_cast<std::size_t>(q)].node == 2) continue;
      setBw(m, 5, q, 1.0f);
      setBw(m, q, 5, 1.0f);
    }
  });
  const auto found = serious(analyze(f.m, f.topology, kDefaults));
  ASSERT_EQ(found.size(), 1u) << describe(found);
  EXPECT_EQ(found[0].kind, "rank");
  EXPECT_EQ(found[0].rank, 5);
  EXPECT_EQ(found[0].nodeA, 2);
}

TEST(Analysis, NamesASlowPathInsideANode) {
  const Fabric f = fabric(2, 4, 64, [](core::Matrices& m, const core::Topology&) {
    setBw(m, 5, 6, 20.0f);  // node 1, ranks 5 <-> 6 at 0.2x both ways (a link down or trained low)
    setBw(m, 6, 5, 20.0f);
  });
  const auto found = serious(analyze(f.m, f.topology, kDefaults));
  ASSERT_EQ(found.size(), 1u) << describe(found);
  EXPECT_EQ(found[0].kind, "intra_node");
  EXPECT_EQ(found[0].nodeA, 1);
  EXPECT_NE(found[0].message.find("2 of 12"), std::string::npos) << found[0].message;
  // one direction alone is as likely the host's scheduling: half the margin, information only
  const Fabric oneWay = fabric(2, 4, 64, [](core::Matrices& m, const core::Topology&) { setBw(m, 5, 6, 20.0f); });
  const auto all = analyze(oneWay.m, oneWay.topology, kDefaults);
  EXPECT_TRUE(serious(all).empty()) << describe(all);
  ASSERT_EQ(ofKindIn(all, "intra_node"), 1) << describe(all);
}

// On a noisy fabric a rank's pairs may not cross the bar on their own (healthy rank pairs differ
// 4x, the bar sits at its floor), yet its node's pairs, measured whole, do (they wait for it),
// while the node's other rank runs 4x faster: the rank is named on its node's evidence, not the
// node.
TEST(Analysis, ARankFarSlowerThanItsNodeMateIsTheCulprit) {
  Fabric f = fabric(4, 2, 64, [](core::Matrices& m, const core::Topology& t) {
    for (int a = 0; a < 8; ++a) {
      for (int b = 0; b < 8; ++b) {
        if (t.ranks[static_cast<std::size_t>(a)].node == t.ranks[static_cast<std::size_t>(b)].node) continue;
        setBw(m, a, b, static_cast<float>(a == 5 ? 2.5 : 10.0 * (0.4 + 0.15 * ((a * 5 + b * 3) % 9))));
      }
    }
  });
  f.m.nodeMeasured = true;
  for (int x = 0; x < 4; ++x) {
    for (int y = 0; y < 4; ++y) {
      if (x != y) f.m.nodeBw.at(x, y) = f.m.nodeBwWorst.at(x, y) = x == 2 ? 3.0f : 20.0f;
    }
  }
  EXPECT_LT(classBaseline(f.m, core::LinkClass::kInterNode).bandwidthBar(0.9), 0.25);  // 2.5 is not below it
  const auto found = serious(analyze(f.m, f.topology, kDefaults));
  ASSERT_EQ(found.size(), 1u) << describe(found);
  EXPECT_EQ(found[0].kind, "rank");
  EXPECT_EQ(found[0].rank, 5);
  EXPECT_NE(found[0].message.find("its node's best rank"), std::string::npos) << found[0].message;
  EXPECT_GT(found[0].confidence, 0.5) << found[0].message;
}

// Host-memory pairs inside nodes whose retests vary 2-9 GB/s around 4.7 after steady first samples
// fixed a tight bar: a node's pair at 0.6x both ways is within the class's own variation, so only
// information; the same pair among steady retests is a warning.
TEST(Analysis, AnIntraNodePathWithinItsClassVariationIsOnlyInformation) {
  const auto run = [](const std::vector<float>& pairs) {
    Fabric f = fabric(6, 2, 64, [&](core::Matrices& m, const core::Topology&) {
      for (int node = 0; node < 6; ++node) {
        setBw(m, 2 * node, 2 * node + 1, pairs[static_cast<std::size_t>(2 * node)]);
        setBw(m, 2 * node + 1, 2 * node, pairs[static_cast<std::size_t>(2 * node + 1)]);
      }
    });
    const auto inter = classBaseline(f.m, core::LinkClass::kInterNode);
    const auto node = nodeBaseline(f.m);
    f.m.expectedFixed = true;  // fixed from steady first samples
    f.m.classExpected[static_cast<std::size_t>(core::LinkClass::kSameNodeHost)] = {4.68, 2.0, 0.05, 0.0, 0.0};
    f.m.classExpected[static_cast<std::size_t>(core::LinkClass::kInterNode)] = inter;
    f.m.nodeExpected = node;
    return analyze(f.m, f.topology, kDefaults);
  };
  const auto noisy = run({8.66f, 3.99f, 2.81f, 2.81f, 6.05f, 5.54f, 2.34f, 3.48f, 5.6f, 6.2f, 4.68f, 1.59f});
  EXPECT_TRUE(serious(noisy).empty()) << describe(noisy);
  EXPECT_GE(ofKindIn(noisy, "intra_node"), 1) << describe(noisy);
  const auto steady = run({4.7f, 4.6f, 2.81f, 2.81f, 4.75f, 4.66f, 4.7f, 4.72f, 4.6f, 4.69f, 4.68f, 4.71f});
  const auto found = serious(steady);
  ASSERT_EQ(found.size(), 1u) << describe(steady);
  EXPECT_EQ(found[0].kind, "intra_node");
  EXPECT_EQ(found[0].nodeA, 1);
}

// Ping-pongs on a busy host vary several-fold: one pair at 2.3x of a baseline whose final figures
// spread from 1x to 4x is information; one at 100x stands out and is named.
TEST(Analysis, ALinkLatencyMustStandOutOfTheFabricsVariation) {
  const auto run = [](float pair) {
    const Fabric f = fabric(6, 1, 64, [&](core::Matrices& m, const core::Topology&) {
      for (int a = 0; a < 6; ++a) {
        for (int b = a + 1; b < 6; ++b) {
          const float l = a == 1 && b == 3 ? pair : static_cast<float>(20.0 * (1.0 + ((a * 5 + b * 3) % 7) / 2.0));
          m.rankLatency.at(a, b) = m.rankLatency.at(b, a) = l;
          m.rankLatencyWorst.at(a, b) = m.rankLatencyWorst.at(b, a) = l;
        }
      }
    });
    return analyze(f.m, f.topology, kDefaults);
  };
  const auto busy = run(130.0f);
  EXPECT_TRUE(serious(busy).empty()) << describe(busy);
  const auto found = serious(run(5000.0f));
  ASSERT_EQ(found.size(), 1u) << describe(found);
  EXPECT_EQ(found[0].kind, "link_latency");
  EXPECT_EQ(found[0].nodeA, 1);
  EXPECT_EQ(found[0].nodeB, 3);
}

TEST(Analysis, NamesANodeWithHighLatency) {
  const Fabric f = fabric(4, 1, 64, [](core::Matrices& m, const core::Topology&) {
    for (int x = 0; x < 3; ++x) {
      for (const auto& [a, b] : {std::pair{x, 3}, std::pair{3, x}}) {
        m.rankLatency.at(a, b) = 200.0f;
        m.rankLatencyWorst.at(a, b) = 210.0f;
      }
    }
  });
  const auto found = serious(analyze(f.m, f.topology, kDefaults));
  ASSERT_EQ(found.size(), 1u) << describe(found);
  EXPECT_EQ(found[0].kind, "node_latency");
  EXPECT_EQ(found[0].nodeA, 3);
  EXPECT_EQ(found[0].unit, "us");
}

TEST(Analysis, SamplesOnBothSidesOfTheBarAreNoisyNotSlow) {
  // looked slow once (worst 0.5), best of the retests 9.8: above the bar (0.9 x ~10): not judged
  const Fabric f = fabric(4, 1, 64, [](core::Matrices& m, const core::Topology&) {
    m.rankUnidir.at(0, 1) = 9.8f;
    m.rankUnidirWorst.at(0, 1) = 0.5f;
  });
  const auto all = analyze(f.m, f.topology, kDefaults);
  EXPECT_TRUE(serious(all).empty()) << describe(all);
  bool noted = false;
  for (const auto& x : all) noted = noted || (x.kind == "noisy" && x.severity == "info");
  EXPECT_TRUE(noted) << describe(all);
}

// Every sample below the bar is slow, however much the samples differ: a node throttled to a few
// MB/s measures 4 to 6 MB/s (the user's case that came out as three links).
TEST(Analysis, SamplesAllBelowTheBarAreSlowHoweverTheyDiffer) {
  const Fabric f = fabric(4, 1, 64, [](core::Matrices& m, const core::Topology&) {
    for (int x = 0; x < 3; ++x) {
      for (const auto& [a, b] : {std::pair{x, 3}, std::pair{3, x}}) {
        m.rankUnidir.at(a, b) = 0.006f;
        m.rankUnidirWorst.at(a, b) = 0.004f;
      }
    }
  });
  const auto found = serious(analyze(f.m, f.topology, kDefaults));
  ASSERT_EQ(found.size(), 1u) << describe(found);
  EXPECT_EQ(found[0].kind, "node");
  EXPECT_EQ(found[0].nodeA, 3);
  // 6 of 6 pairs slow, 3 samples each (retested), far below the bar, the rest of the fabric clean
  EXPECT_NEAR(found[0].confidence, 18.0 / 19.0, 1e-9) << found[0].message;
  EXPECT_NE(found[0].message.find("confidence 0.95 (6 of 6 pairs slow in 18 samples"), std::string::npos)
      << found[0].message;
}

TEST(Analysis, AnEgressWithErraticSamplesIsStillTheEgress) {
  const Fabric f = fabric(4, 1, 64, [](core::Matrices& m, const core::Topology&) {
    const float best[] = {0.006f, 0.3f, 0.02f};
    const float worst[] = {0.002f, 0.05f, 0.019f};
    for (int x = 0; x < 3; ++x) {
      m.rankUnidir.at(3, x) = best[x];
      m.rankUnidirWorst.at(3, x) = worst[x];
    }
  });
  const auto found = serious(analyze(f.m, f.topology, kDefaults));
  ASSERT_EQ(found.size(), 1u) << describe(found);
  EXPECT_EQ(found[0].kind, "node_egress");
  EXPECT_EQ(found[0].nodeA, 3);
  EXPECT_GT(found[0].confidence, 0.7) << found[0].message;
}

// A pair just below the bar is slow, but not clearly: its confidence is low and it is information
// unless --min-confidence allows it.
TEST(Analysis, AMarginalSlowLinkHasLowConfidence) {
  const Fabric f = fabric(4, 1, 64, [](core::Matrices& m, const core::Topology&) { setBw(m, 0, 2, 8.8f); });
  const auto all = analyze(f.m, f.topology, kDefaults);
  EXPECT_TRUE(serious(all).empty()) << describe(all);
  const auto link = std::find_if(all.begin(), all.end(), [](const auto& x) { return x.kind == "link"; });
  ASSERT_NE(link, all.end()) << describe(all);
  EXPECT_LT(link->confidence, kDefaults.minConfidence);
  EXPECT_NE(link->message.find("below --min-confidence"), std::string::npos) << link->message;
  AnalysisConfig anything = kDefaults;
  anything.minConfidence = 0;
  const auto found = serious(analyze(f.m, f.topology, anything));
  ASSERT_EQ(found.size(), 1u) << describe(found);
  EXPECT_EQ(found[0].kind, "link");
  EXPECT_DOUBLE_EQ(found[0].confidence, link->confidence);
  // a clearly slow link is sure: 1 pair, 3 samples, clear, both ends fine with everyone else
  const Fabric clear = fabric(4, 1, 64, [](core::Matrices& m, const core::Topology&) { setBw(m, 0, 2, 2.0f); });
  const auto sure = serious(analyze(clear.m, clear.topology, kDefaults));
  ASSERT_EQ(sure.size(), 1u) << describe(sure);
  EXPECT_NEAR(sure[0].confidence, 0.75, 1e-9);
}

// The node pairs measured whole (every local rank at once) show a node slow when one of its ranks
// is: the rank matrix tells which, and the rank is named, not the node.
TEST(Analysis, ANodeSlowThroughOneOfItsRanksNamesTheRank) {
  Fabric f = fabric(4, 2, 64, [](core::Matrices& m, const core::Topology& t) {
    for (int q = 0; q < 8; ++q) {
      if (t.ranks[static_cast<std::size_t>(q)].node != 2) setBw(m, 5, q, 0.5f);  // rank 5 sends slowly
    }
  });
  f.m.nodeMeasured = true;
  for (int y = 0; y < 4; ++y) {
    if (y != 2) f.m.nodeBw.at(2, y) = f.m.nodeBwWorst.at(2, y) = 1.0f;  // the node's streams wait for rank 5
  }
  const auto found = serious(analyze(f.m, f.topology, kDefaults));
  ASSERT_EQ(found.size(), 1u) << describe(found);
  EXPECT_EQ(found[0].kind, "rank");
  EXPECT_EQ(found[0].rank, 5);
  EXPECT_NE(found[0].message.find("sending"), std::string::npos) << found[0].message;
}

// A slow pair measured once with noisy iteration times (beyond --noise-cv) is not judged; once
// retested, the samples' agreement decides (a throttled link is noisy inside but slow every time).
TEST(Analysis, ANoisySlowPairIsNotJudgedWithoutARetest) {
  Fabric f = fabric(4, 1, 64, [](core::Matrices& m, const core::Topology&) { setBw(m, 0, 3, 0.02f); });
  f.m.rankCv.at(0, 3) = 0.6f;  // measured once, noisy
  completeMatrices(f.m, f.topology);  // the node figures follow
  auto all = analyze(f.m, f.topology, kDefaults);
  EXPECT_TRUE(serious(all).empty()) << describe(all);
  EXPECT_EQ(ofKindIn(all, "noisy"), 1) << describe(all);
  AnalysisConfig tolerant = kDefaults;
  tolerant.noiseCv = 0.8;  // a looser --noise-cv takes the same sample as steady
  EXPECT_EQ(serious(analyze(f.m, f.topology, tolerant)).size(), 1u);

  // the builder keeps the first sample's variation until a retest arrives
  MatrixBuilder b(f.topology, parseRunOptions({"--pairwise"}).config);
  core::PairRecord s;
  s.level = "rank";
  s.a = 0;
  s.b = 3;
  s.bwAB = s.bwBA = 0.02;
  s.cv = 0.6;
  b.add(s);
  EXPECT_FLOAT_EQ(b.build().rankCv.at(3, 0), 0.6f);
  s.sample = 1;
  s.cv = 0.9;  // a retest, as noisy inside, as slow overall
  b.add(s);
  EXPECT_FLOAT_EQ(b.build().rankCv.at(0, 3), 0.0f);
  f.m.rankCv.at(0, 3) = 0.0f;
  completeMatrices(f.m, f.topology);
  all = serious(analyze(f.m, f.topology, kDefaults));
  ASSERT_EQ(all.size(), 1u) << describe(all);
  EXPECT_EQ(all[0].kind, "link");
}

TEST(Analysis, ANoisyFabricOnlyNamesGrossSlowdowns) {
  // healthy pairs vary +-50%: 0.5x is within the noise, 0.02x is not
  const auto plant = [](double slow) {
    return [slow](core::Matrices& m, const core::Topology&) {
      for (int a = 0; a < 6; ++a) {
        for (int b = 0; b < 6; ++b) {
          if (a != b) setBw(m, a, b, static_cast<float>(10.0 * (0.5 + ((a * 5 + b * 3) % 7) / 6.0)));
        }
      }
      setBw(m, 0, 5, static_cast<float>(slow));
    };
  };
  const Fabric mild = fabric(6, 1, 64, plant(4.0));
  const auto mildAll = analyze(mild.m, mild.topology, kDefaults);
  EXPECT_TRUE(serious(mildAll).empty()) << describe(mildAll);
  bool explained = false;
  for (const auto& x : mildAll) explained = explained || x.kind == "noise";
  EXPECT_TRUE(explained) << "an info finding must say the bar moved: " << describe(mildAll);
  const Fabric gross = fabric(6, 1, 64, plant(0.1));
  const auto found = serious(analyze(gross.m, gross.topology, kDefaults));
  ASSERT_EQ(found.size(), 1u) << describe(found);
  EXPECT_EQ(found[0].kind, "link");
}

TEST(Analysis, OversubscribedHostsOnlyGetInformation) {
  const Fabric f = fabric(1, 4, 2, [](core::Matrices& m, const core::Topology&) { setBw(m, 0, 1, 10.0f); });
  const auto all = analyze(f.m, f.topology, kDefaults);
  EXPECT_TRUE(serious(all).empty()) << describe(all);
  bool said = false;
  for (const auto& x : all) said = said || x.kind == "oversubscribed";
  EXPECT_TRUE(said) << describe(all);
}

TEST(Analysis, FixedBaselinesAreKept) {
  Fabric f = fabric(4, 1);
  fixBaselines(f.m, f.topology);
  const double before = nodeBaseline(f.m).bandwidth;
  for (float& v : f.m.nodeBw.values) v *= 3;  // lucky retests
  EXPECT_DOUBLE_EQ(nodeBaseline(f.m).bandwidth, before);
  EXPECT_TRUE(f.m.expectedFixed);
}

TEST(Analysis, SuspectsAreThePairsToRetest) {
  const Fabric f = fabric(4, 1, 64, [](core::Matrices& m, const core::Topology&) { setBw(m, 2, 1, 1.0f); });
  EXPECT_EQ(suspectRankPairs(f.m, kDefaults), (std::vector<std::pair<int, int>>{{1, 2}}));
  EXPECT_TRUE(suspectNodePairs(f.m, kDefaults).empty());  // the node matrix was derived, not measured
}

// On a noisy fabric the bar falls to 0.1x, yet a pair below half the baseline is retested, and so
// is one below it whose single sample varied too much to say; a pair at the baseline is not.
TEST(Analysis, OnANoisyFabricSlowLookingPairsAreStillRetested) {
  Fabric f = fabric(6, 1, 64, [](core::Matrices& m, const core::Topology&) {
    for (int a = 0; a < 6; ++a) {
      for (int b = 0; b < 6; ++b) {
        if (a != b) setBw(m, a, b, static_cast<float>(10.0 * (0.5 + ((a * 5 + b * 3) % 7) / 6.0)));
      }
    }
    setBw(m, 0, 5, 3.0f);  // 0.3x: above the noisy bar, below half the baseline
    setBw(m, 1, 4, 9.0f);  // just below the baseline, measured once with varied iterations
  });
  for (float& v : f.m.rankCv.values) v = std::isnan(v) ? v : 0.05f;  // measured once, steady
  f.m.rankCv.at(1, 4) = 0.5f;
  ASSERT_LT(classBaseline(f.m, core::LinkClass::kInterNode).bandwidthBar(kDefaults.slowThreshold), 0.3);
  const auto suspects = suspectRankPairs(f.m, kDefaults);
  EXPECT_NE(std::find(suspects.begin(), suspects.end(), std::pair{0, 5}), suspects.end());
  EXPECT_NE(std::find(suspects.begin(), suspects.end(), std::pair{1, 4}), suspects.end());
  for (const auto& [a, b] : suspects) {
    EXPECT_TRUE(f.m.rankUnidir.at(a, b) < 5.0f || f.m.rankUnidir.at(b, a) < 5.0f || (a == 1 && b == 4)) << a << "," << b;
  }
}

}  // namespace
}  // namespace fabricmap::orchestrator

namespace fabricmap::orchestrator {
namespace {

// One node of G GPUs, one rank per GPU, with the given link codes (G x G), class and GPU name;
// every ordered pair measured at bw(a, b) GB/s (twice, identical samples).
struct GpuNode {
  core::Topology topology;
  core::Matrices m;
};

GpuNode gpuNode(int g, const std::function<std::string(int, int)>& code, const std::string& cls,
                const std::string& nvswitch, const std::function<double(int, int)>& bw,
                const std::string& gpuName = "NVIDIA H100 80GB HBM3") {
  std::vector<core::HostProbe> probes;
  for (int r = 0; r < g; ++r) {
    core::HostProbe p{.hostname = std::string("gpu01")};
    p.sharedLeader = 0;
    p.cpus = 64;
    p.gpuCount = g;
    probes.push_back(p);
  }
  GpuNode n;
  n.topology = topologies::buildTopology(probes, 0);
  core::NodeRecord& node = n.topology.nodes[0];
  node.topologyClass = cls;
  node.nvswitch = nvswitch;
  for (int a = 0; a < g; ++a) {
    for (int b = 0; b < g; ++b) node.gpuLinks.push_back(a == b ? "X" : code(a, b));
  }
  for (auto& r : n.topology.ranks) {
    r.gpuIndex = r.rank;
    r.gpuName = gpuName;
  }
  MatrixBuilder builder(n.topology, parseRunOptions({"--pairwise"}).config);
  for (int sample = 0; sample < 2; ++sample) {
    for (int a = 0; a < g; ++a) {
      for (int b = a + 1; b < g; ++b) {
        core::PairRecord s;
        s.level = "rank";
        s.a = a;
        s.b = b;
        s.sample = sample;
        s.bwAB = bw(a, b);
        s.bwBA = bw(b, a);
        s.latencyUs = 3;
        builder.add(s);
      }
    }
  }
  n.m = builder.build();
  fixBaselines(n.m, n.topology);
  return n;
}

std::vector<core::Finding> ofKind(const std::vector<core::Finding>& all, const std::string& kind) {
  std::vector<core::Finding> out;
  for (const auto& f : all) {
    if (f.kind == kind) out.push_back(f);
  }
  return out;
}

const auto kNv18 = [](int, int) { return std::string("NV18"); };

TEST(ClaimedVsMeasured, GpuLinkClassesComeFromTheNodesLinks) {
  const GpuNode n = gpuNode(4, [](int a, int b) { return (a ^ b) == 1 ? "NV4" : "SYS"; }, "NVLINK_PAIRS", "no",
                            [](int, int) { return 50.0; });
  EXPECT_EQ(n.m.rankLinkClass.at(0, 1), core::LinkClass::kNvlink);
  EXPECT_EQ(n.m.rankLinkClass.at(0, 2), core::LinkClass::kPcie);
  const GpuNode s = gpuNode(4, kNv18, "FULL_NVSWITCH", "yes", [](int, int) { return 380.0; });
  EXPECT_EQ(s.m.rankLinkClass.at(2, 3), core::LinkClass::kNvswitch);
}

TEST(ClaimedVsMeasured, RecognisedGpusSetTheExpectedFigure) {
  const GpuNode s = gpuNode(4, kNv18, "FULL_NVSWITCH", "yes", [](int, int) { return 380.0; });
  const auto& e = s.m.classExpected[static_cast<std::size_t>(core::LinkClass::kNvswitch)];
  EXPECT_DOUBLE_EQ(e.bandwidth, kPracticalShare * 450.0);  // H100 SXM: NVLink4, 450 GB/s a direction
  EXPECT_EQ(s.m.classExpectedFrom[static_cast<std::size_t>(core::LinkClass::kNvswitch)], "H100 SXM");
  EXPECT_TRUE(serious(analyze(s.m, s.topology, kDefaults)).empty());
  // the whole node at 150 GB/s: the population looks uniform, the spec says otherwise
  const GpuNode slow = gpuNode(4, kNv18, "FULL_NVSWITCH", "yes", [](int, int) { return 150.0; });
  const auto found = ofKind(analyze(slow.m, slow.topology, kDefaults), "intra_node");
  ASSERT_EQ(found.size(), 1u) << describe(analyze(slow.m, slow.topology, kDefaults));
  EXPECT_NEAR(found[0].ratio, 150.0 / 360.0, 1e-6);
  // unknown models: the measured population is the baseline
  const GpuNode unknown = gpuNode(4, kNv18, "FULL_NVSWITCH", "yes", [](int, int) { return 150.0; }, "Mystery GPU");
  EXPECT_TRUE(unknown.m.classExpectedFrom[static_cast<std::size_t>(core::LinkClass::kNvswitch)].empty());
  EXPECT_TRUE(serious(analyze(unknown.m, unknown.topology, kDefaults)).empty());
}

TEST(ClaimedVsMeasured, AnNvLinkPairAtPcieSpeedIsNamed) {
  const GpuNode n = gpuNode(8, kNv18, "FULL_NVSWITCH", "yes", [](int a, int b) {
    return (a == 0 && b == 4) || (a == 4 && b == 0) ? 24.0 : 380.0;
  });
  const auto found = ofKind(analyze(n.m, n.topology, kDefaults), "claimed_vs_measured");
  ASSERT_EQ(found.size(), 1u) << describe(analyze(n.m, n.topology, kDefaults));
  EXPECT_EQ(found[0].subject, "gpu01 GPU0-GPU4");
  EXPECT_EQ(found[0].severity, "error");
  EXPECT_NE(found[0].message.find("GPU0-GPU4 reported NV18 but measured 24.00 GB/s"), std::string::npos)
      << found[0].message;
}

TEST(ClaimedVsMeasured, AnNvSwitchNodeThatBehavesLikeBridgedPairs) {
  const GpuNode n = gpuNode(8, kNv18, "FULL_NVSWITCH", "yes",
                            [](int a, int b) { return (a ^ b) == 1 ? 100.0 : 70.0; });
  const auto found = ofKind(analyze(n.m, n.topology, kDefaults), "claimed_vs_measured");
  bool bridged = false;
  for (const auto& f : found) bridged = bridged || f.message.find("one fast partner") != std::string::npos;
  EXPECT_FALSE(bridged) << "70 vs 100 GB/s is not one fast partner";
  const GpuNode pairs = gpuNode(8, kNv18, "FULL_NVSWITCH", "yes",
                                [](int a, int b) { return (a ^ b) == 1 ? 100.0 : 20.0; });
  const auto all = analyze(pairs.m, pairs.topology, kDefaults);
  bridged = false;
  for (const auto& f : ofKind(all, "claimed_vs_measured")) {
    bridged = bridged || f.message.find("behaves like NVLink-bridged pairs") != std::string::npos;
  }
  EXPECT_TRUE(bridged) << describe(all);
}

TEST(ClaimedVsMeasured, ClassesOtherThanNvSwitchAreSaidPlainly) {
  const GpuNode n = gpuNode(4, [](int a, int b) { return (a ^ b) == 1 ? "NV4" : "SYS"; }, "NVLINK_PAIRS", "no",
                            [](int a, int b) { return (a ^ b) == 1 ? 50.0 : 10.0; }, "NVIDIA RTX A6000");
  const auto found = ofKind(analyze(n.m, n.topology, kDefaults), "topology");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].severity, "warning");
  EXPECT_NE(found[0].message.find("gpu01 is NVLINK_PAIRS: NVLink only within pairs"), std::string::npos)
      << found[0].message;
}

}  // namespace
}  // namespace fabricmap::orchestrator
