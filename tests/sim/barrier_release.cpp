// Under SimGrid SMPI: whether worker::sleepingBarrier holds every rank until the last arrives.
// The last rank reaches each barrier one simulated second after the others (smpi_usleep); a
// barrier lets no rank leave sooner. SMPI 3.32's MPI_Ibarrier + MPI_Wait is measured beside it
// and printed only: its root posts the releases beside its receives, so the others leave at once,
// which is why sleepingBarrier uses MPI_Barrier in the sim build. Exit 0 when sleepingBarrier
// held every rank, 1 when one left early.
#include <mpi.h>
#include <smpi/smpi_helpers_internal.h>

#include <cstdio>

#include "worker/comm.h"

namespace {

constexpr double kLate = 1.0;  // simulated seconds the last rank arrives after the others

// The soonest any rank left `barrier`, in seconds after the others entered it.
template <class Barrier>
double soonestRelease(Barrier barrier) {
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Barrier(MPI_COMM_WORLD);
  const double start = MPI_Wtime();
  if (rank == size - 1) smpi_usleep(static_cast<useconds_t>(kLate * 1e6));
  barrier();
  const double waited = MPI_Wtime() - start;
  double soonest = 0;
  MPI_Allreduce(&waited, &soonest, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
  return soonest;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const double raw = soonestRelease([] {
    MPI_Request request = MPI_REQUEST_NULL;
    MPI_Ibarrier(MPI_COMM_WORLD, &request);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
  });
  const double ours = soonestRelease([] { fabricmap::worker::sleepingBarrier(MPI_COMM_WORLD); });
  const bool held = ours >= kLate * 0.999;
  if (rank == 0) {
    std::printf("the last rank arrived %.3f s late; the first rank left after\n", kLate);
    const bool rawHeld = raw >= kLate * 0.999;
    std::printf("  MPI_Ibarrier + MPI_Wait: %.3f s%s\n", raw,
                rawHeld ? " (a barrier: the sim build's workaround may go)" : " (no barrier under this SMPI)");
    std::printf("  sleepingBarrier:         %.3f s (%s)\n", ours, held ? "held" : "LEFT EARLY");
  }
  MPI_Finalize();
  return held ? 0 : 1;
}
