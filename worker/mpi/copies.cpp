// Host-memory copies between two ranks (see copies.h). Each rank allocates its source and
// destination in a shared window (its own pages, first touched by itself, so they sit on its NUMA
// node) and maps the peer's; a copy is a memcpy by the active rank, timed with the host clock from
// a common start.
#include "worker/mpi/copies.h"

#include <cstring>
#include <exception>

#include "core/error.h"
#include "core/pattern_for.h"
#include "worker/comm.h"
#include "worker/host_check.h"
#include "worker/mpi_check.h"

namespace fabricmap::worker::mpi {
namespace {

class HostCopies final : public CopyRunner {
 public:
  HostCopies(MPI_Comm pair, const CopySpec& spec) : comm_(pair), spec_(spec) {
    FM_MPI(MPI_Comm_rank(comm_, &rank_));
    MPI_Info info = MPI_INFO_NULL;
    FM_MPI(MPI_Info_create(&info));
    FM_MPI(MPI_Info_set(info, "alloc_shared_noncontig", "true"));
    std::byte* mine = nullptr;
    const auto bytes = static_cast<MPI_Aint>(2 * spec_.bytes);
    const int rc = MPI_Win_allocate_shared(bytes, 1, info, comm_, &mine, &win_);
    FM_MPI(MPI_Info_free(&info));
    if (rc != MPI_SUCCESS) throw FM_FAULT("MPI_Win_allocate_shared failed for a host copy pair");
    std::memset(mine, 0, 2 * spec_.bytes);  // first touch: the pages land on this rank's NUMA node
    MPI_Aint size = 0;
    int unit = 1;
    std::byte* theirs = nullptr;
    FM_MPI(MPI_Win_shared_query(win_, 1 - rank_, &size, &unit, &theirs));
    FM_MPI(MPI_Win_lock_all(MPI_MODE_NOCHECK, win_));  // a passive epoch, for MPI_Win_sync below
    src_ = mine;
    dst_ = mine + spec_.bytes;
    peerSrc_ = theirs;
    peerDst_ = theirs + spec_.bytes;
    FM_MPI(MPI_Barrier(comm_));
  }
  HostCopies(const HostCopies&) = delete;
  HostCopies& operator=(const HostCopies&) = delete;
  ~HostCopies() override {
    // while an exception unwinds the job is about to be aborted: no collective call then
    if (win_ == MPI_WIN_NULL || std::uncaught_exceptions() > 0) return;
    MPI_Win_unlock_all(win_);
    MPI_Win_free(&win_);
  }

  std::string path() const override { return "shared_memory"; }
  bool supports(core::CopyMethod method) const override { return method == core::CopyMethod::kHost; }
  bool canRead() const override { return true; }

  double transfer(core::CopyMethod, bool active, bool write) override {
    for (int i = 0; active && i < spec_.warmup; ++i) copy(write, spec_.bytes);
    FM_MPI(MPI_Barrier(comm_));  // both busy or about to be: a plain barrier starts them closest together
    double seconds = 0;
    if (active) {
      const double start = MPI_Wtime();
      for (int i = 0; i < spec_.iters; ++i) copy(write, spec_.bytes);
      seconds = MPI_Wtime() - start;
    }
    sleepingBarrier(comm_);  // an idle rank sleeps while the other copies
    return seconds;
  }

  std::uint64_t checkedCopy(core::CopyMethod, bool source, bool write) override {
    // the two ranks as a sendrecv ring of 2: the destination's element j must be the source's
    const core::Pattern pattern =
        core::patternFor(core::Op::kSendRecv, core::RedOp::kSum, core::DType::kUint32, 2, spec_.seed);
    const std::uint64_t elems = spec_.bytes / sizeof(std::uint32_t);
    if (source) fillInput(core::DType::kUint32, src_, elems, pattern, 0);
    if (!source) fillValue(core::DType::kUint32, dst_, elems, pattern.poison());
    settle();
    if (source == write) copy(write, elems * sizeof(std::uint32_t));
    settle();
    if (source) return 0;
    const OutputCheck check{&core::traits(core::Op::kSendRecv), &pattern, 1, 2, 0, elems};
    return countWrong(core::DType::kUint32, dst_, elems, check);
  }

 private:
  // Both ranks' stores so far are visible to both (the shared-memory window's sync rule).
  void settle() {
    FM_MPI(MPI_Win_sync(win_));
    FM_MPI(MPI_Barrier(comm_));
    FM_MPI(MPI_Win_sync(win_));
  }

  // write: my source into the peer's destination; read: the peer's source into my destination
  void copy(bool write, std::size_t bytes) {
    if (write) {
      std::memcpy(peerDst_, src_, bytes);
    } else {
      std::memcpy(dst_, peerSrc_, bytes);
    }
  }

  MPI_Comm comm_;
  CopySpec spec_;
  int rank_ = 0;
  MPI_Win win_ = MPI_WIN_NULL;
  std::byte* src_ = nullptr;
  std::byte* dst_ = nullptr;
  std::byte* peerSrc_ = nullptr;
  std::byte* peerDst_ = nullptr;
};

}  // namespace

std::unique_ptr<CopyRunner> makeCopyRunner(MPI_Comm pair, const CopySpec& spec) {
  if (!sharesMemory(pair)) return nullptr;
  return std::make_unique<HostCopies>(pair, spec);
}

}  // namespace fabricmap::worker::mpi
