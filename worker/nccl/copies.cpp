// GPU-pair copies (see copies.h).
//
// Each rank owns a source and a destination buffer on its GPU and exports both with CUDA IPC.
// Where the two GPUs can map each other's memory (peer access), the peer's buffers are opened
// here and a copy is one cudaMemcpyAsync (copy engines; with unified addressing this is the
// transfer cudaMemcpyPeerAsync makes, without needing the peer's device number, which
// CUDA_VISIBLE_DEVICES may hide) or one SM copy kernel. "write": the source GPU pushes into the
// peer; "read": the destination GPU pulls from it.
//
// Every timed phase starts at once on both GPUs: each queues a start-gate kernel, then its
// events and copies; once both have queued, rank 0 of the pair opens the gate (a flag in host
// memory both ranks map), so a bidirectional phase really overlaps its two directions.
//
// Without peer access the data goes through a pinned host buffer shared by the two ranks: the
// source copies chunks device-to-host into slots, the destination host-to-device out of them,
// pipelined with counters in shared memory. Only writes are measured that way (a "read" through
// the host is the same transfer).
#include "worker/nccl/copies.h"

#include <cuda_runtime_api.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <exception>
#include <string>
#include <thread>

#include <fmt/format.h>

#include "core/pattern_for.h"
#include "kernels/copy.h"
#include "kernels/patterns.h"
#include "worker/comm.h"
#include "worker/mpi_check.h"
#include "worker/nccl/device.h"

namespace fabricmap::worker::nccl {
namespace {

constexpr std::size_t kPage = 4096;
constexpr std::size_t kChunk = 4u << 20;  // host-staged copies move 4 MiB at a time
constexpr int kSlots = 4;                 // staging slots per direction

// The start of the shared host segment: the gate flag and the staging counters per direction.
struct Control {
  int gate;
  int pad[15];
  std::uint64_t produced[2];  // chunks the source of direction d has placed in its slots
  std::uint64_t consumed[2];  // chunks the destination of direction d has taken out
};
static_assert(sizeof(Control) <= kPage);

template <class T>
std::atomic_ref<T> shared(T& value) {
  return std::atomic_ref<T>(value);
}

struct Exported {
  cudaIpcMemHandle_t src;
  cudaIpcMemHandle_t dst;
  char busId[32];
};

class GpuCopies final : public CopyRunner {
 public:
  GpuCopies(MPI_Comm pair, const CopySpec& spec, int device, double timeoutSeconds)
      : comm_(pair), spec_(spec), device_(device), timeout_(timeoutSeconds) {
    FM_MPI(MPI_Comm_rank(comm_, &rank_));
    src_.reserve(spec_.bytes);
    dst_.reserve(spec_.bytes);
    mapHostSegment();
    openPeer();
    FM_CHECK_CUDA(cudaEventCreate(&start_));
    FM_CHECK_CUDA(cudaEventCreate(&end_));
  }
  GpuCopies(const GpuCopies&) = delete;
  GpuCopies& operator=(const GpuCopies&) = delete;

  ~GpuCopies() override {
    if (start_ != nullptr) cudaEventDestroy(start_);
    if (end_ != nullptr) cudaEventDestroy(end_);
    if (peerSrc_ != nullptr) cudaIpcCloseMemHandle(peerSrc_);
    if (peerDst_ != nullptr) cudaIpcCloseMemHandle(peerDst_);
    if (registered_) cudaHostUnregister(segment_);
    // while an exception unwinds the job is about to be aborted: no collective call then
    if (std::uncaught_exceptions() > 0) return;
    // both sides have closed the other's buffers before either frees its own (after this body)
    MPI_Barrier(comm_);
    if (win_ != MPI_WIN_NULL) MPI_Win_free(&win_);
  }

  std::string path() const override { return peer_ ? "peer" : "host_staged"; }
  bool supports(core::CopyMethod method) const override {
    return method == core::CopyMethod::kCopyEngine || (peer_ && method == core::CopyMethod::kKernel);
  }
  bool canRead() const override { return peer_; }

  double transfer(core::CopyMethod method, bool active, bool write) override {
    if (!peer_) return staged(active, spec_.bytes, spec_.iters, spec_.warmup);
    if (active) {
      for (int i = 0; i < spec_.warmup; ++i) copy(method, write, spec_.bytes, stream_.get());
      wait(stream_.get(), "copy warm-up");
    }
    FM_MPI(MPI_Barrier(comm_));  // the previous phase is over everywhere: close the gate
    if (rank_ == 0) shared(control_->gate).store(0, std::memory_order_release);
    FM_MPI(MPI_Barrier(comm_));
    if (active) {
      FM_CHECK_CUDA(kernels::startGate(deviceGate_, stream_.get()));
      FM_CHECK_CUDA(cudaEventRecord(start_, stream_.get()));
      for (int i = 0; i < spec_.iters; ++i) copy(method, write, spec_.bytes, stream_.get());
      FM_CHECK_CUDA(cudaEventRecord(end_, stream_.get()));
    }
    FM_MPI(MPI_Barrier(comm_));  // everything is queued: open the gate
    if (rank_ == 0) shared(control_->gate).store(1, std::memory_order_release);
    double seconds = 0;
    if (active) {
      wait(stream_.get(), "timed copies");
      seconds = elapsedSeconds(start_, end_);
    }
    sleepingBarrier(comm_);  // an idle rank sleeps while the other copies
    return seconds;
  }

  std::uint64_t checkedCopy(core::CopyMethod method, bool source, bool write) override {
    // the two ranks as a sendrecv ring of 2: the destination's element j must be the source's
    const core::Pattern pattern =
        core::patternFor(core::Op::kSendRecv, core::RedOp::kSum, core::DType::kUint32, 2, spec_.seed);
    const std::uint64_t elems = spec_.bytes / sizeof(std::uint32_t);
    cudaStream_t s = stream_.get();
    if (source) {
      FM_CHECK_CUDA(kernels::fillInput(core::DType::kUint32, src_.data(), elems, pattern, 0, s));
    } else {
      FM_CHECK_CUDA(kernels::fillValue(core::DType::kUint32, dst_.data(), elems, pattern.poison(), s));
    }
    wait(s, "filling copy buffers");
    FM_MPI(MPI_Barrier(comm_));
    if (peer_) {
      if (source == write) {
        copy(method, write, elems * sizeof(std::uint32_t), s);
        wait(s, "checked copy");
      }
    } else {
      staged(source, elems * sizeof(std::uint32_t), 1, 0);
    }
    FM_MPI(MPI_Barrier(comm_));
    if (source) return 0;
    const kernels::DeviceCheck check{core::SourceRule::kFromPreviousRank, pattern, 1, 2, 0, elems};
    cudaError_t error = cudaSuccess;
    const std::uint64_t wrong = kernels::countWrong(core::DType::kUint32, dst_.data(), elems, check, s, error);
    FM_CHECK_CUDA(error);
    return wrong;
  }

 private:
  // One shared host segment for the pair, allocated by rank 0 of the pair and mapped into both
  // processes and both GPUs: the control block, then the staging slots of both directions.
  void mapHostSegment() {
    slotBytes_ = std::min<std::size_t>(kChunk, std::max<std::size_t>(spec_.bytes, kPage));
    const std::size_t staging = 2 * kSlots * slotBytes_;
    segmentBytes_ = kPage + staging;
    std::byte* base = nullptr;
    const auto mine = static_cast<MPI_Aint>(rank_ == 0 ? segmentBytes_ + kPage : 0);
    if (MPI_Win_allocate_shared(mine, 1, MPI_INFO_NULL, comm_, &base, &win_) != MPI_SUCCESS) {
      throw FM_FAULT("MPI_Win_allocate_shared failed for a GPU copy pair");
    }
    MPI_Aint size = 0;
    int unit = 1;
    FM_MPI(MPI_Win_shared_query(win_, 0, &size, &unit, &base));
    // page-aligned for cudaHostRegister
    const auto address = reinterpret_cast<std::uintptr_t>(base);
    segment_ = reinterpret_cast<std::byte*>((address + kPage - 1) / kPage * kPage);
    if (rank_ == 0) std::memset(segment_, 0, segmentBytes_);
    FM_MPI(MPI_Barrier(comm_));
    FM_CHECK_CUDA(cudaHostRegister(segment_, segmentBytes_, cudaHostRegisterMapped | cudaHostRegisterPortable));
    registered_ = true;
    control_ = reinterpret_cast<Control*>(segment_);
    void* gate = nullptr;
    FM_CHECK_CUDA(cudaHostGetDevicePointer(&gate, &control_->gate, 0));
    deviceGate_ = static_cast<volatile int*>(gate);
  }

  // Exchanges IPC handles and opens the peer's buffers where the GPUs can map each other's
  // memory; both ranks settle on the same path.
  void openPeer() {
    Exported mine{};
    Exported theirs{};
    FM_CHECK_CUDA(cudaIpcGetMemHandle(&mine.src, src_.data()));
    FM_CHECK_CUDA(cudaIpcGetMemHandle(&mine.dst, dst_.data()));
    FM_CHECK_CUDA(cudaDeviceGetPCIBusId(mine.busId, sizeof mine.busId, device_));
    FM_MPI(MPI_Sendrecv(&mine, sizeof mine, MPI_BYTE, 1 - rank_, 0x75, &theirs, sizeof theirs, MPI_BYTE, 1 - rank_,
                 0x75, comm_, MPI_STATUS_IGNORE));
    theirs.busId[sizeof theirs.busId - 1] = '\0';
    // A peer GPU this process can see must report peer access; one it cannot see (another
    // CUDA_VISIBLE_DEVICES) is tried through IPC, which fails where no mapping is possible.
    int possible = 1;
    int other = -1;
    if (cudaDeviceGetByPCIBusId(&other, theirs.busId) == cudaSuccess && other != device_) {
      FM_CHECK_CUDA(cudaDeviceCanAccessPeer(&possible, device_, other));
    }
    cudaGetLastError();  // a bus id this process cannot see leaves an error behind
    int opened = 0;
    if (possible) {
      void* p = nullptr;
      if (cudaIpcOpenMemHandle(&p, theirs.src, cudaIpcMemLazyEnablePeerAccess) == cudaSuccess) {
        peerSrc_ = static_cast<std::byte*>(p);
        if (cudaIpcOpenMemHandle(&p, theirs.dst, cudaIpcMemLazyEnablePeerAccess) == cudaSuccess) {
          peerDst_ = static_cast<std::byte*>(p);
          opened = 1;
        }
      }
      cudaGetLastError();
    }
    int both = 0;
    FM_MPI(MPI_Allreduce(&opened, &both, 1, MPI_INT, MPI_MIN, comm_));
    peer_ = both == 1;
    if (!peer_) {
      if (peerSrc_ != nullptr) cudaIpcCloseMemHandle(peerSrc_);
      if (peerDst_ != nullptr) cudaIpcCloseMemHandle(peerDst_);
      peerSrc_ = nullptr;
      peerDst_ = nullptr;
    }
  }

  // write: my source into the peer's destination; read: the peer's source into my destination
  void copy(core::CopyMethod method, bool write, std::size_t bytes, cudaStream_t s) {
    std::byte* to = write ? peerDst_ : dst_.data();
    const std::byte* from = write ? src_.data() : peerSrc_;
    if (method == core::CopyMethod::kKernel) {
      FM_CHECK_CUDA(kernels::smCopy(to, from, bytes, 0, s));
    } else {
      FM_CHECK_CUDA(cudaMemcpyAsync(to, from, bytes, cudaMemcpyDeviceToDevice, s));
    }
  }

  // Through host memory: `iters` (after `warmup`) passes of `bytes` in each active direction,
  // direction d going from pair rank d to the other. Returns this rank's seconds from the common
  // start until the data it sends has arrived (0 when it sends nothing).
  double staged(bool active, std::size_t bytes, int iters, int warmup) {
    const int mine = active ? 1 : 0;
    int roles[2] = {0, 0};
    FM_MPI(MPI_Allgather(&mine, 1, MPI_INT, roles, 1, MPI_INT, comm_));
    const bool sending = roles[rank_] == 1;
    const bool receiving = roles[1 - rank_] == 1;
    const std::uint64_t perPass = (bytes + slotBytes_ - 1) / slotBytes_;
    if (warmup > 0) pump(sending, receiving, bytes, perPass * static_cast<std::uint64_t>(warmup));
    const double start = pump(sending, receiving, bytes, perPass * static_cast<std::uint64_t>(iters));
    const double seconds = sending ? MPI_Wtime() - start : 0.0;
    sleepingBarrier(comm_);
    return seconds;
  }

  // The staging pipeline: produce into my direction's slots, consume from the other's, until
  // `chunks` have gone each active way (and, as a source, until the peer has taken them all).
  // Both ranks start it together; returns when it started (MPI_Wtime, the worker's one clock).
  double pump(bool sending, bool receiving, std::size_t bytes, std::uint64_t chunks) {
    FM_MPI(MPI_Barrier(comm_));  // the previous pass is over everywhere: reset the counters
    if (rank_ == 0) {
      for (int d = 0; d < 2; ++d) {
        shared(control_->produced[d]).store(0);
        shared(control_->consumed[d]).store(0);
      }
    }
    FM_MPI(MPI_Barrier(comm_));
    const double start = MPI_Wtime();
    const auto waitFrom = std::chrono::steady_clock::now();
    const int out = rank_;
    const int in = 1 - rank_;
    std::byte* staging = segment_ + kPage;
    const auto slot = [&](int direction, std::uint64_t chunk) {
      return staging + (static_cast<std::size_t>(direction) * kSlots + chunk % kSlots) * slotBytes_;
    };
    const std::uint64_t perPass = (bytes + slotBytes_ - 1) / slotBytes_;
    const auto span = [&](std::uint64_t chunk) {
      const std::size_t offset = (chunk % perPass) * slotBytes_;
      return std::pair<std::size_t, std::size_t>(offset, std::min(slotBytes_, bytes - offset));
    };
    std::uint64_t produced = 0;
    std::uint64_t consumed = 0;
    bool producing = false;
    bool consuming = false;
    cudaStream_t up = stream_.get();
    cudaStream_t down = second_.get();
    const auto deadline = waitFrom + std::chrono::duration<double>(timeout_);
    while (true) {
      bool progress = false;
      if (sending) {
        if (producing && ready(up)) {
          shared(control_->produced[out]).store(++produced, std::memory_order_release);
          producing = false;
          progress = true;
        }
        if (!producing && produced < chunks &&
            produced - shared(control_->consumed[out]).load(std::memory_order_acquire) < kSlots) {
          const auto [offset, length] = span(produced);
          FM_CHECK_CUDA(cudaMemcpyAsync(slot(out, produced), src_.data() + offset, length, cudaMemcpyDeviceToHost, up));
          producing = true;
          progress = true;
        }
      }
      if (receiving) {
        if (consuming && ready(down)) {
          shared(control_->consumed[in]).store(++consumed, std::memory_order_release);
          consuming = false;
          progress = true;
        }
        if (!consuming && consumed < chunks &&
            consumed < shared(control_->produced[in]).load(std::memory_order_acquire)) {
          const auto [offset, length] = span(consumed);
          FM_CHECK_CUDA(cudaMemcpyAsync(dst_.data() + offset, slot(in, consumed), length, cudaMemcpyHostToDevice, down));
          consuming = true;
          progress = true;
        }
      }
      const bool sent = !sending || shared(control_->consumed[out]).load(std::memory_order_acquire) >= chunks;
      const bool received = !receiving || consumed >= chunks;
      if (sent && received) return start;
      if (!progress) {
        if (std::chrono::steady_clock::now() > deadline) {
          throw FM_FAULT(fmt::format("host-staged GPU copy made no progress within {:.0f} s", timeout_));
        }
        std::this_thread::yield();
      }
    }
  }

  // Whether the work queued on `s` is done; a CUDA error is a fault.
  static bool ready(cudaStream_t s) {
    const cudaError_t state = cudaStreamQuery(s);
    if (state == cudaSuccess) return true;
    if (state == cudaErrorNotReady) return false;
    throw FM_FAULT(std::string("CUDA error in a host-staged copy: ") + cudaGetErrorString(state));
  }

  void wait(cudaStream_t s, const char* what) {
    waitStream(s, nullptr, timeout_, fmt::format("GPU-pair {}", what));
  }

  MPI_Comm comm_;
  CopySpec spec_;
  int device_;
  double timeout_;
  int rank_ = 0;
  DeviceBuffer src_;
  DeviceBuffer dst_;
  Stream stream_;
  Stream second_;  // host-to-device side of the staging pipeline
  MPI_Win win_ = MPI_WIN_NULL;
  std::byte* segment_ = nullptr;
  std::size_t segmentBytes_ = 0;
  std::size_t slotBytes_ = 0;
  bool registered_ = false;
  Control* control_ = nullptr;
  volatile int* deviceGate_ = nullptr;
  bool peer_ = false;
  std::byte* peerSrc_ = nullptr;
  std::byte* peerDst_ = nullptr;
  cudaEvent_t start_ = nullptr;
  cudaEvent_t end_ = nullptr;
};

}  // namespace

std::unique_ptr<CopyRunner> makeCopyRunner(MPI_Comm pair, const CopySpec& spec, int device, double timeoutSeconds) {
  if (!sharesMemory(pair)) return nullptr;
  return std::make_unique<GpuCopies>(pair, spec, device, timeoutSeconds);
}

}  // namespace fabricmap::worker::nccl
