// Point-to-point transfers between two ranks with UCP tag-matching sends and receives on host
// buffers, shaped as the mpi backend's (osu_bw, osu_bibw, osu_latency; worker/mpi/pairs.h) and as
// ucx_perftest's tag_bw and tag_lat measure them.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <memory>

#include "worker/backend.h"
#include "worker/ucx/context.h"

namespace fabricmap::worker::ucx {

// `send` and `receive` hold at least spec.bytes and, with `ucp`, outlive the runner. `world` is
// used for the handshake that starts each stream.
std::unique_ptr<PairRunner> makePairRunner(Ucp& ucp, MPI_Comm world, const PairSpec& spec, std::byte* send,
                                           std::byte* receive);

}  // namespace fabricmap::worker::ucx
