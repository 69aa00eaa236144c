// An interrupted run (Ctrl-C, a scheduler's SIGTERM at its time limit, a closed terminal): every
// rank ends at once with exit code 128 + the signal (130 for SIGINT, 143 for SIGTERM, 129 for
// SIGHUP), never 1, which says a measurement was wrong. Rank 0 first says where the results file
// stands: every step completed is in it (its journal is written per step), and
// `fabricmap run --resume FILE` finishes it. The words are "stopped by": mpirun also sends SIGTERM
// when it ends a job another rank failed, which that rank's own message names. A rank that ends
// the job itself (MPI_Abort) first restores the default dispositions (main.cpp).
#pragma once

#include <string>

namespace fabricmap::orchestrator {

// The handlers, installed while it lives; rank 0 passes the results file it writes ("" on the
// other ranks). Its end restores the default dispositions: once the run's body has returned, a
// SIGTERM is mpirun ending a job whose ranks exit non-zero (a usage error), not an interruption.
class EndOnInterrupt {
 public:
  explicit EndOnInterrupt(const std::string& output);
  EndOnInterrupt(const EndOnInterrupt&) = delete;
  EndOnInterrupt& operator=(const EndOnInterrupt&) = delete;
  ~EndOnInterrupt();
};

}  // namespace fabricmap::orchestrator
