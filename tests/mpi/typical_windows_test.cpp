// The typical window and probe of each kind of pair, agreed over real ranks: every rank keeps the
// same medians, taken over the ranks that had a sample of that kind.
#include <gtest/gtest.h>
#include <mpi.h>

#include <array>

#include "worker/typical_windows.h"

namespace fabricmap::worker {
namespace {

// Rank r of n sends a window of r + 1 ms and a probe of (r + 1) / 10 ms between nodes (kind 1),
// except the last rank, idle; rank 0 alone also a both-ways window inside its node (kind 0).
TEST(TypicalWindows, EveryRankKeepsTheMedianOverTheRanksOfEachKind) {
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::array<TypicalWindows::Sample, 2> mine{};
  if (rank + 1 < size) mine[0] = {1, (rank + 1) * 1e-3, (rank + 1) * 1e-4};
  if (rank == 0) mine[1] = {0, 5e-3, 0};
  TypicalWindows typical;
  EXPECT_FALSE(typical.knows(1));
  typical.agree(MPI_COMM_WORLD, mine);
  const int middle = (size - 1) / 2;  // of the size - 1 ranks with a kind-1 sample, sorted: 1 .. size - 1 ms
  EXPECT_DOUBLE_EQ(typical.window(1), (middle + 1) * 1e-3);
  EXPECT_DOUBLE_EQ(typical.probe(1), (middle + 1) * 1e-4);
  EXPECT_DOUBLE_EQ(typical.window(0), 5e-3);
  EXPECT_EQ(typical.probe(0), 0);  // none measured: unknown
  EXPECT_FALSE(typical.knows(2));
}

}  // namespace
}  // namespace fabricmap::worker
