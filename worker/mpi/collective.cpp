// The MPI calls behind each op of the table, out-of-place and in-place.
//
// In-place layouts follow MPI: all_gather's input is this rank's block of the output buffer;
// reduce_scatter and alltoall take their whole input in the output buffer (reduce_scatter's
// result is then its first block); sendrecv uses MPI_Sendrecv_replace. Broadcast is one buffer in
// MPI: out-of-place, the root sends from its input buffer and its output is that buffer.
#include "worker/mpi/collective.h"


#include "core/error.h"
#include "worker/host_check.h"
#include "worker/clock.h"
#include "worker/mpi_check.h"

namespace fabricmap::worker::mpi {

MPI_Datatype mpiType(core::DType t) {
  using core::DType;
  switch (t) {
    case DType::kInt8: return MPI_INT8_T;
    case DType::kUint8: return MPI_UINT8_T;
    case DType::kInt32: return MPI_INT32_T;
    case DType::kUint32: return MPI_UINT32_T;
    case DType::kInt64: return MPI_INT64_T;
    case DType::kUint64: return MPI_UINT64_T;
    case DType::kFloat: return MPI_FLOAT;
    case DType::kDouble: return MPI_DOUBLE;
    case DType::kHalf:
    case DType::kBfloat16: break;
  }
  throw FM_FAULT("no MPI datatype for " + std::string(core::traits(t).name));
}

namespace {

MPI_Op mpiOp(core::RedOp op) {
  switch (op) {
    case core::RedOp::kSum: return MPI_SUM;
    case core::RedOp::kProd: return MPI_PROD;
    case core::RedOp::kMin: return MPI_MIN;
    case core::RedOp::kMax: return MPI_MAX;
  }
  return MPI_SUM;
}

class MpiCollective final : public CollectiveRunner {
 public:
  MpiCollective(MPI_Comm group, const CollectiveSpec& spec, std::byte* input, std::byte* output)
      : comm_(group), spec_(spec), in_(input), out_(output), type_(mpiType(spec.dtype)),
        op_(mpiOp(spec.redop)) {
    FM_MPI(MPI_Comm_rank(comm_, &rank_));
    FM_MPI(MPI_Comm_size(comm_, &n_));
    ts_ = core::traits(spec.dtype).size;
    block_ = static_cast<int>(spec.shape.block);
  }

  void fill() override {
    const auto& s = spec_.shape;
    const core::Pattern& p = spec_.pattern;
    fillValue(spec_.dtype, out_, s.outputElems, p.poison());
    fillInput(spec_.dtype, inputBuffer(), s.inputElems, p, rank_);
  }

  void runOnce() override { call(); }

  std::vector<double> timeIterations(int iters) override {
    std::vector<double> done(static_cast<std::size_t>(iters));
    const Stopwatch clock;
    for (int i = 0; i < iters; ++i) {
      call();
      done[static_cast<std::size_t>(i)] = clock.seconds();
    }
    return done;
  }

  std::uint64_t countWrong() override {
    if (!core::traits(spec_.op).hasOutput(rank_, spec_.root)) return 0;
    const OutputCheck check{&core::traits(spec_.op), &spec_.pattern, rank_, n_, spec_.root,
                            spec_.shape.block};
    return worker::countWrong(spec_.dtype, outputBuffer(), outputElems(), check);
  }

  void corruptOutput(std::uint64_t element) override {
    if (outputElems() == 0) return;
    corruptElement(spec_.dtype, outputBuffer(), element % outputElems(), spec_.pattern);
  }

 private:
  bool broadcastRootOutOfPlace() const {
    return spec_.op == core::Op::kBroadcast && !spec_.inPlace && rank_ == spec_.root;
  }

  // Where this rank's input lives: its own buffer, or inside the output buffer when in place.
  std::byte* inputBuffer() const {
    if (!spec_.inPlace) return in_;
    if (spec_.op == core::Op::kAllGather) {
      return out_ + static_cast<std::size_t>(rank_) * spec_.shape.block * ts_;
    }
    return out_;
  }

  std::byte* outputBuffer() const { return broadcastRootOutOfPlace() ? in_ : out_; }

  std::uint64_t outputElems() const {
    // In-place reduce_scatter leaves the result in the first block of the full buffer.
    return spec_.op == core::Op::kReduceScatter ? spec_.shape.block : spec_.shape.outputElems;
  }

  void call() {
    const int count = static_cast<int>(spec_.shape.block);
    const bool ip = spec_.inPlace;
    void* send = ip ? MPI_IN_PLACE : static_cast<void*>(in_);
    switch (spec_.op) {
      case core::Op::kAllReduce:
        FM_MPI(MPI_Allreduce(send, out_, count, type_, op_, comm_));
        break;
      case core::Op::kAllGather:
        FM_MPI(MPI_Allgather(send, ip ? 0 : block_, ip ? MPI_DATATYPE_NULL : type_, out_, block_, type_,
                      comm_));
        break;
      case core::Op::kReduceScatter:
        FM_MPI(MPI_Reduce_scatter_block(send, out_, block_, type_, op_, comm_));
        break;
      case core::Op::kBroadcast:
        FM_MPI(MPI_Bcast(broadcastRootOutOfPlace() ? in_ : out_, count, type_, spec_.root, comm_));
        break;
      case core::Op::kReduce:
        if (ip && rank_ != spec_.root) {
          FM_MPI(MPI_Reduce(out_, nullptr, count, type_, op_, spec_.root, comm_));
        } else {
          FM_MPI(MPI_Reduce(send, out_, count, type_, op_, spec_.root, comm_));
        }
        break;
      case core::Op::kAllToAll:
        FM_MPI(MPI_Alltoall(send, ip ? 0 : block_, ip ? MPI_DATATYPE_NULL : type_, out_, block_, type_,
                     comm_));
        break;
      case core::Op::kSendRecv: {
        const int next = (rank_ + 1) % n_;
        const int prev = (rank_ - 1 + n_) % n_;
        constexpr int kTag = 0x5e;
        if (ip) {
          FM_MPI(MPI_Sendrecv_replace(out_, count, type_, next, kTag, prev, kTag, comm_,
                               MPI_STATUS_IGNORE));
        } else {
          FM_MPI(MPI_Sendrecv(in_, count, type_, next, kTag, out_, count, type_, prev, kTag, comm_,
                       MPI_STATUS_IGNORE));
        }
        break;
      }
    }
  }

  MPI_Comm comm_;
  CollectiveSpec spec_;
  std::byte* in_;
  std::byte* out_;
  MPI_Datatype type_;
  MPI_Op op_;
  int rank_ = 0;
  int n_ = 1;
  std::size_t ts_ = 1;
  int block_ = 0;
};

}  // namespace

std::unique_ptr<CollectiveRunner> makeCollective(MPI_Comm group, const CollectiveSpec& spec,
                                                 std::byte* input, std::byte* output) {
  return std::make_unique<MpiCollective>(group, spec, input, output);
}

}  // namespace fabricmap::worker::mpi
