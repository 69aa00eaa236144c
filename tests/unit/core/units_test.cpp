// Sizes, sweeps, rank ranges, dtype names and statistics.
#include <gtest/gtest.h>

#include <cmath>

#include "core/dtype.h"
#include "core/error.h"
#include "core/stats.h"
#include "core/units.h"

namespace fabricmap::core {
namespace {

TEST(Units, ParsesPowersOf1024) {
  EXPECT_EQ(parseBytes("8", "x"), 8u);
  EXPECT_EQ(parseBytes("1K", "x"), 1024u);
  EXPECT_EQ(parseBytes("32M", "x"), 32u << 20);
  EXPECT_EQ(parseBytes("1G", "x"), 1u << 30);
  EXPECT_EQ(parseBytes("2T", "x"), 2ull << 40);
  EXPECT_EQ(parseBytes("64k", "x"), 64u << 10);
  EXPECT_EQ(parseBytes("1KiB", "x"), 1024u);
  EXPECT_EQ(parseBytes("4MB", "x"), 4u << 20);
  EXPECT_EQ(parseBytes("100B", "x"), 100u);
}

TEST(Units, RejectsMalformedSizes) {
  for (const char* bad : {"", "M", "-1", "1.5M", "12X", "1KK", "1 M", "99999999999999999999",
                          "20000000000T"}) {
    EXPECT_THROW(parseBytes(bad, "-b"), UsageError) << bad;
  }
  try {
    parseBytes("12X", "-b/--min-bytes");
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("-b/--min-bytes"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("12X"), std::string::npos);
  }
}

TEST(Units, FormatsSizes) {
  EXPECT_EQ(formatBytes(8), "8 B");
  EXPECT_EQ(formatBytes(1000), "1000 B");
  EXPECT_EQ(formatBytes(1024), "1 KiB");
  EXPECT_EQ(formatBytes(1536), "1.5 KiB");
  EXPECT_EQ(formatBytes(32u << 20), "32 MiB");
  EXPECT_EQ(formatBytes(3ull << 30), "3 GiB");
  EXPECT_EQ(formatBytes(0), "0 B");
}

TEST(Units, SweepsByFactorOrStep) {
  EXPECT_EQ(sweepSizes(8, 128, 2, 0), (std::vector<std::uint64_t>{8, 16, 32, 64, 128}));
  EXPECT_EQ(sweepSizes(8, 100, 4, 0), (std::vector<std::uint64_t>{8, 32}));
  EXPECT_EQ(sweepSizes(1024, 1024, 2, 0), (std::vector<std::uint64_t>{1024}));
  EXPECT_EQ(sweepSizes(100, 400, 2, 100), (std::vector<std::uint64_t>{100, 200, 300, 400}));
  // no overflow loop at the top of the range
  EXPECT_EQ(sweepSizes(1ull << 62, ~0ull, 4, 0).size(), 1u);
}

TEST(Units, FormatsRankRanges) {
  const std::vector<int> a{0, 1, 2, 3};
  const std::vector<int> b{0, 2, 3, 4, 7};
  EXPECT_EQ(formatRanks(a), "0-3");
  EXPECT_EQ(formatRanks(b), "0,2-4,7");
  EXPECT_EQ(formatRanks(std::vector<int>{}), "");
  const std::vector<int> edge{2147483646, 2147483647};  // found by fuzzing: no rank after INT_MAX
  EXPECT_EQ(formatRanks(edge), "2147483646-2147483647");
  // the inverse, also the kernel's cpulist
  EXPECT_EQ(parseRanks("0,2-4,7"), (std::vector<int>{0, 2, 3, 4, 7}));
  EXPECT_EQ(parseRanks("0-3\n"), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(parseRanks(""), std::vector<int>{});
  for (const char* bad : {"3-1", "a", "1,", ",1", "1--2", "-1", "0-70000", "1 2"}) EXPECT_FALSE(parseRanks(bad)) << bad;
  EXPECT_FALSE(parseRanks("0-10,11-20", 15));  // more values than allowed
}

TEST(DTypes, TableAndNames) {
  for (std::size_t i = 0; i < allDTypes().size(); ++i) {
    EXPECT_EQ(static_cast<std::size_t>(allDTypes()[i].type), i);
    EXPECT_EQ(parseDType(allDTypes()[i].name), allDTypes()[i].type);
  }
  EXPECT_EQ(traits(DType::kFloat).size, 4u);
  EXPECT_EQ(traits(DType::kBfloat16).size, 2u);
  EXPECT_EQ(traits(DType::kUint64).size, 8u);
  EXPECT_EQ(parseDType("fp16"), DType::kHalf);
  EXPECT_EQ(parseDType("BF16"), DType::kBfloat16);
  EXPECT_EQ(parseDType("f64"), DType::kDouble);
  EXPECT_FALSE(parseDType("float128"));
  EXPECT_EQ(parseRedOp("max"), RedOp::kMax);
  EXPECT_FALSE(parseRedOp("avg"));
}

TEST(Stats, SummarizesWithInterpolatedQuantiles) {
  const TimeStats s = summarize({5, 1, 4, 2, 3});
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 5);
  EXPECT_DOUBLE_EQ(s.mean, 3);
  EXPECT_DOUBLE_EQ(s.median, 3);
  EXPECT_DOUBLE_EQ(s.p95, 4.8);  // 4 + 0.8 * (5 - 4)
  EXPECT_NEAR(s.cv, std::sqrt(2.0) / 3, 1e-12);
  const TimeStats even = summarize({1, 2, 3, 10});
  EXPECT_DOUBLE_EQ(even.median, 2.5);
  const TimeStats empty = summarize({});
  EXPECT_EQ(empty.mean, 0);
}

TEST(Stats, MedianOfTheFiniteValues) {
  EXPECT_DOUBLE_EQ(median({7, 1, 5}), 5);
  EXPECT_DOUBLE_EQ(median({10, 1, 3, 2}), 2.5);  // the middle two's mean
  EXPECT_DOUBLE_EQ(median({4, std::nan(""), 1, INFINITY, 2}), 2);
  EXPECT_TRUE(std::isnan(median({})));
  EXPECT_TRUE(std::isnan(median({std::nan("")})));
  std::vector<double> many;
  for (int i = 0; i < 1001; ++i) many.push_back((i * 7919) % 1001);  // 0..1000 shuffled
  EXPECT_DOUBLE_EQ(median(many), 500);
}

}  // namespace
}  // namespace fabricmap::core
