// below_line_rate: a node's measured node pairs against what its NICs carry (the inventory's
// active RDMA ports, or the declared --line-rate), named even when every node is equally slow.
#include <gtest/gtest.h>

#include <fmt/format.h>

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

// Three nodes of two ranks, each rank on its own 400G NIC (mlx5_0, mlx5_1): the inter scope's two
// rails, all_reduce at 128 MiB-1 GiB with each rail's busbw as given.
struct Rails {
  core::Topology topology;
  std::vector<core::CollectiveRecord> rows;
};

Rails rails(double rail0, double rail1) {
  Rails r{fabric(3, 2).topology, {}};
  for (auto& rank : r.topology.ranks) rank.nic = fmt::format("mlx5_{}", rank.localRank);
  for (int x = 0; x < 3; ++x) {
    for (int d = 0; d < 2; ++d) {
      r.topology.inventory.nics.push_back({x, fmt::format("mlx5_{}", d), 1, "rdma", "ACTIVE", "LinkUp", 400, 4, "NDR",
                                           "IB", "", "", 0});
    }
  }
  for (const std::uint64_t bytes : {128ull << 20, 256ull << 20, 512ull << 20, 1ull << 30}) {
    for (int g = 0; g < 2; ++g) {
      core::CollectiveRecord row;
      row.scope = "inter";
      row.op = "all_reduce";
      row.group = g;
      row.ranks = g == 0 ? "0,2,4" : "1,3,5";
      row.nranks = 3;
      row.bytes = bytes;
      row.busbwMedian = row.busbw = g == 0 ? rail0 : rail1;
      r.rows.push_back(row);
    }
  }
  return r;
}

TEST(BelowLineRate, ARailsInterAllReduceAgainstItsNics) {
  const Rails slow = rails(46.0, 18.0);  // rail 1 at 0.36x of 50 GB/s: under half the bar
  const auto found = railLineRateFindings(slow.rows, slow.topology, kDefaults);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].kind, core::FindingKind::kBelowLineRate);
  EXPECT_EQ(found[0].subject, "rail 1 (ranks 1,3,5)");
  EXPECT_EQ(found[0].severity, core::Severity::kError);
  EXPECT_DOUBLE_EQ(found[0].expected, 50.0);
  EXPECT_NEAR(found[0].ratio, 0.36, 1e-9);
  EXPECT_EQ(found[0].nodeA, -1);
  EXPECT_NE(found[0].message.find("busbw 18.00 GB/s at 256 MiB-1 GiB is 0.36x of the 50.00 GB/s its NICs carry per "
                                  "rail (rank 1 on mlx5_1: its NIC's active ports"),
            std::string::npos)
      << found[0].message;
  EXPECT_TRUE(railLineRateFindings(rails(46.0, 41.0).rows, slow.topology, kDefaults).empty());  // 0.82x
  // two ranks of a node on one NIC share it: 25 GB/s each, and 18 is 0.72x of that
  Rails shared = rails(18.0, 18.0);
  for (auto& rank : shared.topology.ranks) rank.nic = "mlx5_0";
  const auto halves = railLineRateFindings(shared.rows, shared.topology, kDefaults);
  ASSERT_EQ(halves.size(), 2u);
  EXPECT_DOUBLE_EQ(halves[0].expected, 25.0);
  EXPECT_EQ(halves[0].severity, core::Severity::kWarning);
}

TEST(BelowLineRate, ARailsDeclaredOrUnknownLineRate) {
  Rails r = rails(18.0, 18.0);
  AnalysisConfig c = kDefaults;
  c.lineRateGBps = 40;  // per node, shared by its two ranks: 20 per rail, 18 is 0.9x
  EXPECT_TRUE(railLineRateFindings(r.rows, r.topology, c).empty());
  c.lineRateGBps = 60;
  const auto declared = railLineRateFindings(r.rows, r.topology, c);
  ASSERT_EQ(declared.size(), 2u);
  EXPECT_DOUBLE_EQ(declared[0].expected, 30.0);
  EXPECT_NE(declared[0].message.find("declared (--line-rate), shared by its node's ranks"), std::string::npos)
      << declared[0].message;
  // without NICs in the inventory or a declared rate: nothing known, nothing judged
  r.topology.inventory = {};
  EXPECT_TRUE(railLineRateFindings(r.rows, r.topology, kDefaults).empty());
  // an unknown NIC name falls back to the node's active ports shared by its ranks
  Rails unnamed = rails(18.0, 18.0);
  for (auto& rank : unnamed.topology.ranks) rank.nic.clear();
  const auto byNode = railLineRateFindings(unnamed.rows, unnamed.topology, kDefaults);
  ASSERT_EQ(byNode.size(), 2u);
  EXPECT_DOUBLE_EQ(byNode[0].expected, 50.0);  // 2 x 400 Gb/s / 2 ranks
  // no inter all_reduce rows (another scope, another op): nothing
  for (auto& row : unnamed.rows) row.scope = "world";
  EXPECT_TRUE(railLineRateFindings(unnamed.rows, unnamed.topology, kDefaults).empty());
}

}  // namespace
}  // namespace fabricmap::orchestrator
