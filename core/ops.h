// The per-op table: everything fabricmap knows about a collective, defined once and shared by
// every backend, the planner, the analysis and the nccl-tests log importer.
// Byte counts and bus-bandwidth factors follow nccl-tests exactly (shared/REFERENCE.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "core/output_source.h"

namespace fabricmap::core {

enum class Op : std::uint8_t {
  kAllReduce, kAllGather, kReduceScatter, kBroadcast, kReduce, kAllToAll, kSendRecv
};

struct OpTraits {
  Op op;
  std::string_view name;  // nccl-tests spelling without "_perf": all_reduce, sendrecv, ...
  bool reduces;           // takes a reduction operator
  bool rooted;            // has a root rank (broadcast, reduce)
  bool splitsAcrossRanks;  // the counted size is n blocks, one per rank (all_gather, ...)
  // busbw = algbw * busbwFactor(n)
  double (*busbwFactor)(int nranks);
  // Element counts of the input and output buffers for a block of `block` elements.
  std::uint64_t (*inputElems)(std::uint64_t block, int nranks);
  std::uint64_t (*outputElems)(std::uint64_t block, int nranks);
  // Whether `rank` has a defined output (reduce: only the root).
  bool (*hasOutput)(int rank, int root);
  // Where output element j on a rank comes from (core/output_source.h: sourceOf).
  SourceRule source;
};

const OpTraits& traits(Op op);
std::span<const OpTraits> allOps();
std::optional<Op> parseOp(std::string_view name);  // also accepts nccl-tests' "*_perf" names

// How a requested message size maps onto one op on n ranks. As nccl-tests, the per-rank block of
// a splitting op is rounded down, so `bytes` may be slightly below the requested size.
struct OpShape {
  std::uint64_t block;        // elements per block (per rank for splitting ops)
  std::uint64_t inputElems;   // elements in each rank's input buffer
  std::uint64_t outputElems;  // elements in each rank's output buffer
  std::uint64_t count;        // elements counted (bytes / type size), the nccl-tests "count"
  std::uint64_t bytes;        // bytes counted: the S of algbw = S / t
};

OpShape shapeOf(Op op, std::uint64_t requestedBytes, std::size_t typeSize, int nranks);

// algbw in GB/s (1e9 B/s) for `bytes` moved in `seconds`; busbw from the op's factor.
double algbwGBs(std::uint64_t bytes, double seconds);
double busbwGBs(Op op, std::uint64_t bytes, double seconds, int nranks);

}  // namespace fabricmap::core
