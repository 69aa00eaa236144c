// Pairwise streams over MPI, shaped as OSU Micro-Benchmarks' osu_bw, osu_bibw and osu_latency (the
// loops of OMB 7.2, c/mpi/pt2pt/standard), so that a pair's figure reads as theirs does:
// - one way (osu_bw): each iteration is a window of non-blocking sends of the same buffer, then
//   the receiver's 4-byte acknowledgement once all of them arrived; the next window starts after it.
//   The sender's time from the handshake to the last acknowledgement is the stream's time.
// - both ways (osu_bibw): each side posts the window's receives, then its sends, and waits for all.
// - latency (osu_latency): blocking round trips after osu_latency's untimed ones; half the mean.
#include "worker/mpi/pairs.h"

#include <algorithm>
#include <array>
#include <vector>

#include "core/config.h"
#include "core/pattern_for.h"
#include "worker/host_check.h"
#include "worker/pair_timing.h"
#include "worker/mpi_check.h"

#if FABRICMAP_HAVE_SIM
#include <smpi/smpi.h>
#endif

namespace fabricmap::worker::mpi {
namespace {

// What a timed window sends and receives. Under SimGrid, one folded buffer (SMPI_SHARED_MALLOC):
// nobody reads a stream's content, and SMPI skips copying a folded buffer, whose copies would
// otherwise be half a simulated run's real time at bandwidth-bound sizes. The checked transfer and
// the ping-pong keep the real buffers.
class StreamPayload {
 public:
  StreamPayload(std::size_t bytes, std::byte* send, std::byte* receive) : send_(send), recv_(receive) {
#if FABRICMAP_HAVE_SIM
    folded_ = static_cast<std::byte*>(SMPI_SHARED_MALLOC(std::max<std::size_t>(bytes, 1)));
    send_ = recv_ = folded_;
#else
    (void)bytes;
#endif
  }
  StreamPayload(const StreamPayload&) = delete;
  StreamPayload& operator=(const StreamPayload&) = delete;
  ~StreamPayload() {
#if FABRICMAP_HAVE_SIM
    SMPI_SHARED_FREE(folded_);
#endif
  }
  std::byte* send() const { return send_; }
  std::byte* receive() const { return recv_; }

 private:
  std::byte* send_;
  std::byte* recv_;
#if FABRICMAP_HAVE_SIM
  std::byte* folded_ = nullptr;
#endif
};

class MpiPairs final : public PairRunner {
 public:
  MpiPairs(MPI_Comm world, const PairSpec& spec, std::byte* send, std::byte* receive)
      : comm_(world), spec_(spec), send_(send), recv_(receive), payload_(spec.bytes, send, receive),
        count_(static_cast<int>(spec.bytes)) {
    requests_.resize(2 * static_cast<std::size_t>(std::max(spec.window, 1)));
  }

  Timing stream(int peer, bool send, bool receive) override {
    // Only the pair's first stream may set its connection up: the later ones probe once.
    PairSpec spec = spec_;
    if (streamed_) spec.probes = 1;
    streamed_ = true;
    const Timing t = timeWindows(
        spec, [&] { sync(peer); }, [&](int mine) { return agreeOnFewer(comm_, peer, kTagSync, mine); },
        [&](bool /*last*/) { window(peer, send, receive, spec.window, count_); },
        [&] {
          window(peer, send, receive, spec.probeMessages, static_cast<int>(spec.probeBytes));
          return true;
        });
    clearlySlow_ = clearlySlow_ || t.clearlySlow;
    return t;
  }

  double pingPong(int peer, bool initiator) override {
    const int bytes = static_cast<int>(spec_.latencyBytes);
    return timeRoundTrips(spec_, latencySkip(spec_.latencyBytes), [&] { sync(peer); }, [&] {
      if (initiator) {
        FM_MPI(MPI_Send(send_, bytes, MPI_BYTE, peer, kTagPing, comm_));
        FM_MPI(MPI_Recv(recv_, bytes, MPI_BYTE, peer, kTagPing, comm_, MPI_STATUS_IGNORE));
      } else {
        FM_MPI(MPI_Recv(recv_, bytes, MPI_BYTE, peer, kTagPing, comm_, MPI_STATUS_IGNORE));
        FM_MPI(MPI_Send(send_, bytes, MPI_BYTE, peer, kTagPing, comm_));
      }
    });
  }

  std::uint64_t checkedTransfer(int peer, bool sender) override {
    // The pair is a 2-rank sendrecv ring: the receiver's element j must be the sender's. A pair
    // both sides found clearly slow checks a probe's bytes (kProbeBytes), not a message's, which
    // at 1% of the rate would hold the round as long as the probes did.
    const core::Pattern pattern =
        core::patternFor(core::Op::kSendRecv, core::RedOp::kSum, core::DType::kUint32, 2, spec_.seed);
    const std::uint64_t bytes = clearlySlow_ ? std::min(spec_.bytes, kProbeBytes) : spec_.bytes;
    const std::uint64_t elems = bytes / sizeof(std::uint32_t);
    if (sender) {
      fillInput(core::DType::kUint32, send_, elems, pattern, 0);
      FM_MPI(MPI_Send(send_, static_cast<int>(elems), MPI_UINT32_T, peer, kTagCheck, comm_));
      return 0;
    }
    fillValue(core::DType::kUint32, recv_, elems, pattern.poison());
    FM_MPI(MPI_Recv(recv_, static_cast<int>(elems), MPI_UINT32_T, peer, kTagCheck, comm_, MPI_STATUS_IGNORE));
    const OutputCheck check{&core::traits(core::Op::kSendRecv), &pattern, 1, 2, 0, elems};
    return countWrong(core::DType::kUint32, recv_, elems, check);
  }

 private:
  void sync(int peer) {
    FM_MPI(MPI_Sendrecv(nullptr, 0, MPI_BYTE, peer, kTagSync, nullptr, 0, MPI_BYTE, peer, kTagSync, comm_,
                 MPI_STATUS_IGNORE));
  }

  // One iteration: a window of `messages` of `count` bytes (the same buffer each time, as OSU's),
  // receives posted before sends; one way, the receiver acknowledges the whole window before the
  // next may start. A probe is a window of one message.
  void window(int peer, bool send, bool receive, int messages, int count) {
    int n = 0;
    for (int w = 0; receive && w < messages; ++w) {
      FM_MPI(MPI_Irecv(payload_.receive(), count, MPI_BYTE, peer, kTagData, comm_, &requests_[static_cast<std::size_t>(n++)]));
    }
    for (int w = 0; send && w < messages; ++w) {
      FM_MPI(MPI_Isend(payload_.send(), count, MPI_BYTE, peer, kTagData, comm_, &requests_[static_cast<std::size_t>(n++)]));
    }
    FM_MPI(MPI_Waitall(n, requests_.data(), MPI_STATUSES_IGNORE));
    if (send == receive) return;
    if (send) {
      FM_MPI(MPI_Recv(ack_.data(), kAckBytes, MPI_CHAR, peer, kTagAck, comm_, MPI_STATUS_IGNORE));
    } else {
      FM_MPI(MPI_Send(ack_.data(), kAckBytes, MPI_CHAR, peer, kTagAck, comm_));
    }
  }

  MPI_Comm comm_;
  PairSpec spec_;
  std::byte* send_;
  std::byte* recv_;
  StreamPayload payload_;
  int count_;
  std::vector<MPI_Request> requests_;
  std::array<char, kAckBytes> ack_{};
  bool streamed_ = false;     // a stream ran: the pair's connection is up
  bool clearlySlow_ = false;  // a stream found the pair clearly slow on both sides
};

}  // namespace

std::unique_ptr<PairRunner> makePairRunner(MPI_Comm world, const PairSpec& spec, std::byte* send,
                                           std::byte* receive) {
  return std::make_unique<MpiPairs>(world, spec, send, receive);
}

}  // namespace fabricmap::worker::mpi
