// The simulated fat tree (bench/sim/fat_tree): its routes are D-mod-K by destination, its --fabric
// lines name the cables the routes use, its faults scale those cables, and a bad shape is one
// message naming the file and line.
#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <string>

#include "bench/sim/fat_tree.h"

namespace fabricmap::sim {
namespace {

std::vector<std::string> names(const FatTree& t, const std::vector<int>& route) {
  std::vector<std::string> out;
  for (int i : route) out.push_back(t.links[static_cast<std::size_t>(i)].name);
  return out;
}

TEST(SimFatTree, RoutesUpToTheDestinationsSpine) {
  const FatTree t = buildFatTree(parseShape("leaves 4\nhosts-per-leaf 4\nspines 2\n", "s"));
  ASSERT_EQ(t.hosts.size(), 16u);
  // n0001 (leaf00) to n0013 (leaf03): spine 13 mod 2 = 1
  EXPECT_EQ(names(t, t.route(1, 13)), (std::vector<std::string>{"n0001-up", "leaf00-spine01-up", "leaf03-spine01-down",
                                                                 "n0013-down"}));
  // inside a leaf: the two host cables only
  EXPECT_EQ(names(t, t.route(4, 5)), (std::vector<std::string>{"n0004-up", "n0005-down"}));
  const auto& lines = t.fabricLines;
  EXPECT_NE(std::find(lines.begin(), lines.end(), "n0013 -> leaf03:2"), lines.end());
  EXPECT_NE(std::find(lines.begin(), lines.end(), "leaf03:6 -> spine01:4"), lines.end());
}

TEST(SimFatTree, ThreeLevelsCrossACore) {
  const FatTree t = buildFatTree(parseShape("levels 3\npods 2\nleaves 2\nhosts-per-leaf 2\nspines 2\ncores 4\n", "s"));
  // n0000 (pod 0) to n0007 (pod 1): spine 7 mod 2 = 1, its core (7 / 2) mod 2 = 1 of its two: core03
  EXPECT_EQ(names(t, t.route(0, 7)),
            (std::vector<std::string>{"n0000-up", "p0leaf00-p0spine01-up", "p0spine01-core03-up",
                                      "p1spine01-core03-down", "p1leaf01-p1spine01-down", "n0007-down"}));
}

TEST(SimFatTree, FaultsScaleTheirCables) {
  const FatTree t = buildFatTree(parseShape(
      "leaves 2\nhosts-per-leaf 2\nspines 2\nfault cable leaf01 spine00 0.25 up\nfault host n0000 0.5\n"
      "fault spine spine01 0.1\n",
      "s"));
  const auto rate = [&](const std::string& link) { return t.links[static_cast<std::size_t>(t.linkIndex.at(link))].gbps; };
  EXPECT_DOUBLE_EQ(rate("leaf01-spine00-up"), 100.0);
  EXPECT_DOUBLE_EQ(rate("leaf01-spine00-down"), 400.0);
  EXPECT_DOUBLE_EQ(rate("n0000-up"), 200.0);
  EXPECT_DOUBLE_EQ(rate("n0000-down"), 200.0);
  EXPECT_DOUBLE_EQ(rate("leaf00-spine01-down"), 40.0);
  EXPECT_DOUBLE_EQ(rate("n0001-up"), 400.0);
}

TEST(SimFatTree, ABadShapeIsOneMessageNamingItsLine) {
  const auto message = [](const std::string& text) {
    try {
      buildFatTree(parseShape(text, "my.shape"));
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message("leaves 4\nspine 2\n"), "my.shape:2: unknown setting 'spine'");
  EXPECT_EQ(message("leaves 2.5\n"), "my.shape:1: leaves is a whole number up to 65536");
  EXPECT_EQ(message("leaves 1e30\n"), "my.shape:1: leaves is a whole number up to 65536");
  EXPECT_EQ(message("leaves 512\nhosts-per-leaf 512\n"),
            "my.shape: at most 65536 hosts, 4096 switches a level and 1024 ranks a host");
  EXPECT_EQ(message("fault host n0000 0\n"), "fault: a share of a rate is above 0 and at most 1, not 0");
  EXPECT_EQ(message("fault cable leaf00 spine09 0.5\n"), "no link leaf00-spine09-up");
  EXPECT_EQ(message("nic-gbps 0\n"), "my.shape:1: nic-gbps is above 0 (and at most 1e6)");
}

}  // namespace
}  // namespace fabricmap::sim
