// Pairwise streams over UCP (see pairs.h), by tag matching or by remote writes.
// Tag matching (as ucx_perftest's tag_bw and tag_lat, shaped as osu_bw; in host memory from and to
// buffers UCX allocated, as its are):
// - one way: each iteration is a window of ucp_tag_send_nbx of the same buffer, the receiver's
//   ucp_tag_recv_nbx posted first, then its 4-byte acknowledgement once all arrived;
// - both ways: each side posts the window's receives, then its sends, and waits for all;
// - latency: blocking tag round trips after untimed ones (as osu_latency); half the mean.
// Remote writes (as ucx_perftest's ucp_put_bw and ucp_put_lat):
// - one way: each iteration is a window of ucp_put_nbx into the peer's buffer (allocated by UCX,
//   see Registered), complete here before the next window starts (ucx_perftest's outstanding
//   limit); after the last warm-up window and after the last timed one, a flush of the endpoint
//   (every write complete at the peer) and a 4-byte tag message that tells the peer so (the peer
//   progresses UCX while it waits, which software RMA over TCP or shared memory needs). The
//   writer's time covers the flush;
// - both ways: each side writes its windows, then at the same points flushes and both exchange the
//   4-byte message;
// - latency: each side writes a sequence number into the last byte of the other's buffer and polls
//   its own for the answer (ucx_perftest's put_lat; in GPU memory each poll is a copy to the host,
//   as put_lat's with -m cuda).
// GPU memory (--pair-memory cuda) is named to UCX in every operation (UCS_MEMORY_TYPE_CUDA); the
// checked transfers fill and read it through a host copy.
// The handshake before each is an MPI zero-byte exchange, outside the timed part; each ends with
// Ucp::finish (a flush and a UCX handshake), and so does the warm-up before the MPI agreement on
// the timed windows' count, so neither side waits in MPI while the other still needs its UCX
// progress, and no write is in flight when a buffer is unregistered.
#include "worker/ucx/pairs.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <map>
#include <optional>
#include <vector>

#include "core/pattern_for.h"
#include "worker/host_buffer.h"
#include "worker/host_check.h"
#include "worker/mpi/pairs.h"
#include "worker/mpi_check.h"
#include "worker/pair_timing.h"

namespace fabricmap::worker::ucx {
namespace {

constexpr int kAckBytes = mpi::kAckBytes;

// What a pair buffer holds: the streams' and the ping-pong's messages.
std::size_t lengthOf(const PairSpec& spec) { return std::max<std::uint64_t>({spec.bytes, spec.latencyBytes, 1}); }

// What both APIs share: the handshake, tagged sends and receives, the checked transfer's pattern.
class UcxPairsBase : public PairRunner {
 protected:
  UcxPairsBase(Ucp& ucp, MPI_Comm world, const PairSpec& spec, const PairBuffers& buffers)
      : ucp_(ucp), comm_(world), spec_(spec), buffers_(buffers), send_(buffers.send), recv_(buffers.receive) {
    requests_.reserve(2 * static_cast<std::size_t>(std::max(spec.window, 1)));
  }

  void sync(int peer) {
    FM_MPI(MPI_Sendrecv(nullptr, 0, MPI_BYTE, peer, mpi::kTagSync, nullptr, 0, MPI_BYTE, peer, mpi::kTagSync, comm_,
                        MPI_STATUS_IGNORE));
  }

  // timeWindows' handshake on the timed windows' count, in MPI between the warm-up and the timed
  // windows: first Ucp::finish, since a UCX send that completed here may still lie in a transport's
  // queue (an acknowledgement, a rendezvous' answer) that only this side's progress sends, and the
  // peer waiting for it would never reach the handshake.
  auto agreeWith(int peer) {
    return [this, peer](int mine) {
      ucp_.finish(peer);
      return agreeOnFewer(comm_, peer, mpi::kTagSync, mine);
    };
  }

  // A tagged send or receive of `buffer`, in the pair memory unless `host` (the 4-byte messages).
  ucs_status_ptr_t sendTo(int peer, const void* buffer, std::size_t bytes, TagKind kind, bool host = false) {
    const ucp_request_param_t param = paramFor(host);
    return ucp_tag_send_nbx(ucp_.endpoint(peer), buffer, bytes, tagOf(kind, ucp_.rank()), &param);
  }

  ucs_status_ptr_t receiveFrom(int peer, void* buffer, std::size_t bytes, TagKind kind, bool host = false) {
    const ucp_request_param_t param = paramFor(host);
    return ucp_tag_recv_nbx(ucp_.worker(), buffer, bytes, tagOf(kind, peer), kFullMask, &param);
  }

  // UCX told which memory an operation's buffer is in (host: the 4-byte messages).
  ucp_request_param_t paramFor(bool host) const {
    ucp_request_param_t param{};
    param.op_attr_mask = UCP_OP_ATTR_FIELD_MEMORY_TYPE;
    param.memory_type = host ? UCS_MEMORY_TYPE_HOST : buffers_.type;
    return param;
  }

  // Fills `bytes` of pair memory at `buffer` by `fill`, which writes host memory.
  template <class Fill>
  void fillThrough(std::byte* buffer, std::size_t bytes, Fill fill) {
    if (buffers_.copy == nullptr) return fill(buffer);
    staging_.reserve(bytes);
    fill(staging_.data());
    buffers_.copy(buffer, staging_.data(), bytes);
  }

  // `bytes` of pair memory at `buffer` as host memory can read them.
  const std::byte* hostView(const std::byte* buffer, std::size_t bytes) {
    if (buffers_.copy == nullptr) return buffer;
    staging_.reserve(bytes);
    buffers_.copy(staging_.data(), buffer, bytes);
    return staging_.data();
  }

  // The 4-byte message that ends a one-way window: `receive`, this side waits for it; else sends it.
  void acknowledge(int peer, bool receive) {
    if (receive) {
      ucp_.wait(receiveFrom(peer, ack_.data(), kAckBytes, TagKind::kAck, true), "acknowledgement");
    } else {
      ucp_.wait(sendTo(peer, ack_.data(), kAckBytes, TagKind::kAck, true), "acknowledgement");
    }
  }

  // The checked transfer is a 2-rank sendrecv ring: the receiver's element j must be the sender's.
  core::Pattern checkPattern() const {
    return core::patternFor(core::Op::kSendRecv, core::RedOp::kSum, core::DType::kUint32, 2, spec_.seed);
  }
  std::uint64_t checkElements() const { return spec_.bytes / sizeof(std::uint32_t); }
  // The checked transfer's data filled in (sender) or poisoned (receiver).
  void fillSent(const core::Pattern& pattern) {
    fillThrough(send_, checkBytes(), [&](std::byte* to) {
      fillInput(core::DType::kUint32, to, checkElements(), pattern, 0);
    });
  }
  void poisonReceived(const core::Pattern& pattern) {
    fillThrough(recv_, checkBytes(), [&](std::byte* to) {
      fillValue(core::DType::kUint32, to, checkElements(), pattern.poison());
    });
  }
  std::size_t checkBytes() const { return checkElements() * sizeof(std::uint32_t); }
  std::uint64_t countWrongReceived(const core::Pattern& pattern) {
    const OutputCheck check{&core::traits(core::Op::kSendRecv), &pattern, 1, 2, 0, checkElements()};
    return countWrong(core::DType::kUint32, hostView(recv_, checkBytes()), checkElements(), check);
  }

  Ucp& ucp_;
  MPI_Comm comm_;
  PairSpec spec_;
  PairBuffers buffers_;
  HostBuffer staging_;  // the host side of copies to and from GPU memory
  std::byte* send_;
  std::byte* recv_;
  std::vector<ucs_status_ptr_t> requests_;
  std::array<char, kAckBytes> ack_{};
};

class TagPairs final : public UcxPairsBase {
 public:
  // In host memory the messages go from and to buffers UCX allocated, as ucx_perftest's tag tests
  // do (UCX can map them into a peer on the same host); in GPU memory, from and to `buffers`
  // (cudaMalloc'd, as its -m cuda).
  TagPairs(Ucp& ucp, MPI_Comm world, const PairSpec& spec, const PairBuffers& buffers)
      : UcxPairsBase(ucp, world, spec, buffers) {
    if (buffers.type != UCS_MEMORY_TYPE_HOST) return;
    sent_.emplace(ucp.context(), lengthOf(spec), buffers.type, false);
    received_.emplace(ucp.context(), lengthOf(spec), buffers.type, false);
    send_ = sent_->data();
    recv_ = received_->data();
  }

  Timing stream(int peer, bool send, bool receive) override {
    const Timing t = timeWindows(spec_, [&] { sync(peer); }, agreeWith(peer), [&](bool /*last*/) { window(peer, send, receive); });
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
    const core::Pattern pattern = checkPattern();
    const std::size_t bytes = checkBytes();
    if (sender) {
      fillSent(pattern);
      ucp_.wait(sendTo(peer, send_, bytes, TagKind::kCheck), "checked send");
      ucp_.finish(peer);
      return 0;
    }
    poisonReceived(pattern);
    ucp_.wait(receiveFrom(peer, recv_, bytes, TagKind::kCheck), "checked receive");
    ucp_.finish(peer);
    return countWrongReceived(pattern);
  }

 private:
  // One iteration: a window of messages (the same buffer each time), receives posted before
  // sends; one way, the receiver acknowledges the whole window before the next may start.
  void window(int peer, bool send, bool receive) {
    for (int w = 0; receive && w < spec_.window; ++w) {
      requests_.push_back(receiveFrom(peer, recv_, spec_.bytes, TagKind::kData));
    }
    for (int w = 0; send && w < spec_.window; ++w) requests_.push_back(sendTo(peer, send_, spec_.bytes, TagKind::kData));
    ucp_.waitAll(requests_, "stream");
    if (send != receive) acknowledge(peer, send);
  }

  std::optional<Registered> sent_;
  std::optional<Registered> received_;
};

class RmaPairs final : public UcxPairsBase {
 public:
  RmaPairs(Ucp& ucp, MPI_Comm world, const PairSpec& spec, const PairBuffers& buffers)
      : UcxPairsBase(ucp, world, spec, buffers),
        registered_(ucp.context(), lengthOf(spec), buffers.type) {
    recv_ = registered_.data();  // the peers write into UCX's memory
  }

  Timing stream(int peer, bool send, bool receive) override {
    const RemoteBuffer& remote = remoteOf(peer);
    const Timing t =
        timeWindows(spec_, [&] { sync(peer); }, agreeWith(peer), [&](bool last) { window(peer, remote, send, receive, last); });
    ucp_.finish(peer);
    return t;
  }

  double pingPong(int peer, bool initiator) override {
    const RemoteBuffer& remote = remoteOf(peer);
    const std::size_t bytes = std::max<std::size_t>(spec_.latencyBytes, 1);
    std::byte* mark = recv_ + bytes - 1;
    setByte(mark, 0);  // before the handshake: the peer writes only after it
    std::uint8_t sequence = 0;
    const double latency = timeRoundTrips(spec_, mpi::latencySkip(bytes), [&] { sync(peer); }, [&] {
      sequence = static_cast<std::uint8_t>(sequence % 255 + 1);
      if (initiator) {
        write(peer, remote, bytes, sequence);
        awaitMark(mark, sequence);
      } else {
        awaitMark(mark, sequence);
        write(peer, remote, bytes, sequence);
      }
    });
    ucp_.finish(peer);
    return latency;
  }

  std::uint64_t checkedTransfer(int peer, bool sender) override {
    const RemoteBuffer& remote = remoteOf(peer);
    const core::Pattern pattern = checkPattern();
    const std::size_t bytes = checkBytes();
    if (sender) {
      fillSent(pattern);
      sync(peer);  // the receiver's buffer is poisoned
      ucp_.wait(put(peer, remote, bytes), "checked write");
      flush(peer);
      acknowledge(peer, false);
      ucp_.finish(peer);
      return 0;
    }
    poisonReceived(pattern);
    sync(peer);
    acknowledge(peer, true);
    ucp_.finish(peer);
    return countWrongReceived(pattern);
  }

 private:
  // The peer's buffer description, exchanged over MPI the first time the pair meets (both sides
  // call the same method, so both exchange).
  const RemoteBuffer& remoteOf(int peer) {
    if (const auto found = remotes_.find(peer); found != remotes_.end()) return *found->second;
    const std::vector<char>& mine = registered_.description();
    int lengths[2] = {static_cast<int>(mine.size()), 0};
    FM_MPI(MPI_Sendrecv(&lengths[0], 1, MPI_INT, peer, mpi::kTagSync, &lengths[1], 1, MPI_INT, peer, mpi::kTagSync,
                        comm_, MPI_STATUS_IGNORE));
    std::vector<char> theirs(static_cast<std::size_t>(lengths[1]));
    FM_MPI(MPI_Sendrecv(mine.data(), lengths[0], MPI_BYTE, peer, mpi::kTagSync, theirs.data(), lengths[1], MPI_BYTE,
                        peer, mpi::kTagSync, comm_, MPI_STATUS_IGNORE));
    auto& slot = remotes_[peer];
    slot = std::make_unique<RemoteBuffer>(ucp_.endpoint(peer), theirs);
    return *slot;
  }

  ucs_status_ptr_t put(int peer, const RemoteBuffer& remote, std::size_t bytes) {
    const ucp_request_param_t param = paramFor(false);
    return ucp_put_nbx(ucp_.endpoint(peer), send_, bytes, remote.address(), remote.key(), &param);
  }

  void flush(int peer) {
    ucp_request_param_t param{};
    ucp_.wait(ucp_ep_flush_nbx(ucp_.endpoint(peer), &param), "flush");
  }

  // One iteration: the window's writes, complete here. After the warm-up's last window and the
  // timed loop's, the writes are flushed (complete at the peer) and the writer tells the peer,
  // which waits for it, progressing UCX; both ways, each side tells the other. Neither leaves for
  // the handshake in MPI while the other's flush may still need its progress.
  void window(int peer, const RemoteBuffer& remote, bool send, bool receive, bool last) {
    if (send) {
      for (int w = 0; w < spec_.window; ++w) requests_.push_back(put(peer, remote, spec_.bytes));
      ucp_.waitAll(requests_, "write");
    }
    if (!last) return;
    if (send) flush(peer);
    if (send != receive) {
      acknowledge(peer, receive);
      return;
    }
    requests_.push_back(receiveFrom(peer, theirAck_.data(), kAckBytes, TagKind::kAck, true));
    requests_.push_back(sendTo(peer, ack_.data(), kAckBytes, TagKind::kAck, true));
    ucp_.waitAll(requests_, "acknowledgement");
  }

  // The ping-pong's message: `bytes` whose last byte is the sequence number.
  void write(int peer, const RemoteBuffer& remote, std::size_t bytes, std::uint8_t sequence) {
    setByte(send_ + bytes - 1, sequence);
    ucp_.wait(put(peer, remote, bytes), "ping write");
  }

  void awaitMark(std::byte* mark, std::uint8_t sequence) {
    unsigned idle = 0;
    while (byteAt(mark) != sequence) ucp_.progress(idle);
  }

  // One byte of pair memory: an atomic access in host memory (the peer writes it), a copy in GPU
  // memory.
  std::uint8_t byteAt(std::byte* at) const {
    std::uint8_t value = 0;
    if (buffers_.copy != nullptr) {
      buffers_.copy(&value, at, 1);
      return value;
    }
    return std::atomic_ref<std::uint8_t>(*reinterpret_cast<std::uint8_t*>(at)).load(std::memory_order_acquire);
  }
  void setByte(std::byte* at, std::uint8_t value) const {
    if (buffers_.copy != nullptr) return buffers_.copy(at, &value, 1);
    std::atomic_ref<std::uint8_t>(*reinterpret_cast<std::uint8_t*>(at)).store(value, std::memory_order_release);
  }

  Registered registered_;
  std::map<int, std::unique_ptr<RemoteBuffer>> remotes_;
  std::array<char, kAckBytes> theirAck_{};
};

}  // namespace

std::unique_ptr<PairRunner> makePairRunner(Ucp& ucp, MPI_Comm world, const PairSpec& spec, const PairBuffers& buffers,
                                           PairApi api) {
  if (api == PairApi::kRma) return std::make_unique<RmaPairs>(ucp, world, spec, buffers);
  return std::make_unique<TagPairs>(ucp, world, spec, buffers);
}

}  // namespace fabricmap::worker::ucx
