// Pairwise streams over NCCL in OSU's shapes (osu_bw, osu_bibw, osu_latency; see worker/mpi/pairs.cpp)
// as far as NCCL allows, timed with CUDA events. NCCL has no requests to wait for on the host, so:
// - a window is one ncclGroupStart/End of `window` sends (or receives) of the same buffer;
// - one way, the receiver acknowledges each window with a 4-byte ncclSend after its group, and the
//   sender's ncclRecv of it follows its own group: the next window's sends queue behind that
//   acknowledgement on the stream, as osu_bw's next MPI_Isend waits for it on the host. The wait is
//   stream order on the GPU, not a host round trip per window (the host only enqueues).
// - both ways, each side's group holds the window's receives and sends, with no acknowledgement;
// - latency: ncclSend/ncclRecv round trips after osu_latency's untimed ones.
#include "worker/nccl/pairs.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "core/pattern_for.h"
#include "core/stats.h"
#include "kernels/patterns.h"
#include "worker/mpi_check.h"
#include "worker/nccl/device.h"

namespace fabricmap::worker::nccl {
namespace {

constexpr std::size_t kAckBytes = 4;  // osu_bw's acknowledgement

class NcclPairs final : public PairRunner {
 public:
  NcclPairs(MPI_Comm world, ncclComm_t comm, cudaStream_t stream, const PairSpec& spec, std::byte* send,
            std::byte* receive, double timeoutSeconds)
      : world_(world), comm_(comm), stream_(stream), spec_(spec), send_(send), recv_(receive),
        timeout_(timeoutSeconds) {
    FM_CHECK_CUDA(cudaEventCreate(&start_));
    FM_CHECK_CUDA(cudaEventCreate(&end_));
    iterationEnds_.resize(static_cast<std::size_t>(std::max(spec_.iters, 0)), nullptr);
    for (cudaEvent_t& e : iterationEnds_) FM_CHECK_CUDA(cudaEventCreate(&e));
  }
  NcclPairs(const NcclPairs&) = delete;
  NcclPairs& operator=(const NcclPairs&) = delete;
  ~NcclPairs() override {
    cudaEventDestroy(start_);
    cudaEventDestroy(end_);
    for (cudaEvent_t e : iterationEnds_) cudaEventDestroy(e);
  }

  Timing stream(int peer, bool send, bool receive) override {
    for (int i = 0; i < spec_.warmup; ++i) window(peer, send, receive);
    wait(peer, "warm-up");
    sync(peer);
    FM_CHECK_CUDA(cudaEventRecord(start_, stream_));
    for (cudaEvent_t iterationEnd : iterationEnds_) {
      window(peer, send, receive);
      FM_CHECK_CUDA(cudaEventRecord(iterationEnd, stream_));
    }
    wait(peer, "stream");
    std::vector<double> iterations;
    cudaEvent_t previous = start_;
    for (cudaEvent_t iterationEnd : iterationEnds_) {
      iterations.push_back(elapsedSeconds(previous, iterationEnd));
      previous = iterationEnd;
    }
    // the last iteration ended with the last acknowledgement: the sender's time covers delivery
    return {elapsedSeconds(start_, iterationEnds_.empty() ? start_ : iterationEnds_.back()),
            core::summarize(std::move(iterations)).cv, spec_.iters};
  }

  double pingPong(int peer, bool initiator) override {
    // osu_latency's untimed round trips: 100 up to 8 KiB, 10 above
    const int warmup = spec_.latencyBytes > 8192 ? 10 : 100;
    for (int i = 0; i < warmup; ++i) trip(peer, initiator);
    wait(peer, "ping-pong warm-up");
    sync(peer);
    FM_CHECK_CUDA(cudaEventRecord(start_, stream_));
    for (int i = 0; i < spec_.latencyIters; ++i) trip(peer, initiator);
    FM_CHECK_CUDA(cudaEventRecord(end_, stream_));
    wait(peer, "ping-pong");
    return elapsedSeconds(start_, end_) / (2.0 * std::max(spec_.latencyIters, 1));
  }

  std::uint64_t checkedTransfer(int peer, bool sender) override {
    const core::Pattern pattern =
        core::patternFor(core::Op::kSendRecv, core::RedOp::kSum, core::DType::kUint32, 2, spec_.seed);
    const std::uint64_t elems = spec_.bytes / sizeof(std::uint32_t);
    if (sender) {
      FM_CHECK_CUDA(kernels::fillInput(core::DType::kUint32, send_, elems, pattern, 0, stream_));
      FM_CHECK_NCCL(ncclSend(send_, elems, ncclUint32, peer, comm_, stream_));
      wait(peer, "checked transfer");
      return 0;
    }
    FM_CHECK_CUDA(kernels::fillValue(core::DType::kUint32, recv_, elems, pattern.poison(), stream_));
    FM_CHECK_NCCL(ncclRecv(recv_, elems, ncclUint32, peer, comm_, stream_));
    wait(peer, "checked transfer");
    const kernels::DeviceCheck check{core::SourceRule::kFromPreviousRank, pattern, 1, 2, 0, elems};
    cudaError_t error = cudaSuccess;
    const std::uint64_t wrong = kernels::countWrong(core::DType::kUint32, recv_, elems, check, stream_, error);
    FM_CHECK_CUDA(error);
    return wrong;
  }

 private:
  // Host-side handshake, so both sides start their timed work together.
  void sync(int peer) {
    FM_MPI(MPI_Sendrecv(nullptr, 0, MPI_BYTE, peer, 0x72, nullptr, 0, MPI_BYTE, peer, 0x72, world_,
                 MPI_STATUS_IGNORE));
  }

  void wait(int peer, const char* what) {
    waitStream(stream_, comm_, timeout_, fmt::format("pairwise {} with rank {}", what, peer));
  }

  // One iteration: the window as one group; one way, then the receiver's acknowledgement.
  void window(int peer, bool send, bool receive) {
    FM_CHECK_NCCL(ncclGroupStart());
    for (int w = 0; w < spec_.window; ++w) {
      if (receive) FM_CHECK_NCCL(ncclRecv(recv_, spec_.bytes, ncclUint8, peer, comm_, stream_));
      if (send) FM_CHECK_NCCL(ncclSend(send_, spec_.bytes, ncclUint8, peer, comm_, stream_));
    }
    FM_CHECK_NCCL(ncclGroupEnd());
    if (send == receive) return;
    // the acknowledgement travels in the data buffers' first bytes, which the stream no longer
    // needs once the window is done (stream order), as osu_bw's lands in its receive buffer; the
    // buffers hold at least max(bytes, latencyBytes)
    const std::size_t ack = std::min<std::uint64_t>(kAckBytes, std::max(spec_.bytes, spec_.latencyBytes));
    FM_CHECK_NCCL(send ? ncclRecv(recv_, ack, ncclUint8, peer, comm_, stream_)
                       : ncclSend(send_, ack, ncclUint8, peer, comm_, stream_));
  }

  void trip(int peer, bool initiator) {
    const std::size_t bytes = spec_.latencyBytes;
    if (initiator) {
      FM_CHECK_NCCL(ncclSend(send_, bytes, ncclUint8, peer, comm_, stream_));
      FM_CHECK_NCCL(ncclRecv(recv_, bytes, ncclUint8, peer, comm_, stream_));
    } else {
      FM_CHECK_NCCL(ncclRecv(recv_, bytes, ncclUint8, peer, comm_, stream_));
      FM_CHECK_NCCL(ncclSend(send_, bytes, ncclUint8, peer, comm_, stream_));
    }
  }

  MPI_Comm world_;
  ncclComm_t comm_;
  cudaStream_t stream_;
  PairSpec spec_;
  std::byte* send_;
  std::byte* recv_;
  double timeout_;
  cudaEvent_t start_ = nullptr;
  cudaEvent_t end_ = nullptr;
  std::vector<cudaEvent_t> iterationEnds_;  // one per timed iteration: how steady the stream was
};

}  // namespace

std::unique_ptr<PairRunner> makePairRunner(MPI_Comm world, ncclComm_t comm, cudaStream_t stream,
                                           const PairSpec& spec, std::byte* send, std::byte* receive,
                                           double timeoutSeconds) {
  return std::make_unique<NcclPairs>(world, comm, stream, spec, send, receive, timeoutSeconds);
}

}  // namespace fabricmap::worker::nccl
