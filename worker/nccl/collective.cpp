// The NCCL calls behind each op of the table, out-of-place and in-place, timed with CUDA events.
//
// In-place layouts follow NCCL: all_gather's input is this rank's block of the output buffer;
// reduce_scatter reads the whole output buffer and leaves its result in this rank's block of it;
// all_reduce, broadcast and reduce use one buffer. alltoall is ncclAlltoAll where the library has
// it (NCCL 2.28 and later), else grouped sends and receives; sendrecv is a grouped send and
// receive: as nccl-tests 2.19 does both. Neither has an in-place form (the backend waives it).
// Timing: an event before the batch and one after each op on the stream; op i completed on this
// rank at (event i+1 - event 0), the figure the executor turns into per-iteration times; then a
// second batch with no event between its ops gives the mean, as nccl-tests times it. In
// CUDA-graph mode the batch (ops and their events, as external event nodes) is captured, built
// and uploaded before the clock starts, then launched once: what remains is the GPU's time
// without the host's per-launch cost.
#include "worker/nccl/collective.h"

#include <fmt/format.h>

#include <vector>

#include "kernels/patterns.h"
#include "worker/mpi_check.h"
#include "worker/nccl/device.h"

#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 28, 0)
#pragma weak ncclAlltoAll  // null at run time under an older libnccl.so.2 than the headers
#endif

namespace fabricmap::worker::nccl {
namespace {

// ncclAlltoAll is there to call: built against 2.28+ headers and running on a 2.28+ library.
bool libraryHasAllToAll() {
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 28, 0)
  static const bool has = [] {
    int version = 0;
    return &ncclAlltoAll != nullptr && ncclGetVersion(&version) == ncclSuccess && version >= NCCL_VERSION(2, 28, 0);
  }();
  return has;
#else
  return false;
#endif
}

void enqueueAllToAll(const std::byte* send, std::byte* recv, std::size_t count, ncclDataType_t type,
                     std::size_t block, int n, ncclComm_t comm, cudaStream_t stream) {
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 28, 0)
  if (libraryHasAllToAll()) {
    FM_CHECK_NCCL(ncclAlltoAll(send, recv, count, type, comm, stream));
    return;
  }
#endif
  FM_CHECK_NCCL(ncclGroupStart());
  for (int peer = 0; peer < n; ++peer) {
    const std::size_t offset = static_cast<std::size_t>(peer) * block;
    FM_CHECK_NCCL(ncclSend(send + offset, count, type, peer, comm, stream));
    FM_CHECK_NCCL(ncclRecv(recv + offset, count, type, peer, comm, stream));
  }
  FM_CHECK_NCCL(ncclGroupEnd());
}

class NcclCollective final : public CollectiveRunner {
 public:
  NcclCollective(MPI_Comm group, ncclComm_t comm, cudaStream_t stream, const CollectiveSpec& spec,
                 std::byte* input, std::byte* output, double timeoutSeconds, bool cudaGraph)
      : comm_(comm), stream_(stream), spec_(spec), in_(input), out_(output), timeout_(timeoutSeconds),
        graph_(cudaGraph), op_(ncclOp(spec.redop)) {
    FM_MPI(MPI_Comm_rank(group, &rank_));
    FM_MPI(MPI_Comm_size(group, &n_));
    ts_ = core::traits(spec.dtype).size;
    what_ = fmt::format("{} of {} B on {} ranks", core::traits(spec.op).name, spec.shape.bytes, n_);
  }

  void fill() override {
    const auto& s = spec_.shape;
    FM_CHECK_CUDA(kernels::fillValue(spec_.dtype, out_, std::max(s.outputElems, spec_.inPlace ? s.inputElems : 0),
                                     spec_.pattern.poison(), stream_));
    FM_CHECK_CUDA(kernels::fillInput(spec_.dtype, inputBuffer(), s.inputElems, spec_.pattern, rank_, stream_));
    waitStream(stream_, comm_, timeout_, "filling buffers for " + what_);
  }

  void runOnce() override {
    launch();
    waitStream(stream_, comm_, timeout_, what_);
  }

  std::vector<double> timeIterations(int iters) override {
    std::vector<cudaEvent_t> events(static_cast<std::size_t>(iters) + 1);
    for (auto& e : events) FM_CHECK_CUDA(cudaEventCreate(&e));
    if (graph_) {
      launchGraph(iters, events[0], events.data() + 1);
    } else {
      FM_CHECK_CUDA(cudaEventRecord(events[0], stream_));
      for (int i = 0; i < iters; ++i) {
        launch();
        FM_CHECK_CUDA(cudaEventRecord(events[static_cast<std::size_t>(i) + 1], stream_));
      }
    }
    waitStream(stream_, comm_, timeout_, fmt::format("{} x {}", iters, what_));
    std::vector<double> done(static_cast<std::size_t>(iters));
    for (int i = 0; i < iters; ++i) {
      done[static_cast<std::size_t>(i)] = elapsedSeconds(events[0], events[static_cast<std::size_t>(i) + 1]);
    }
    for (auto& e : events) cudaEventDestroy(e);
    return done;
  }

  // nccl-tests' timing: the ops back to back with nothing between them, an event before and one
  // after. (An event after each op, as timeIterations records, keeps NCCL's consecutive kernels
  // from overlapping: on an H200 all_reduce read 0.977x nccl-tests at 64 MiB with them, and a
  // 1 KiB op in CUDA-graph mode 3.8 us against 1.0.)
  double timeBatch(int iters) override {
    cudaEvent_t start = nullptr;
    cudaEvent_t end = nullptr;
    FM_CHECK_CUDA(cudaEventCreate(&start));
    FM_CHECK_CUDA(cudaEventCreate(&end));
    if (graph_) {
      launchGraph(iters, start, nullptr);
    } else {
      FM_CHECK_CUDA(cudaEventRecord(start, stream_));
      for (int i = 0; i < iters; ++i) launch();
    }
    FM_CHECK_CUDA(cudaEventRecord(end, stream_));
    waitStream(stream_, comm_, timeout_, fmt::format("{} x {}", iters, what_));
    const double seconds = elapsedSeconds(start, end);
    cudaEventDestroy(start);
    cudaEventDestroy(end);
    return seconds;
  }

  // Captures `iters` ops, each followed by its entry of `afterEach` when given, then starts the
  // graph behind `start`.
  void launchGraph(int iters, cudaEvent_t start, const cudaEvent_t* afterEach) {
    cudaGraph_t graph = nullptr;
    FM_CHECK_CUDA(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal));
    for (int i = 0; i < iters; ++i) {
      launch();
      if (afterEach != nullptr) FM_CHECK_CUDA(cudaEventRecordWithFlags(afterEach[i], stream_, cudaEventRecordExternal));
    }
    FM_CHECK_CUDA(cudaStreamEndCapture(stream_, &graph));
    cudaGraphExec_t exec = nullptr;
    const cudaError_t built = cudaGraphInstantiate(&exec, graph, 0);
    cudaGraphDestroy(graph);
    FM_CHECK_CUDA(built);
    try {
      FM_CHECK_CUDA(cudaGraphUpload(exec, stream_));
      FM_CHECK_CUDA(cudaEventRecord(start, stream_));
      FM_CHECK_CUDA(cudaGraphLaunch(exec, stream_));
    } catch (...) {
      cudaGraphExecDestroy(exec);
      throw;
    }
    // destroying a launched graph is deferred by CUDA until its work is done
    cudaGraphExecDestroy(exec);
  }

  std::uint64_t countWrong() override {
    if (!core::traits(spec_.op).hasOutput(rank_, spec_.root)) return 0;
    const kernels::DeviceCheck check{core::traits(spec_.op).source, spec_.pattern, rank_, n_, spec_.root,
                                     spec_.shape.block};
    cudaError_t error = cudaSuccess;
    const std::uint64_t wrong = kernels::countWrong(spec_.dtype, outputBuffer(), outputElems(), check, stream_, error);
    FM_CHECK_CUDA(error);
    return wrong;
  }

  void corruptOutput(std::uint64_t element) override {
    if (outputElems() == 0) return;
    FM_CHECK_CUDA(kernels::corruptElement(spec_.dtype, outputBuffer() + (element % outputElems()) * ts_,
                                          spec_.pattern, stream_));
    waitStream(stream_, comm_, timeout_, "corrupting an element");
  }

 private:
  std::byte* block(std::byte* base, int index) const {
    return base + static_cast<std::size_t>(index) * spec_.shape.block * ts_;
  }

  std::byte* inputBuffer() const {
    if (!spec_.inPlace) return in_;
    return spec_.op == core::Op::kAllGather ? block(out_, rank_) : out_;
  }

  std::byte* outputBuffer() const {
    return spec_.inPlace && spec_.op == core::Op::kReduceScatter ? block(out_, rank_) : out_;
  }

  std::uint64_t outputElems() const {
    return spec_.op == core::Op::kReduceScatter ? spec_.shape.block : spec_.shape.outputElems;
  }

  void launch() {
    enqueueOp(spec_.op, inputBuffer(), outputBuffer(), spec_.shape.block, spec_.dtype, op_, spec_.root, rank_, n_, comm_,
              stream_);
  }

  ncclComm_t comm_;
  cudaStream_t stream_;
  CollectiveSpec spec_;
  std::byte* in_;
  std::byte* out_;
  double timeout_;
  bool graph_;
  ncclRedOp_t op_;
  int rank_ = 0;
  int n_ = 1;
  std::size_t ts_ = 1;
  std::string what_;
};

}  // namespace

void enqueueOp(core::Op op, const std::byte* send, std::byte* recv, std::size_t count, core::DType dtype,
               ncclRedOp_t redop, int root, int rank, int n, ncclComm_t comm, cudaStream_t stream) {
  const ncclDataType_t type = ncclType(dtype);
  const std::size_t block = count * core::traits(dtype).size;
  switch (op) {
    case core::Op::kAllReduce:
      FM_CHECK_NCCL(ncclAllReduce(send, recv, count, type, redop, comm, stream));
      break;
    case core::Op::kAllGather:
      FM_CHECK_NCCL(ncclAllGather(send, recv, count, type, comm, stream));
      break;
    case core::Op::kReduceScatter:
      FM_CHECK_NCCL(ncclReduceScatter(send, recv, count, type, redop, comm, stream));
      break;
    case core::Op::kBroadcast:
      FM_CHECK_NCCL(ncclBroadcast(send, recv, count, type, root, comm, stream));
      break;
    case core::Op::kReduce:
      FM_CHECK_NCCL(ncclReduce(send, recv, count, type, redop, root, comm, stream));
      break;
    case core::Op::kAllToAll:
      enqueueAllToAll(send, recv, count, type, block, n, comm, stream);
      break;
    case core::Op::kSendRecv:
      FM_CHECK_NCCL(ncclGroupStart());
      FM_CHECK_NCCL(ncclSend(send, count, type, (rank + 1) % n, comm, stream));
      FM_CHECK_NCCL(ncclRecv(recv, count, type, (rank - 1 + n) % n, comm, stream));
      FM_CHECK_NCCL(ncclGroupEnd());
      break;
  }
}

std::unique_ptr<CollectiveRunner> makeCollective(MPI_Comm group, ncclComm_t comm, cudaStream_t stream,
                                                 const CollectiveSpec& spec, std::byte* input,
                                                 std::byte* output, double timeoutSeconds, bool cudaGraph) {
  return std::make_unique<NcclCollective>(group, comm, stream, spec, input, output, timeoutSeconds, cudaGraph);
}

}  // namespace fabricmap::worker::nccl
