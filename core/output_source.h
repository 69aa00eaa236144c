// Where each output element of a collective comes from, as a small rule per op (the per-op table,
// core/ops.h, names each op's rule). Plain inline code with no standard-library dependencies, so
// host checks and GPU verify kernels read the same rule.
#pragma once

#include <cstdint>

#include "core/host_device.h"

namespace fabricmap::core {

// One element of a rank's output: one rank's input element, or the reduction over every rank of
// the input element at `index`.
struct OutputSource {
  bool reduced;
  int rank;             // source rank when !reduced
  std::uint64_t index;  // element index in the source rank's input buffer
};

enum class SourceRule : std::uint8_t {
  kReduceSameIndex,   // out[j] = reduce_q in_q[j]                          all_reduce, reduce
  kReduceRankBlock,   // out[j] = reduce_q in_q[rank * block + j]           reduce_scatter
  kGatherBlocks,      // out[j] = in_{j / block}[j % block]                 all_gather
  kFromRoot,          // out[j] = in_root[j]                                broadcast
  kTransposeBlocks,   // out[j] = in_{j / block}[rank * block + j % block]  alltoall
  kFromPreviousRank,  // out[j] = in_{(rank - 1) mod n}[j]                  sendrecv (ring)
};

FM_HOST_DEVICE inline OutputSource sourceOf(SourceRule rule, int rank, int nranks, int root,
                                            std::uint64_t block, std::uint64_t j) {
  const auto r = static_cast<std::uint64_t>(rank);
  switch (rule) {
    case SourceRule::kReduceSameIndex:
      return {true, 0, j};
    case SourceRule::kReduceRankBlock:
      return {true, 0, r * block + j};
    case SourceRule::kGatherBlocks:
      return {false, static_cast<int>(j / block), j % block};
    case SourceRule::kFromRoot:
      return {false, root, j};
    case SourceRule::kTransposeBlocks:
      return {false, static_cast<int>(j / block), r * block + j % block};
    case SourceRule::kFromPreviousRank:
      return {false, (rank - 1 + nranks) % nranks, j};
  }
  return {true, 0, j};
}

}  // namespace fabricmap::core
