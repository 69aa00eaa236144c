// The timed loops of a pair stream and a ping-pong, shaped once for the host backends (mpi, ucx):
// what each backend brings is its handshake, one window and one round trip.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <vector>

#include "core/stats.h"
#include "worker/backend.h"

namespace fabricmap::worker {

// A handshake, `spec.warmup` untimed windows, a handshake, then `spec.iters` timed windows: the
// seconds from the second handshake to the end of the last window, and how much the windows'
// times varied.
template <class Sync, class Window>
PairRunner::Timing timeWindows(const PairSpec& spec, Sync sync, Window window) {
  sync();
  for (int i = 0; i < spec.warmup; ++i) window();
  sync();
  std::vector<double> iterations(static_cast<std::size_t>(spec.iters));
  const double start = MPI_Wtime();
  double last = start;
  for (double& t : iterations) {
    window();
    const double now = MPI_Wtime();
    t = now - last;
    last = now;
  }
  return {last - start, core::summarize(std::move(iterations)).cv};
}

// A handshake, `skip` untimed round trips, then `spec.latencyIters` timed ones: the one-way
// latency in seconds (half the mean round trip).
template <class Sync, class RoundTrip>
double timeRoundTrips(const PairSpec& spec, int skip, Sync sync, RoundTrip roundTrip) {
  double start = 0;
  sync();
  for (int i = 0; i < skip + spec.latencyIters; ++i) {
    if (i == skip) start = MPI_Wtime();
    roundTrip();
  }
  return (MPI_Wtime() - start) / (2.0 * std::max(spec.latencyIters, 1));
}

}  // namespace fabricmap::worker
