// Checks every backend must pass, shared by the MPI (tests/mpi) and GPU (tests/gpu) test programs.
// Collective over MPI_COMM_WORLD; all ranks must call them together.
#pragma once

#include <cstdint>
#include <vector>

#include "core/dtype.h"
#include "worker/backend.h"

namespace fabricmap::test_support {

struct CheckedCases {
  int run = 0;
  int waived = 0;
};

// Every op x `dtypes` x reduction x placement on the world communicator: exact results, one
// element corrupted on one rank counted exactly once, and (with 2+ ranks) an op that did not run
// detected by the check. Cases the backend waives are counted, not run.
CheckedCases checkEveryCollective(worker::Backend& backend, const std::vector<core::DType>& dtypes);

// GPU-pair copies between world ranks 0-1 (and 2-3, at once, with 4+ ranks): every method the
// backend offers and the path supports, written and (where the path allows) read, one way, the
// other and both at once: an active rank reports time, an idle one none, and every checked copy
// arrives exact. Returns the methods that ran on this rank's pair (0 on ranks outside a pair).
int checkCopies(worker::Backend& backend, std::uint64_t bytes);

// Every pair of world ranks in turn (the others waiting), at an eager size with osu_bw's window of
// 64, an odd rendezvous size with 4 and 4 MiB with 1, one runner per size: a stream one way, the
// other way and both at once each take time, the ping-pong's one-way latency is positive and under
// 0.1 s, and a checked transfer each way arrives exact. Returns the wrong elements summed over
// every size and rank (0 on a backend that conforms); gtest failures name the pair otherwise.
std::uint64_t checkEveryPair(worker::Backend& backend);

// The pair spec the conformance checks use: `bytes` in windows of `window`, 4 timed windows after
// 1 untimed, 50 ping-pongs, pattern seed 7.
worker::PairSpec conformanceSpec(std::uint64_t bytes, int window);

// The sum of `v` over all ranks.
std::uint64_t sumOverRanks(std::uint64_t v);

}  // namespace fabricmap::test_support
