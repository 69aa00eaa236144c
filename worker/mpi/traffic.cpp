// Training-pattern traffic through non-blocking MPI calls (see traffic.h).
//
// Every type keeps one operation in flight on its own communicator; the main thread tests them
// in turn and starts a type's next op as soon as its last one completed, so the types progress
// at the same time as far as the MPI library lets them (Open MPI progresses non-blocking
// collectives inside these tests). A type's time is when its last op completed on this rank.
#include "worker/mpi/traffic.h"

#include <algorithm>
#include <array>
#include <climits>

#include <fmt/format.h>

#include "core/error.h"
#include "worker/host_buffer.h"
#include "worker/mpi/collective.h"
#include "worker/mpi_check.h"

namespace fabricmap::worker::mpi {
namespace {

// The data is not checked, so a 16-bit float moves as a 16-bit integer: the same bytes and
// element counts through the same algorithms (MPI has no half or bfloat16 type).
MPI_Datatype trafficType(core::DType t) {
  if (t == core::DType::kHalf || t == core::DType::kBfloat16) return MPI_INT16_T;
  return mpiType(t);
}

class MpiTraffic final : public TrafficRunner {
 public:
  explicit MpiTraffic(const std::vector<TrafficSpec>& specs) : types_(specs.size()) {
    for (std::size_t i = 0; i < specs.size(); ++i) {
      Type& t = types_[i];
      t.spec = specs[i];
      FM_MPI(MPI_Comm_rank(t.spec.group, &t.rank));
      FM_MPI(MPI_Comm_size(t.spec.group, &t.n));
      t.type = trafficType(t.spec.dtype);
      const std::size_t ts = core::traits(t.spec.dtype).size;
      std::uint64_t largest = 0;
      for (core::Op op : t.spec.ops) {
        const core::OpShape s = core::shapeOf(op, t.spec.bytes, ts, t.n);
        if (std::max(s.inputElems, s.outputElems) > static_cast<std::uint64_t>(INT_MAX)) {
          throw FM_FAULT(fmt::format("a training message of {} B needs MPI-4 large-count calls", t.spec.bytes));
        }
        t.shapes.push_back(s);
        largest = std::max({largest, s.inputElems * ts, s.outputElems * ts});
      }
      t.in.reserve(largest);
      t.out.reserve(largest);
    }
  }

  std::vector<double> step(const std::vector<bool>& active) override {
    std::vector<double> seconds(types_.size(), 0.0);
    const double start = MPI_Wtime();
    int running = 0;
    for (std::size_t i = 0; i < types_.size(); ++i) {
      Type& t = types_[i];
      t.message = 0;
      t.op = 0;
      t.running = i < active.size() && active[i] && t.spec.messages > 0;
      if (t.running) {
        launch(t);
        ++running;
      }
    }
    while (running > 0) {
      for (std::size_t i = 0; i < types_.size(); ++i) {
        Type& t = types_[i];
        if (!t.running) continue;
        int done = 0;
        FM_MPI(MPI_Testall(t.pending, t.requests.data(), &done, MPI_STATUSES_IGNORE));
        if (!done) continue;
        if (++t.op == static_cast<int>(t.spec.ops.size())) {
          t.op = 0;
          ++t.message;
        }
        if (t.message < t.spec.messages) {
          launch(t);
        } else {
          t.running = false;
          seconds[i] = MPI_Wtime() - start;
          --running;
        }
      }
    }
    return seconds;
  }

 private:
  struct Type {
    TrafficSpec spec;
    int rank = 0;
    int n = 1;
    MPI_Datatype type = MPI_BYTE;
    std::vector<core::OpShape> shapes;  // per op of a message
    HostBuffer in;
    HostBuffer out;
    // progress of the current step
    bool running = false;
    int message = 0;
    int op = 0;
    std::array<MPI_Request, 2> requests{MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    int pending = 0;
  };

  static void launch(Type& t) {
    const core::Op op = t.spec.ops[static_cast<std::size_t>(t.op)];
    const int block = static_cast<int>(t.shapes[static_cast<std::size_t>(t.op)].block);
    void* in = t.in.data();
    void* out = t.out.data();
    MPI_Comm comm = t.spec.group;
    t.pending = 1;
    switch (op) {
      case core::Op::kAllReduce:
        FM_MPI(MPI_Iallreduce(in, out, block, t.type, MPI_SUM, comm, &t.requests[0]));
        break;
      case core::Op::kAllGather:
        FM_MPI(MPI_Iallgather(in, block, t.type, out, block, t.type, comm, &t.requests[0]));
        break;
      case core::Op::kReduceScatter:
        FM_MPI(MPI_Ireduce_scatter_block(in, out, block, t.type, MPI_SUM, comm, &t.requests[0]));
        break;
      case core::Op::kAllToAll:
        FM_MPI(MPI_Ialltoall(in, block, t.type, out, block, t.type, comm, &t.requests[0]));
        break;
      case core::Op::kSendRecv: {
        // a pipeline, not a ring: forward to the next stage on even messages, back on odd ones
        const bool forward = t.message % 2 == 0;
        const int to = forward ? t.rank + 1 : t.rank - 1;
        const int from = forward ? t.rank - 1 : t.rank + 1;
        constexpr int kTag = 0x7a;
        t.pending = 0;
        if (from >= 0 && from < t.n) MPI_Irecv(out, block, t.type, from, kTag, comm, &t.requests[static_cast<std::size_t>(t.pending++)]);
        if (to >= 0 && to < t.n) MPI_Isend(in, block, t.type, to, kTag, comm, &t.requests[static_cast<std::size_t>(t.pending++)]);
        break;
      }
      case core::Op::kBroadcast:
      case core::Op::kReduce:
        throw FM_FAULT(fmt::format("{} is not a training-pattern op", core::traits(op).name));
    }
  }

  std::vector<Type> types_;
};

}  // namespace

std::unique_ptr<TrafficRunner> makeTrafficRunner(const std::vector<TrafficSpec>& specs) {
  return std::make_unique<MpiTraffic>(specs);
}

}  // namespace fabricmap::worker::mpi
