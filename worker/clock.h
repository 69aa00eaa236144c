// The one clock every measured time in the worker reads: MPI_Wtime. A real run's MPI takes it from
// the system's monotonic clock; SimGrid's SMPI (the sim build) from the simulated one, so the
// same code measures a cluster and a simulated fabric. Waits bounded in the caller's own time (a
// watchdog, a peer that does not answer) stay on std::chrono::steady_clock.
#pragma once

#include <mpi.h>

namespace fabricmap::worker {

class Stopwatch {
 public:
  Stopwatch() : start_(MPI_Wtime()) {}
  double seconds() const { return MPI_Wtime() - start_; }

 private:
  double start_;
};

}  // namespace fabricmap::worker
