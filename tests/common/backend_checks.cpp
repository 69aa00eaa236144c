// Shared backend checks (see backend_checks.h).
#include "tests/common/backend_checks.h"

#include <gtest/gtest.h>
#include <mpi.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/plan.h"

#include "worker/executor.h"

namespace fabricmap::test_support {

std::uint64_t sumOverRanks(std::uint64_t v) {
  std::uint64_t total = 0;
  MPI_Allreduce(&v, &total, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  return total;
}

namespace {

std::uint64_t checkEveryPairAt(worker::Backend& backend, const worker::PairSpec& spec) {
  int n = 0;
  int me = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  std::unique_ptr<worker::PairRunner> pairs = backend.preparePairs(MPI_COMM_WORLD, spec);
  std::uint64_t wrong = 0;
  int met = 0;
  for (int a = 0; a < n; ++a) {
    for (int b = a + 1; b < n; ++b) {
      MPI_Barrier(MPI_COMM_WORLD);
      if (me != a && me != b) continue;
      const int peer = me == a ? b : a;
      const bool low = me == a;
      ++met;
      EXPECT_GT(pairs->stream(peer, low, !low).seconds, 0) << spec.bytes << " B, rank " << me << " with " << peer;
      EXPECT_GT(pairs->stream(peer, !low, low).seconds, 0) << spec.bytes << " B, rank " << me << " with " << peer;
      EXPECT_GT(pairs->stream(peer, true, true).seconds, 0) << spec.bytes << " B, rank " << me << " with " << peer;
      const double latency = pairs->pingPong(peer, low);
      EXPECT_GT(latency, 0);
      EXPECT_LT(latency, 0.1) << "a one-way " << spec.latencyBytes << " B message took " << latency << " s";
      wrong += pairs->checkedTransfer(peer, low);
      wrong += pairs->checkedTransfer(peer, !low);
    }
  }
  EXPECT_EQ(met, n - 1) << "rank " << me << " did not meet every other rank";
  return sumOverRanks(wrong);
}

}  // namespace

worker::PairSpec conformanceSpec(std::uint64_t bytes, int window) {
  worker::PairSpec spec;
  spec.bytes = bytes;
  spec.window = window;
  spec.iters = 4;
  spec.warmup = 1;
  spec.latencyIters = 50;
  spec.seed = 7;
  return spec;
}

std::uint64_t checkEveryPair(worker::Backend& backend) {
  std::uint64_t wrong = 0;
  for (const auto& [bytes, window] : std::vector<std::pair<std::uint64_t, int>>{{8, 64}, {65536 + 12, 4}, {4u << 20, 1}}) {
    const std::uint64_t here = checkEveryPairAt(backend, conformanceSpec(bytes, window));
    EXPECT_EQ(here, 0u) << bytes << " B arrived wrong";
    wrong += here;
  }
  return wrong;
}

CheckedCases checkEveryCollective(worker::Backend& backend, const std::vector<core::DType>& dtypes) {
  int n = 0;
  int rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  CheckedCases cases;
  for (const auto& op : core::allOps()) {
    const std::vector<core::RedOp> redops =
        op.reduces ? std::vector<core::RedOp>(core::allRedOps().begin(), core::allRedOps().end())
                   : std::vector<core::RedOp>{core::RedOp::kSum};
    for (core::DType dtype : dtypes) {
      for (core::RedOp redop : redops) {
        for (bool inPlace : {false, true}) {
          core::CollectiveStep step;
          step.index = cases.run + cases.waived;
          step.op = op.op;
          step.dtype = dtype;
          step.redop = redop;
          step.root = n - 1;
          step.inPlace = inPlace;
          // 1001 elements per block: not a power of two, not a multiple of the rank count
          step.bytes = 1001ull * static_cast<std::uint64_t>(n) * core::traits(dtype).size;
          const worker::CollectiveSpec spec = worker::specFor(step, n);
          const std::string what = std::string(op.name) + " " + std::string(core::traits(dtype).name) +
                                   " " + std::string(core::name(redop)) +
                                   (inPlace ? " in-place" : " out-of-place");
          if (!backend.waiver(spec).empty()) {
            ++cases.waived;
            continue;
          }
          auto runner = backend.prepare(MPI_COMM_WORLD, spec);

          runner->fill();
          if (n > 1) {
            EXPECT_GT(sumOverRanks(runner->countWrong()), 0u) << what << ": no op must fail the check";
          }

          runner->fill();
          runner->runOnce();
          EXPECT_EQ(sumOverRanks(runner->countWrong()), 0u) << what;

          // corrupt one element on the last rank that has an output
          const int victim = op.hasOutput(n - 1, step.root) ? n - 1 : step.root;
          if (rank == victim) runner->corruptOutput(7);
          EXPECT_EQ(sumOverRanks(runner->countWrong()), 1u) << what << ": corruption on rank " << victim;
          ++cases.run;
        }
      }
    }
  }
  return cases;
}

int checkCopies(worker::Backend& backend, std::uint64_t bytes) {
  int n = 0;
  int rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const int pairs = n >= 4 ? 2 : n >= 2 ? 1 : 0;
  const bool inPair = rank < 2 * pairs;
  MPI_Comm pair = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, inPair ? rank / 2 : MPI_UNDEFINED, rank, &pair);
  int ran = 0;
  if (inPair) {
    const bool first = rank % 2 == 0;
    worker::CopySpec spec;
    spec.bytes = bytes;
    spec.iters = 3;
    spec.warmup = 1;
    spec.seed = 11;
    auto runner = backend.prepareCopies(pair, spec);
    EXPECT_TRUE(runner != nullptr) << "ranks of one host must be able to copy";
    for (core::CopyMethod method : backend.copyMethods()) {
      if (!runner || !runner->supports(method)) continue;
      ++ran;
      const std::string what = std::string(core::name(method)) + " on path " + runner->path();
      for (const bool write : {true, false}) {
        if (!write && !runner->canRead()) continue;
        // data first -> second: a write is issued by the source, a read by the destination
        const bool issuesForward = write ? first : !first;
        EXPECT_EQ(runner->transfer(method, issuesForward, write) > 0, issuesForward) << what;
        EXPECT_EQ(runner->transfer(method, !issuesForward, write) > 0, !issuesForward) << what;
        EXPECT_GT(runner->transfer(method, true, write), 0.0) << what << " both ways";
        EXPECT_EQ(runner->checkedCopy(method, first, write), 0u) << what << (write ? " write" : " read");
        EXPECT_EQ(runner->checkedCopy(method, !first, write), 0u) << what << (write ? " write" : " read");
      }
    }
    runner.reset();  // its destructor waits for the peer on `pair`: before the communicator goes
    MPI_Comm_free(&pair);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  return ran;
}

}  // namespace fabricmap::test_support
