// Point-to-point transfers between two ranks on host buffers, shaped as the mpi backend's (osu_bw,
// osu_bibw, osu_latency; worker/mpi/pairs.h): UCP tag-matching sends and receives as ucx_perftest's
// tag_bw and tag_lat measure them, or remote writes into the peer's registered buffer as its
// put_bw and put_lat do.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <memory>

#include "worker/backend.h"
#include "worker/ucx/context.h"

namespace fabricmap::worker::ucx {

// `send` and `receive` (kTag only: remote writes land in a buffer UCX allocates) hold at least
// spec.bytes and spec.latencyBytes and, with `ucp`, outlive the runner. `world` is used for the handshake that starts each stream (and, for remote writes, to
// exchange the buffers' keys the first time a pair meets). kRma needs a Ucp started with rma.
std::unique_ptr<PairRunner> makePairRunner(Ucp& ucp, MPI_Comm world, const PairSpec& spec, std::byte* send,
                                           std::byte* receive, PairApi api);

}  // namespace fabricmap::worker::ucx
