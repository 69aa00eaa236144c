// Test patterns: every expected value equals the reduction of the inputs, every partial result
// stays exactly representable, and the poison value is never a correct output.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "core/dtype.h"
#include "core/pattern_for.h"

namespace fabricmap::core {
namespace {

double fold(RedOp op, double a, double b) {
  switch (op) {
    case RedOp::kSum: return a + b;
    case RedOp::kProd: return a * b;
    case RedOp::kMin: return std::min(a, b);
    case RedOp::kMax: return std::max(a, b);
  }
  return 0;
}

TEST(Pattern, ReductionsAreExactForEveryTypeAndGroupSize) {
  for (const auto& dt : allDTypes()) {
    for (RedOp redop : allRedOps()) {
      for (int n : {1, 2, 3, 4, 7, 8, 31, 64, 300, 1000}) {
        for (std::uint32_t seed : {0u, 5u, 12345u}) {
          const Pattern p = patternFor(Op::kAllReduce, redop, dt.type, n, seed);
          for (std::uint64_t idx = 0; idx < 97; ++idx) {
            double acc = p.input(0, idx);
            double biggest = std::fabs(acc);
            for (int q = 1; q < n; ++q) {
              const double v = p.input(q, idx);
              ASSERT_EQ(v, std::trunc(v));  // integers only
              if (!dt.isSigned) {
                ASSERT_GE(v, 0.0) << dt.name;
              }
              acc = fold(redop, acc, v);
              biggest = std::max(biggest, std::fabs(acc));
            }
            ASSERT_LE(biggest, dt.exactLimit) << dt.name << " " << name(redop) << " n=" << n;
            ASSERT_EQ(p.reduced(idx), acc)
                << dt.name << " " << name(redop) << " n=" << n << " idx=" << idx;
            ASSERT_NE(p.poison(), acc) << dt.name << " " << name(redop);
          }
        }
      }
    }
  }
}

// The check must tell the reduction operators apart: an op mapped to the wrong MPI/NCCL operator
// has to fail on most elements.
TEST(Pattern, AWrongReductionOperatorFailsTheCheck) {
  for (const auto& dt : allDTypes()) {
    for (RedOp redop : allRedOps()) {
      for (RedOp other : allRedOps()) {
        if (other == redop) continue;
        for (int n : {2, 3, 4, 8, 300}) {
          const Pattern p = patternFor(Op::kAllReduce, redop, dt.type, n, 1);
          int differ = 0;
          const int total = 300;
          for (std::uint64_t idx = 0; idx < total; ++idx) {
            double acc = p.input(0, idx);
            for (int q = 1; q < n; ++q) acc = fold(other, acc, p.input(q, idx));
            differ += acc != p.reduced(idx);
          }
          EXPECT_GT(differ, total / 2) << dt.name << " " << name(redop) << " computed as "
                                       << name(other) << " on " << n << " ranks";
        }
      }
    }
  }
}

TEST(Pattern, MovedValuesFitEveryTypeAndDependOnRankAndSeed) {
  for (const auto& dt : allDTypes()) {
    const Pattern p = patternFor(Op::kAllGather, RedOp::kSum, dt.type, 8, 3);
    const Pattern other = patternFor(Op::kAllGather, RedOp::kSum, dt.type, 8, 4);
    int differFromRank0 = 0;
    int differFromSeed = 0;
    for (std::uint64_t i = 0; i < 1000; ++i) {
      const double v = p.input(1, i);
      ASSERT_LE(std::fabs(v), 96.0);
      if (!dt.isSigned) {
        ASSERT_GE(v, 0.0);
      }
      ASSERT_NE(v, p.poison());
      differFromRank0 += v != p.input(0, i);
      differFromSeed += v != other.input(1, i);
    }
    // a block from the wrong rank, or a stale buffer from another step, fails the check
    EXPECT_GT(differFromRank0, 950) << dt.name;
    EXPECT_GT(differFromSeed, 950) << dt.name;
  }
}

TEST(Pattern, SumFallsBackToOneContributorBeyondTheExactLimit) {
  // bfloat16 holds integers exactly up to 256: 300 ranks cannot each add 1
  const Pattern p = patternFor(Op::kAllReduce, RedOp::kSum, DType::kBfloat16, 300, 0);
  EXPECT_EQ(p.family, PatternFamily::kSumSparse);
  const Pattern f = patternFor(Op::kAllReduce, RedOp::kSum, DType::kFloat, 300, 0);
  EXPECT_EQ(f.family, PatternFamily::kSum);
  EXPECT_EQ(f.k, 16);
}

}  // namespace
}  // namespace fabricmap::core
