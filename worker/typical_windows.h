// The typical window of each kind of pair stream, agreed by every rank of a run: what a pair's
// window is judged against when its probe or warm window says whether it is clearly slow.
#pragma once

#include <mpi.h>

#include <array>
#include <cstddef>
#include <vector>

#include "worker/pair_timing.h"

namespace fabricmap::worker {

// After each pair step (and once before the first of a level, from a probe per pair), rank 0
// takes the median of the windows, and of the probes, that the ranks timed, per kind of pair, and
// tells every rank, which keeps the last few. Agreed rather than each rank's own: both sides of a
// pair judge alike from the first round on, and a rank whose node or cable is faulty, whose own
// windows are all slow, judges against the fabric's. (A rank's own history was empty in its first
// round, where a pair at a hundredth of the rate ran its whole windows; in quick mode, its second
// round too.) A clearly slow pair's times are no sample: a round of them would drag the typical.
class TypicalWindows {
 public:
  // The kinds whose healthy windows differ by far more than kClearlySlow: rank pairs inside a
  // node, rank pairs across nodes, node pairs.
  static constexpr std::size_t kKinds = 3;
  struct Sample {
    int kind = -1;       // -1: none
    double window = 0;   // seconds of a timed window (0: none)
    double probe = 0;    // seconds of a probe (0: none)
  };
  // seconds; 0 while unknown
  double window(std::size_t kind) const { return windows_.at(kind).median(); }
  double probe(std::size_t kind) const { return probes_.at(kind).median(); }
  bool knows(std::size_t kind) const { return window(kind) > 0 || probe(kind) > 0; }
  // Collective over `world`: every rank's samples (an idle rank's are none), each kind's medians
  // over the ranks kept on every rank.
  void agree(MPI_Comm world, const std::array<Sample, 2>& mine);
  // The same where rank 0 gathered every rank's samples already (`all`; empty on the others):
  // only the medians are told.
  void agreeGathered(MPI_Comm world, std::vector<Sample> all);

 private:
  std::array<WindowHistory, kKinds> windows_;
  std::array<WindowHistory, kKinds> probes_;
};

}  // namespace fabricmap::worker
