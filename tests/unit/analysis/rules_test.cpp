// Each analysis rule alone on a small fabric with the fault it names: the rule names it, and no
// other rule run alone on a clean fabric names anything. Every rule in analysisRules() must have
// a case here.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <map>
#include <set>
#include <string>

#include "core/error.h"
#include "tests/unit/analysis/analysis_support.h"
#include "topologies/fabric_file.h"

namespace fabricmap::orchestrator {
namespace {

// A rule's case: the fabric it judges, the rules run (the rule, and those it adjusts), and the
// kind (and severity) it must leave.
struct RuleCase {
  core::Matrices m;
  core::Topology topology;
  std::vector<std::string_view> run;
  std::string kind;
  std::string severity;
  AnalysisConfig config = kDefaults;
};

RuleCase fromFabric(Fabric f, std::vector<std::string_view> run, std::string kind, std::string severity) {
  return {std::move(f.m), std::move(f.topology), std::move(run), std::move(kind), std::move(severity)};
}

RuleCase fromGpuNode(GpuNode n, std::vector<std::string_view> run, std::string kind, std::string severity) {
  return {std::move(n.m), std::move(n.topology), std::move(run), std::move(kind), std::move(severity)};
}

const auto kSlowNode = [](core::Matrices& m, const core::Topology&) {
  for (int x = 0; x < 3; ++x) {
    setBw(m, x, 3, 0.024f);
    setBw(m, 3, x, 0.024f);
  }
};

std::map<std::string, RuleCase> ruleCases() {
  std::map<std::string, RuleCase> cases;
  cases.emplace("node", fromFabric(fabric(4, 1, 64, kSlowNode), {"node"}, "node", "error"));
  // hosts 2 and 3 slow with everyone but each other, under one leaf of four: its uplinks
  Fabric uplink = fabric(8, 1, 64, [](core::Matrices& m, const core::Topology&) {
    for (int a = 0; a < 8; ++a) {
      for (int b = 0; b < 8; ++b) {
        if (a != b && (a / 2 == 1) != (b / 2 == 1)) setBw(m, a, b, 0.02f);
      }
    }
  });
  std::string text;
  for (int h = 0; h < 8; ++h) text += fmt::format("host{} -> leaf{}\nleaf{} -> spine{}\n", h, h / 2, h / 2, h % 2);
  uplink.topology.fabric = topologies::parseFabric(text, "fabric.txt");
  cases.emplace("switch", fromFabric(std::move(uplink), {"switch"}, "uplink", "error"));
  // leaf1's cable to spine0 slow both ways, the fabric routed by destination
  cases.emplace("cable", fromFabric(destinationRouted(4, 2, 2, 1, 0, 0.02f), {"cable"}, "uplink", "error"));
  cases.emplace("link", fromFabric(fabric(4, 1, 64, [](core::Matrices& m, const core::Topology&) { setBw(m, 0, 3, 0.02f); }),
                                   {"link"}, "link", "error"));
  cases.emplace("latency", fromFabric(fabric(4, 1, 64,
                                             [](core::Matrices& m, const core::Topology&) {
                                               for (int x = 0; x < 3; ++x) {
                                                 for (const auto& [a, b] : {std::pair{x, 3}, std::pair{3, x}}) {
                                                   m.rankLatency.at(a, b) = 200.0f;
                                                   m.rankLatencyWorst.at(a, b) = 210.0f;
                                                 }
                                               }
                                             }),
                                      {"latency"}, "node_latency", "error"));
  cases.emplace("rank", fromFabric(fabric(4, 2, 64,
                                          [](core::Matrices& m, const core::Topology& t) {
                                            for (int q = 0; q < 8; ++q) {
                                              if (t.ranks[static_cast<std::size_t>(q)].node == 2) continue;
                                              setBw(m, 5, q, 1.0f);
                                              setBw(m, q, 5, 1.0f);
                                            }
                                          }),
                                   {"rank"}, "rank", "error"));
  // the node's pairs, measured whole, slow; one of its ranks 4x slower than the other: the node
  // rule hands it to slow_rank
  Fabric slowRank = fabric(4, 2, 64, [](core::Matrices& m, const core::Topology& t) {
    for (int a = 0; a < 8; ++a) {
      for (int b = 0; b < 8; ++b) {
        if (t.ranks[static_cast<std::size_t>(a)].node != t.ranks[static_cast<std::size_t>(b)].node) {
          setBw(m, a, b, a == 5 ? 2.5f : 10.0f);
        }
      }
    }
  });
  slowRank.m.nodeMeasured = true;
  for (int x = 0; x < 4; ++x) {
    for (int y = 0; y < 4; ++y) {
      if (x != y) slowRank.m.nodeBw.at(x, y) = slowRank.m.nodeBwWorst.at(x, y) = x == 2 ? 3.0f : 20.0f;
    }
  }
  cases.emplace("slow_rank", fromFabric(std::move(slowRank), {"node", "slow_rank"}, "rank", "error"));
  cases.emplace("intra_node", fromFabric(fabric(2, 4, 64,
                                                [](core::Matrices& m, const core::Topology&) {
                                                  setBw(m, 5, 6, 20.0f);
                                                  setBw(m, 6, 5, 20.0f);
                                                }),
                                         {"intra_node"}, "intra_node", "error"));
  Fabric belowLine = lineRateFabric(45.0f);  // 0.9 of the NICs' 50 GB/s; node 3's pairs at 0.4
  for (int x = 0; x < 3; ++x) belowLine.m.nodeBw.at(x, 3) = belowLine.m.nodeBw.at(3, x) = 20.0f;
  cases.emplace("below_line_rate", fromFabric(std::move(belowLine), {"below_line_rate"}, "below_line_rate", "warning"));
  const auto nv18 = [](int, int) { return std::string("NV18"); };
  cases.emplace("claimed_vs_measured",
                fromGpuNode(gpuNode(4, nv18, "FULL_NVSWITCH", "yes", [](int a, int b) { return a * b == 0 && a + b == 3 ? 40.0 : 380.0; }),
                            {"claimed_vs_measured"}, "claimed_vs_measured", "error"));
  cases.emplace("topology", fromGpuNode(gpuNode(4, [](int a, int b) { return (a ^ b) == 1 ? "NV4" : "SYS"; },
                                                "NVLINK_PAIRS", "no", [](int, int) { return 50.0; }),
                                        {"topology"}, "topology", "warning"));
  cases.emplace("min_confidence", fromFabric(fabric(4, 1, 64, [](core::Matrices& m, const core::Topology&) { setBw(m, 0, 2, 8.8f); }),
                                             {"link", "min_confidence"}, "link", "info"));
  cases.emplace("noise", fromFabric(fabric(6, 1, 64,
                                           [](core::Matrices& m, const core::Topology&) {
                                             for (int a = 0; a < 6; ++a) {
                                               for (int b = 0; b < 6; ++b) {
                                                 if (a != b) setBw(m, a, b, static_cast<float>(10.0 * (0.5 + ((a * 5 + b * 3) % 7) / 6.0)));
                                               }
                                             }
                                           }),
                                    {"noise"}, "noise", "info"));
  cases.emplace("oversubscribed", fromFabric(fabric(1, 4, 2), {"oversubscribed"}, "oversubscribed", "info"));
  Fabric oneMachine = fabric(3, 1);
  for (auto& n : oneMachine.topology.nodes) n.bootId = "0e0ee1c2-55b8-4a5e-9c53-1d8b40b1a6f3";
  cases.emplace("shared_host", fromFabric(std::move(oneMachine), {"shared_host"}, "shared_host", "info"));
  cases.emplace("noisy", fromFabric(fabric(4, 1, 64,
                                           [](core::Matrices& m, const core::Topology&) {
                                             m.rankUnidir.at(0, 1) = 9.8f;
                                             m.rankUnidirWorst.at(0, 1) = 0.5f;
                                           }),
                                    {"noisy"}, "noisy", "info"));
  return cases;
}

TEST(AnalysisRules, EachRuleAloneNamesItsFault) {
  const auto cases = ruleCases();
  EXPECT_EQ(cases.size(), analysisRules().size()) << "a case for a rule that is not in the list";
  for (const AnalysisRule& rule : analysisRules()) {
    const auto it = cases.find(std::string(rule.name));
    ASSERT_NE(it, cases.end()) << "rule '" << rule.name << "' has no case in rules_test.cpp";
    const RuleCase& c = it->second;
    const auto found = analyze(c.m, c.topology, c.config, c.run);
    ASSERT_EQ(found.size(), 1u) << rule.name << ": " << describe(found);
    EXPECT_EQ(core::name(found[0].kind), c.kind) << rule.name << ": " << describe(found);
    EXPECT_EQ(core::name(found[0].severity), c.severity) << rule.name << ": " << describe(found);
  }
}

// Each rule's fault is its own: the other rules alone do not name it as theirs.
TEST(AnalysisRules, OnACleanFabricNoRuleNamesAnything) {
  const Fabric clean = fabric(4, 2);
  const GpuNode nvswitch = gpuNode(4, [](int, int) { return std::string("NV18"); }, "FULL_NVSWITCH", "yes",
                                   [](int, int) { return 380.0; });
  for (const AnalysisRule& rule : analysisRules()) {
    const auto fabricFindings = analyze(clean.m, clean.topology, kDefaults, {rule.name});
    EXPECT_TRUE(fabricFindings.empty()) << rule.name << ": " << describe(fabricFindings);
    const auto nodeFindings = analyze(nvswitch.m, nvswitch.topology, kDefaults, {rule.name});
    EXPECT_TRUE(nodeFindings.empty()) << rule.name << ": " << describe(nodeFindings);
  }
}

TEST(AnalysisRules, NamesAreUniqueDescribedAndRunInTheirOrder) {
  std::set<std::string_view> names;
  for (const AnalysisRule& rule : analysisRules()) {
    EXPECT_TRUE(names.insert(rule.name).second) << rule.name;
    EXPECT_FALSE(rule.description.empty()) << rule.name;
  }
  // the link rule after the node rule: the node's pairs are explained, no links are named
  const Fabric f = fabric(4, 1, 64, kSlowNode);
  EXPECT_EQ(analyze(f.m, f.topology, kDefaults, {"node", "link"}).size(), 1u);
  EXPECT_EQ(analyze(f.m, f.topology, kDefaults, {"link"}).size(), 3u);
  EXPECT_THROW(analyze(f.m, f.topology, kDefaults, {"nodes"}), core::UsageError);
}

}  // namespace
}  // namespace fabricmap::orchestrator
