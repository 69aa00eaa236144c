// Pairwise streams over UCP (see pairs.h):
// - one way: each iteration is a window of ucp_tag_send_nbx of the same buffer, the receiver's
//   ucp_tag_recv_nbx posted first, then its 4-byte acknowledgement once all arrived (as osu_bw);
// - both ways: each side posts the window's receives, then its sends, and waits for all;
// - latency: blocking tag round trips after untimed ones (as osu_latency); half the mean.
// The handshake before each is an MPI zero-byte exchange, outside the timed part; each ends with
// Ucp::finish (a flush and a UCX handshake), so neither side waits in MPI while the other still
// needs its UCX progress.
#include "worker/ucx/pairs.h"

#include <algorithm>
#include <array>
#include <vector>

#include "core/pattern_for.h"
#include "worker/host_check.h"
#include "worker/mpi/pairs.h"
#include "worker/mpi_check.h"
#include "worker/pair_timing.h"

namespace fabricmap::worker::ucx {
namespace {

constexpr int kAckBytes = mpi::kAckBytes;

class UcxPairs final : public PairRunner {
 public:
  UcxPairs(Ucp& ucp, MPI_Comm world, const PairSpec& spec, std::byte* send, std::byte* receive)
      : ucp_(ucp), comm_(world), spec_(spec), send_(send), recv_(receive) {
    requests_.reserve(2 * static_cast<std::size_t>(std::max(spec.window, 1)));
  }

  Timing stream(int peer, bool send, bool receive) override {
    const Timing t = timeWindows(spec_, [&] { sync(peer); }, [&] { window(peer, send, receive); });
    ucp_.finish(peer);
    return t;
  }

  double pingPong(int peer, bool initiator) override {
    const std::size_t bytes = spec_.latencyBytes;
    const double latency = timeRoundTrips(spec_, mpi::latencySkip(spec_.latencyBytes), [&] { sync(peer); }, [&] {
      if (initiator) {
        ucp_.wait(sendTo(peer, send_, bytes, TagKind::kPing), "ping send");
        ucp_.wait(receiveFrom(peer, recv_, bytes, TagKind::kPing), "ping receive");
      } else {
        ucp_.wait(receiveFrom(peer, recv_, bytes, TagKind::kPing), "ping receive");
        ucp_.wait(sendTo(peer, send_, bytes, TagKind::kPing), "ping send");
      }
    });
    ucp_.finish(peer);
    return latency;
  }

  std::uint64_t checkedTransfer(int peer, bool sender) override {
    // The pair is a 2-rank sendrecv ring: the receiver's element j must be the sender's.
    const core::Pattern pattern =
        core::patternFor(core::Op::kSendRecv, core::RedOp::kSum, core::DType::kUint32, 2, spec_.seed);
    const std::uint64_t elems = spec_.bytes / sizeof(std::uint32_t);
    const std::size_t bytes = elems * sizeof(std::uint32_t);
    if (sender) {
      fillInput(core::DType::kUint32, send_, elems, pattern, 0);
      ucp_.wait(sendTo(peer, send_, bytes, TagKind::kCheck), "checked send");
      ucp_.finish(peer);
      return 0;
    }
    fillValue(core::DType::kUint32, recv_, elems, pattern.poison());
    ucp_.wait(receiveFrom(peer, recv_, bytes, TagKind::kCheck), "checked receive");
    ucp_.finish(peer);
    const OutputCheck check{&core::traits(core::Op::kSendRecv), &pattern, 1, 2, 0, elems};
    return countWrong(core::DType::kUint32, recv_, elems, check);
  }

 private:
  void sync(int peer) {
    FM_MPI(MPI_Sendrecv(nullptr, 0, MPI_BYTE, peer, mpi::kTagSync, nullptr, 0, MPI_BYTE, peer, mpi::kTagSync, comm_,
                        MPI_STATUS_IGNORE));
  }

  ucs_status_ptr_t sendTo(int peer, const std::byte* buffer, std::size_t bytes, TagKind kind) {
    ucp_request_param_t param{};
    return ucp_tag_send_nbx(ucp_.endpoint(peer), buffer, bytes, tagOf(kind, ucp_.rank()), &param);
  }

  ucs_status_ptr_t receiveFrom(int peer, std::byte* buffer, std::size_t bytes, TagKind kind) {
    ucp_request_param_t param{};
    return ucp_tag_recv_nbx(ucp_.worker(), buffer, bytes, tagOf(kind, peer), kFullMask, &param);
  }

  // One iteration: a window of messages (the same buffer each time), receives posted before
  // sends; one way, the receiver acknowledges the whole window before the next may start.
  void window(int peer, bool send, bool receive) {
    for (int w = 0; receive && w < spec_.window; ++w) {
      requests_.push_back(receiveFrom(peer, recv_, spec_.bytes, TagKind::kData));
    }
    for (int w = 0; send && w < spec_.window; ++w) requests_.push_back(sendTo(peer, send_, spec_.bytes, TagKind::kData));
    ucp_.waitAll(requests_, "stream");
    if (send == receive) return;
    if (send) {
      ucp_.wait(receiveFrom(peer, reinterpret_cast<std::byte*>(ack_.data()), kAckBytes, TagKind::kAck), "acknowledgement");
    } else {
      ucp_.wait(sendTo(peer, reinterpret_cast<const std::byte*>(ack_.data()), kAckBytes, TagKind::kAck),
                "acknowledgement");
    }
  }

  Ucp& ucp_;
  MPI_Comm comm_;
  PairSpec spec_;
  std::byte* send_;
  std::byte* recv_;
  std::vector<ucs_status_ptr_t> requests_;
  std::array<char, kAckBytes> ack_{};
};

}  // namespace

std::unique_ptr<PairRunner> makePairRunner(Ucp& ucp, MPI_Comm world, const PairSpec& spec, std::byte* send,
                                           std::byte* receive) {
  return std::make_unique<UcxPairs>(ucp, world, spec, send, receive);
}

}  // namespace fabricmap::worker::ucx
