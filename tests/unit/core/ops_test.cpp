// The per-op table against hand-computed nccl-tests figures and an independent reference of what
// each collective does.
#include <gtest/gtest.h>

#include <vector>

#include "core/ops.h"

namespace fabricmap::core {
namespace {

TEST(Ops, BusBandwidthFactorsMatchNcclTests) {
  // shared/REFERENCE.md: all_reduce 2(n-1)/n; reduce_scatter, all_gather, alltoall (n-1)/n;
  // broadcast, reduce, sendrecv 1.
  struct Case {
    Op op;
    int n;
    double factor;
  };
  const Case cases[] = {
      {Op::kAllReduce, 2, 1.0},      {Op::kAllReduce, 4, 1.5},       {Op::kAllReduce, 8, 1.75},
      {Op::kAllReduce, 3, 4.0 / 3},  {Op::kAllGather, 2, 0.5},       {Op::kAllGather, 8, 0.875},
      {Op::kReduceScatter, 4, 0.75}, {Op::kAllToAll, 8, 0.875},      {Op::kAllToAll, 3, 2.0 / 3},
      {Op::kBroadcast, 8, 1.0},      {Op::kReduce, 8, 1.0},          {Op::kSendRecv, 5, 1.0},
  };
  for (const Case& c : cases) {
    EXPECT_DOUBLE_EQ(traits(c.op).busbwFactor(c.n), c.factor) << traits(c.op).name << " n=" << c.n;
  }
}

TEST(Ops, AlgbwAndBusbwFromTime) {
  // 1 GiB all_reduce in 10 ms on 8 ranks: algbw 107.374 GB/s, busbw x1.75
  const std::uint64_t bytes = 1ull << 30;
  EXPECT_NEAR(algbwGBs(bytes, 0.01), 107.3741824, 1e-9);
  EXPECT_NEAR(busbwGBs(Op::kAllReduce, bytes, 0.01, 8), 107.3741824 * 1.75, 1e-9);
  EXPECT_EQ(algbwGBs(bytes, 0.0), 0.0);
}

TEST(Ops, ShapeCountsBytesAsNcclTests) {
  // all_reduce: count = size / typesize, everything counted
  OpShape s = shapeOf(Op::kAllReduce, 1024, 4, 4);
  EXPECT_EQ(s.count, 256u);
  EXPECT_EQ(s.bytes, 1024u);
  EXPECT_EQ(s.inputElems, 256u);
  EXPECT_EQ(s.outputElems, 256u);
  // all_gather on 3 ranks: 1024 B = 256 floats -> 85 per rank, 255 counted (rounded down)
  s = shapeOf(Op::kAllGather, 1024, 4, 3);
  EXPECT_EQ(s.block, 85u);
  EXPECT_EQ(s.inputElems, 85u);
  EXPECT_EQ(s.outputElems, 255u);
  EXPECT_EQ(s.bytes, 1020u);
  // reduce_scatter: input n blocks, output one
  s = shapeOf(Op::kReduceScatter, 4096, 8, 4);
  EXPECT_EQ(s.block, 128u);
  EXPECT_EQ(s.inputElems, 512u);
  EXPECT_EQ(s.outputElems, 128u);
  // alltoall: both n blocks
  s = shapeOf(Op::kAllToAll, 64, 4, 8);
  EXPECT_EQ(s.block, 2u);
  EXPECT_EQ(s.inputElems, 16u);
  EXPECT_EQ(s.outputElems, 16u);
  // too small for the group: block 0
  EXPECT_EQ(shapeOf(Op::kAllGather, 8, 4, 4).block, 0u);
}

TEST(Ops, ParsesNamesAndNcclTestsBinaries) {
  for (const auto& t : allOps()) EXPECT_EQ(parseOp(t.name), t.op);
  EXPECT_EQ(parseOp("all_reduce_perf"), Op::kAllReduce);
  EXPECT_EQ(parseOp("sendrecv_perf"), Op::kSendRecv);
  EXPECT_EQ(parseOp("allgather"), Op::kAllGather);
  EXPECT_FALSE(parseOp("bogus").has_value());
  EXPECT_FALSE(parseOp("").has_value());
}

TEST(Ops, TableRowsAreInEnumOrder) {
  for (std::size_t i = 0; i < allOps().size(); ++i) {
    EXPECT_EQ(static_cast<std::size_t>(allOps()[i].op), i);
  }
}

// What each collective does, written directly from its definition, independent of the table:
// outputs of every rank from the inputs of every rank (sum as the reduction).
std::vector<std::vector<double>> reference(Op op, const std::vector<std::vector<double>>& in,
                                           std::uint64_t block, int root) {
  const int n = static_cast<int>(in.size());
  const auto b = static_cast<std::size_t>(block);
  std::vector<std::vector<double>> out(in.size());
  for (int r = 0; r < n; ++r) {
    auto& o = out[static_cast<std::size_t>(r)];
    switch (op) {
      case Op::kAllReduce:
      case Op::kReduce:
        o.assign(b, 0.0);
        for (const auto& x : in) {
          for (std::size_t j = 0; j < b; ++j) o[j] += x[j];
        }
        break;
      case Op::kAllGather:
        for (const auto& x : in) o.insert(o.end(), x.begin(), x.begin() + static_cast<long>(b));
        break;
      case Op::kReduceScatter:
        o.assign(b, 0.0);
        for (const auto& x : in) {
          for (std::size_t j = 0; j < b; ++j) o[j] += x[static_cast<std::size_t>(r) * b + j];
        }
        break;
      case Op::kBroadcast:
        o = in[static_cast<std::size_t>(root)];
        break;
      case Op::kAllToAll:
        for (const auto& x : in) {
          const auto first = x.begin() + static_cast<long>(static_cast<std::size_t>(r) * b);
          o.insert(o.end(), first, first + static_cast<long>(b));
        }
        break;
      case Op::kSendRecv:
        o = in[static_cast<std::size_t>((r - 1 + n) % n)];
        break;
    }
  }
  return out;
}

TEST(Ops, OutputSourcesAgreeWithReferenceSemantics) {
  for (const auto& t : allOps()) {
    for (int n : {2, 3, 5}) {
      const std::uint64_t block = 3;
      const int root = n - 1;
      std::vector<std::vector<double>> in(static_cast<std::size_t>(n));
      for (int r = 0; r < n; ++r) {
        for (std::uint64_t i = 0; i < t.inputElems(block, n); ++i) {
          in[static_cast<std::size_t>(r)].push_back(1000.0 * r + static_cast<double>(i));
        }
      }
      const auto expected = reference(t.op, in, block, root);
      for (int r = 0; r < n; ++r) {
        if (!t.hasOutput(r, root)) {
          EXPECT_EQ(t.op, Op::kReduce);
          continue;
        }
        const auto& want = expected[static_cast<std::size_t>(r)];
        ASSERT_EQ(want.size(), t.outputElems(block, n)) << t.name;
        for (std::uint64_t j = 0; j < want.size(); ++j) {
          const OutputSource src = sourceOf(t.source, r, n, root, block, j);
          double got = 0;
          if (src.reduced) {
            for (const auto& x : in) got += x[src.index];
          } else {
            got = in[static_cast<std::size_t>(src.rank)][src.index];
          }
          EXPECT_EQ(got, want[j]) << t.name << " n=" << n << " rank=" << r << " j=" << j;
        }
      }
    }
  }
}

}  // namespace
}  // namespace fabricmap::core
