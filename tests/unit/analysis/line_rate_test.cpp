// below_line_rate: a node's measured node pairs against what its NICs carry (the inventory's
// active RDMA ports, or the declared --line-rate), named even when every node is equally slow.
#include <gtest/gtest.h>

#include "tests/unit/analysis/analysis_support.h"

namespace fabricmap::orchestrator {
namespace {

std::vector<core::Finding> belowLineRate(const Fabric& f, const AnalysisConfig& c = kDefaults) {
  return ofKind(analyze(f.m, f.topology, c, {"below_line_rate"}), "below_line_rate");
}

TEST(BelowLineRate, EveryNodeEquallySlowIsNamed) {
  const auto found = belowLineRate(lineRateFabric(20.0f));  // 20 of 50 GB/s
  ASSERT_EQ(found.size(), 4u);
  for (int x = 0; x < 4; ++x) {
    EXPECT_EQ(found[static_cast<std::size_t>(x)].nodeA, x);
    EXPECT_NEAR(found[static_cast<std::size_t>(x)].ratio, 0.4, 1e-6);
    EXPECT_DOUBLE_EQ(found[static_cast<std::size_t>(x)].expected, 50.0);
    EXPECT_DOUBLE_EQ(found[static_cast<std::size_t>(x)].confidence, 1.0);
    EXPECT_EQ(found[static_cast<std::size_t>(x)].severity, core::Severity::kWarning);
  }
  EXPECT_NE(found[0].message.find("of the 50.00 GB/s its 1 active RDMA port(s) carry, below 0.80"), std::string::npos)
      << found[0].message;
  // under half the bar: error
  EXPECT_EQ(belowLineRate(lineRateFabric(15.0f))[0].severity, core::Severity::kError);
}

TEST(BelowLineRate, AtTheLineRateNothing) {
  EXPECT_TRUE(belowLineRate(lineRateFabric(45.0f)).empty());  // 0.9x
  EXPECT_TRUE(belowLineRate(lineRateFabric(40.0f)).empty());  // exactly the bar
}

TEST(BelowLineRate, TheDeclaredLineRateReplacesTheInventorys) {
  AnalysisConfig c = kDefaults;
  c.lineRateGBps = 25;  // 20 of 25: at the bar
  EXPECT_TRUE(belowLineRate(lineRateFabric(20.0f), c).empty());
  c.lineRateGBps = 30;
  const auto found = belowLineRate(lineRateFabric(20.0f), c);
  ASSERT_EQ(found.size(), 4u);
  EXPECT_NE(found[0].message.find("30.00 GB/s declared (--line-rate)"), std::string::npos) << found[0].message;
  c.lineRateFraction = 0.6;
  EXPECT_TRUE(belowLineRate(lineRateFabric(20.0f), c).empty());
}

// A node on a 200 Gb/s NIC: its pairs can carry 25 GB/s, and at 22 it moves 0.88 of that (the NIC
// is the limit, which nic_rate_mismatch names); the others at 45 of 50 are fine.
TEST(BelowLineRate, ThePairsSlowerEndSetsWhatItCanCarry) {
  Fabric f = lineRateFabric(45.0f, {{3, 200.0}});
  for (int x = 0; x < 3; ++x) f.m.nodeBw.at(x, 3) = f.m.nodeBw.at(3, x) = 22.0f;
  EXPECT_TRUE(belowLineRate(f).empty());
}

TEST(BelowLineRate, NothingIsJudgedWithoutAKnownLineRateOrMeasuredNodePairs) {
  Fabric unknown = lineRateFabric(20.0f);
  unknown.topology.inventory = {};  // no NIC read, none declared
  EXPECT_TRUE(belowLineRate(unknown).empty());
  Fabric derived = lineRateFabric(20.0f);
  derived.m.nodeMeasured = false;  // derived from rank pairs: with one rank per node, the node's
  EXPECT_EQ(belowLineRate(derived).size(), 4u);
  for (auto& n : derived.topology.nodes) n.ranks = 2;  // with more, one rank pair's (one NIC's)
  EXPECT_TRUE(belowLineRate(derived).empty());
}

}  // namespace
}  // namespace fabricmap::orchestrator
