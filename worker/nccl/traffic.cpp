// Training-pattern traffic through NCCL (see traffic.h).
//
// Each type has its own stream, so the GPU runs the types' kernels side by side; within a type
// the messages follow each other on its stream. Every rank enqueues the types in the same order
// (tensor, pipeline, data, expert parallel), the order NCCL needs to run several communicators
// at once without deadlock. A type's time is between events around its messages on its stream.
#include "worker/nccl/traffic.h"

#include <algorithm>

#include <fmt/format.h>

#include "worker/mpi_check.h"
#include "worker/nccl/collective.h"
#include "worker/nccl/device.h"

namespace fabricmap::worker::nccl {
namespace {

class NcclTraffic final : public TrafficRunner {
 public:
  NcclTraffic(const std::vector<TrafficSpec>& specs, const std::vector<ncclComm_t>& comms, double timeoutSeconds)
      : timeout_(timeoutSeconds) {
    types_.reserve(specs.size());
    for (std::size_t i = 0; i < specs.size(); ++i) {
      auto t = std::make_unique<Type>();
      t->spec = specs[i];
      t->comm = comms.at(i);
      FM_MPI(MPI_Comm_rank(t->spec.group, &t->rank));
      FM_MPI(MPI_Comm_size(t->spec.group, &t->n));
      t->type = ncclType(t->spec.dtype);
      const std::size_t ts = core::traits(t->spec.dtype).size;
      std::size_t largest = 1;
      for (core::Op op : t->spec.ops) {
        const core::OpShape s = core::shapeOf(op, t->spec.bytes, ts, t->n);
        t->shapes.push_back(s);
        largest = std::max<std::size_t>({largest, s.inputElems * ts, s.outputElems * ts});
      }
      t->in.reserve(largest);
      t->out.reserve(largest);
      FM_CHECK_CUDA(cudaMemsetAsync(t->in.data(), 0, largest, t->stream.get()));
      FM_CHECK_CUDA(cudaEventCreate(&t->start));
      FM_CHECK_CUDA(cudaEventCreate(&t->end));
      types_.push_back(std::move(t));
    }
  }

  NcclTraffic(const NcclTraffic&) = delete;
  NcclTraffic& operator=(const NcclTraffic&) = delete;

  ~NcclTraffic() override {
    for (auto& t : types_) {
      cudaEventDestroy(t->start);
      cudaEventDestroy(t->end);
    }
  }

  std::vector<double> step(const std::vector<bool>& active) override {
    std::vector<double> seconds(types_.size(), 0.0);
    for (std::size_t i = 0; i < types_.size(); ++i) {
      if (i < active.size() && active[i]) enqueue(*types_[i]);
    }
    for (std::size_t i = 0; i < types_.size(); ++i) {
      if (i >= active.size() || !active[i]) continue;
      Type& t = *types_[i];
      waitStream(t.stream.get(), t.comm, timeout_,
                 fmt::format("training traffic: {} messages of {} B on {} ranks", t.spec.messages, t.spec.bytes, t.n));
      seconds[i] = elapsedSeconds(t.start, t.end);
    }
    return seconds;
  }

 private:
  struct Type {
    TrafficSpec spec;
    ncclComm_t comm = nullptr;
    int rank = 0;
    int n = 1;
    ncclDataType_t type = ncclFloat;
    std::vector<core::OpShape> shapes;
    Stream stream;
    DeviceBuffer in;
    DeviceBuffer out;
    cudaEvent_t start = nullptr;
    cudaEvent_t end = nullptr;
  };

  static void enqueue(Type& t) {
    cudaStream_t stream = t.stream.get();
    FM_CHECK_CUDA(cudaEventRecord(t.start, stream));
    for (int m = 0; m < t.spec.messages; ++m) {
      for (std::size_t k = 0; k < t.spec.ops.size(); ++k) {
        const core::Op op = t.spec.ops[k];
        const std::size_t count = t.shapes[k].block;
        if (op == core::Op::kSendRecv) {
          // a pipeline, not a ring: forward to the next stage on even messages, back on odd ones
          const bool forward = m % 2 == 0;
          const int to = forward ? t.rank + 1 : t.rank - 1;
          const int from = forward ? t.rank - 1 : t.rank + 1;
          FM_CHECK_NCCL(ncclGroupStart());
          if (to >= 0 && to < t.n) FM_CHECK_NCCL(ncclSend(t.in.data(), count, t.type, to, t.comm, stream));
          if (from >= 0 && from < t.n) FM_CHECK_NCCL(ncclRecv(t.out.data(), count, t.type, from, t.comm, stream));
          FM_CHECK_NCCL(ncclGroupEnd());
          continue;
        }
        enqueueOp(op, t.in.data(), t.out.data(), count, t.spec.dtype, ncclSum, 0, t.rank, t.n, t.comm, stream);
      }
    }
    FM_CHECK_CUDA(cudaEventRecord(t.end, stream));
  }

  double timeout_;
  std::vector<std::unique_ptr<Type>> types_;
};

}  // namespace

std::unique_ptr<TrafficRunner> makeTrafficRunner(const std::vector<TrafficSpec>& specs,
                                                 const std::vector<ncclComm_t>& comms, double timeoutSeconds) {
  return std::make_unique<NcclTraffic>(specs, comms, timeoutSeconds);
}

}  // namespace fabricmap::worker::nccl
