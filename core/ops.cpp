// The per-op table (see ops.h).
#include "core/ops.h"

#include <array>
#include <string>

namespace fabricmap::core {
namespace {

using U64 = std::uint64_t;

double ringFactor(int n) { return 2.0 * (n - 1) / n; }
double gatherFactor(int n) { return static_cast<double>(n - 1) / n; }
double unitFactor(int) { return 1.0; }

U64 sameAsBlock(U64 block, int) { return block; }
U64 timesRanks(U64 block, int n) { return block * static_cast<U64>(n); }

bool everyRank(int, int) { return true; }
bool onlyRoot(int rank, int root) { return rank == root; }

// The table's rows; SourceRule (core/output_source.h) says where each output element comes from.
constexpr std::array<OpTraits, 7> kOps{{
    {Op::kAllReduce, "all_reduce", true, false, false, ringFactor, sameAsBlock, sameAsBlock,
     everyRank, SourceRule::kReduceSameIndex},
    {Op::kAllGather, "all_gather", false, false, true, gatherFactor, sameAsBlock, timesRanks,
     everyRank, SourceRule::kGatherBlocks},
    {Op::kReduceScatter, "reduce_scatter", true, false, true, gatherFactor, timesRanks,
     sameAsBlock, everyRank, SourceRule::kReduceRankBlock},
    {Op::kBroadcast, "broadcast", false, true, false, unitFactor, sameAsBlock, sameAsBlock,
     everyRank, SourceRule::kFromRoot},
    {Op::kReduce, "reduce", true, true, false, unitFactor, sameAsBlock, sameAsBlock, onlyRoot,
     SourceRule::kReduceSameIndex},
    {Op::kAllToAll, "alltoall", false, false, true, gatherFactor, timesRanks, timesRanks,
     everyRank, SourceRule::kTransposeBlocks},
    {Op::kSendRecv, "sendrecv", false, false, false, unitFactor, sameAsBlock, sameAsBlock,
     everyRank, SourceRule::kFromPreviousRank},
}};

}  // namespace

const OpTraits& traits(Op op) { return kOps[static_cast<std::size_t>(op)]; }

std::span<const OpTraits> allOps() { return kOps; }

std::optional<Op> parseOp(std::string_view name) {
  if (name.ends_with("_perf")) name.remove_suffix(5);
  for (const auto& t : kOps) {
    if (t.name == name) return t.op;
  }
  // nccl-tests binaries and common spellings
  if (name == "allreduce") return Op::kAllReduce;
  if (name == "allgather") return Op::kAllGather;
  if (name == "reducescatter") return Op::kReduceScatter;
  if (name == "all_to_all") return Op::kAllToAll;
  if (name == "send_recv") return Op::kSendRecv;
  return std::nullopt;
}

OpShape shapeOf(Op op, std::uint64_t requestedBytes, std::size_t typeSize, int nranks) {
  const OpTraits& t = traits(op);
  const U64 elems = requestedBytes / typeSize;
  const U64 n = static_cast<U64>(nranks);
  OpShape s{};
  s.block = t.splitsAcrossRanks ? elems / n : elems;
  s.inputElems = t.inputElems(s.block, nranks);
  s.outputElems = t.outputElems(s.block, nranks);
  s.count = t.splitsAcrossRanks ? s.block * n : s.block;
  s.bytes = s.count * typeSize;
  return s;
}

double algbwGBs(std::uint64_t bytes, double seconds) {
  return seconds > 0.0 ? static_cast<double>(bytes) / seconds / 1.0e9 : 0.0;
}

double busbwGBs(Op op, std::uint64_t bytes, double seconds, int nranks) {
  return algbwGBs(bytes, seconds) * traits(op).busbwFactor(nranks);
}

}  // namespace fabricmap::core
