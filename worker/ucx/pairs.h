// Point-to-point transfers between two ranks on host or GPU buffers, shaped as the mpi backend's
// (osu_bw, osu_bibw, osu_latency; worker/mpi/pairs.h): UCP tag-matching sends and receives as
// ucx_perftest's tag_bw and tag_lat measure them, or remote writes into the peer's registered
// buffer as its put_bw and put_lat do.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <memory>

#include "worker/backend.h"
#include "worker/ucx/context.h"

namespace fabricmap::worker::ucx {

// A runner's buffers: host memory, or CUDA device memory (--pair-memory cuda), which the checked
// transfers and the remote-write ping-pong reach through `copy`, between host memory and this.
// The runner allocates through UCX (ucp_mem_map, as ucx_perftest) what lands in its memory: remote
// writes, and in host memory tag matching's messages both ways (whose buffers here are then null).
struct PairBuffers {
  std::byte* send = nullptr;     // kRma, or kTag in GPU memory
  std::byte* receive = nullptr;  // kTag in GPU memory only
  ucs_memory_type_t type = UCS_MEMORY_TYPE_HOST;
  void (*copy)(void* to, const void* from, std::size_t bytes) = nullptr;  // null: host memory
};

// `buffers` hold at least spec.bytes and spec.latencyBytes and, with `ucp`, outlive the runner.
// `world` is used for the handshake that starts each stream (and, for remote writes, to exchange
// the buffers' keys the first time a pair meets). kRma needs a Ucp started with rma.
std::unique_ptr<PairRunner> makePairRunner(Ucp& ucp, MPI_Comm world, const PairSpec& spec, const PairBuffers& buffers,
                                           PairApi api);

}  // namespace fabricmap::worker::ucx
