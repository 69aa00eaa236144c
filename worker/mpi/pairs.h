// Point-to-point transfers between two ranks with MPI calls on host buffers.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <memory>

#include "worker/backend.h"

namespace fabricmap::worker::mpi {

// The messages a pair exchanges, public so that a test can play the peer with OSU's own loops.
// A one-way stream is osu_bw's: per window the sender posts `window` sends of kTagData, the
// receiver answers their completion with kAckBytes of kTagAck. Both ways at once is osu_bibw's
// (no acknowledgement); the ping-pong is osu_latency's (kTagPing both ways). kTagSync is the
// zero-byte handshake that starts each of them.
inline constexpr int kTagData = 0x70;
inline constexpr int kTagAck = 0x71;
inline constexpr int kTagSync = 0x72;
inline constexpr int kTagPing = 0x73;
inline constexpr int kTagCheck = 0x74;
inline constexpr int kAckBytes = 4;  // osu_bw's acknowledgement

// Untimed round trips before a ping-pong: osu_latency's skip, 100 up to 8 KiB and 10 above.
inline constexpr int latencySkip(std::uint64_t bytes) { return bytes > 8192 ? 10 : 100; }

// `send` and `receive` hold at least spec.bytes and outlive the runner.
std::unique_ptr<PairRunner> makePairRunner(MPI_Comm world, const PairSpec& spec, std::byte* send,
                                           std::byte* receive);

}  // namespace fabricmap::worker::mpi
