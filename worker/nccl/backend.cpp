// NCCL backend: device binding, communicators per group, buffers (see backend.h).
#include "worker/nccl/backend.h"

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <numeric>
#include <vector>

#include <fmt/format.h>

#include "worker/mpi_check.h"
#include "worker/nccl/collective.h"
#include "worker/nccl/copies.h"
#include "worker/nccl/device.h"
#include "worker/nccl/pairs.h"
#include "worker/nccl/traffic.h"

namespace fabricmap::worker::nccl {
namespace {

std::string cudaVersionString(int v) {
  if (v <= 0) return "none";
  return fmt::format("{}.{}", v / 1000, (v % 1000) / 10);
}

// The world ranks of `group`, which name its NCCL communicator.
std::vector<int> worldRanksOf(MPI_Comm group) {
  MPI_Group g = MPI_GROUP_NULL;
  MPI_Group world = MPI_GROUP_NULL;
  FM_MPI(MPI_Comm_group(group, &g));
  FM_MPI(MPI_Comm_group(MPI_COMM_WORLD, &world));
  int n = 0;
  FM_MPI(MPI_Group_size(g, &n));
  std::vector<int> local(static_cast<std::size_t>(n));
  std::iota(local.begin(), local.end(), 0);
  std::vector<int> ranks(static_cast<std::size_t>(n));
  FM_MPI(MPI_Group_translate_ranks(g, n, local.data(), world, ranks.data()));
  FM_MPI(MPI_Group_free(&g));
  FM_MPI(MPI_Group_free(&world));
  return ranks;
}

// --nic-per-rank: NCCL reads its NIC choice from the environment when a communicator is made, so
// the rank's NIC is set there before any is: an RDMA port as NCCL_IB_HCA, a network interface as
// NCCL_SOCKET_IFNAME, each with "=" (that name exactly, not every name it begins).
void pinNic(const NicChoice& nic) {
  if (nic.empty()) return;
  const char* variable = nic.port > 0 ? "NCCL_IB_HCA" : "NCCL_SOCKET_IFNAME";
  std::string exactly = "=";
  exactly.append(nic.name());
  if (setenv(variable, exactly.c_str(), 1) != 0) throw FM_FAULT(std::string("cannot set ") + variable);
}

class NcclBackend final : public Backend {
 public:
  explicit NcclBackend(const BackendContext& context)
      : timeout_(context.stepTimeoutSeconds), cudaGraph_(context.cudaGraph) {
    device_ = useRankDevice(context.localRank, context.gpusPerNode);
    pinNic(context.nic);
    stream_ = std::make_unique<Stream>();
  }

  NcclBackend(const NcclBackend&) = delete;
  NcclBackend& operator=(const NcclBackend&) = delete;

  ~NcclBackend() override {
    for (auto& [ranks, comm] : comms_) ncclCommDestroy(comm);
  }

  std::string_view name() const override { return "nccl"; }

  std::string deviceBusId() const override { return deviceBusIdOf(device_); }

  std::string waiver(const CollectiveSpec& spec) const override {
    // alltoall and sendrecv are grouped sends and receives: in place they would overwrite what
    // they are still sending
    if (spec.inPlace && (spec.op == core::Op::kAllToAll || spec.op == core::Op::kSendRecv)) {
      return std::string("NCCL has no in-place ") + std::string(core::traits(spec.op).name);
    }
    return {};
  }

  std::unique_ptr<CollectiveRunner> prepare(MPI_Comm group, const CollectiveSpec& spec) override {
    ncclComm_t comm = commFor(group);
    const std::size_t ts = core::traits(spec.dtype).size;
    input_.reserve(std::max<std::size_t>(spec.shape.inputElems * ts, 1));
    output_.reserve(std::max<std::size_t>(
        std::max(spec.shape.outputElems, spec.inPlace ? spec.shape.inputElems : 0) * ts, 1));
    return makeCollective(group, comm, stream_->get(), spec, input_.data(), output_.data(), timeout_, cudaGraph_);
  }

  std::vector<core::CopyMethod> copyMethods() const override {
    return {core::CopyMethod::kCopyEngine, core::CopyMethod::kKernel};
  }

  std::unique_ptr<CopyRunner> prepareCopies(MPI_Comm pair, const CopySpec& spec) override {
    return makeCopyRunner(pair, spec, device_, timeout_);
  }

  std::unique_ptr<PairRunner> preparePairs(MPI_Comm world, const PairSpec& spec) override {
    ncclComm_t comm = commFor(world);
    const std::size_t bytes = std::max<std::uint64_t>(spec.bytes, spec.latencyBytes);
    input_.reserve(bytes);
    output_.reserve(bytes);
    return makePairRunner(world, comm, stream_->get(), spec, input_.data(), output_.data(), timeout_);
  }

  std::unique_ptr<TrafficRunner> prepareTraffic(const std::vector<TrafficSpec>& specs) override {
    std::vector<ncclComm_t> comms;
    for (const TrafficSpec& s : specs) comms.push_back(commFor(s.group));
    return makeTrafficRunner(specs, comms, timeout_);
  }

 private:
  // One communicator per distinct set of ranks, made once: collective over `group` the first time.
  // Its configuration is nccl-tests' (NCCL's defaults, and NVLink-centric scheduling on 2.28+).
  ncclComm_t commFor(MPI_Comm group) {
    std::vector<int> ranks = worldRanksOf(group);
    if (const auto it = comms_.find(ranks); it != comms_.end()) return it->second;
    int rank = 0;
    FM_MPI(MPI_Comm_rank(group, &rank));
    ncclUniqueId id{};
    if (rank == 0) FM_CHECK_NCCL(ncclGetUniqueId(&id));
    FM_MPI(MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, group));
    ncclComm_t comm = nullptr;
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 28, 0)
    // as nccl-tests 2.19 makes its communicators (no difference measured on one H200)
    config.nvlinkCentricSched = 1;
#endif
    FM_CHECK_NCCL(ncclCommInitRankConfig(&comm, static_cast<int>(ranks.size()), id, rank, &config));
    comms_.emplace(std::move(ranks), comm);
    return comm;
  }

  int device_ = 0;
  double timeout_;
  bool cudaGraph_;
  std::unique_ptr<Stream> stream_;
  DeviceBuffer input_;
  DeviceBuffer output_;
  std::map<std::vector<int>, ncclComm_t> comms_;
};

}  // namespace

std::unique_ptr<Backend> createBackend(const BackendContext& context) {
  return std::make_unique<NcclBackend>(context);
}

std::string libraryVersion() {
  int v = 0;
  if (ncclGetVersion(&v) != ncclSuccess) return "unknown";
  // NCCL >= 2.9 encodes major*10000 + minor*100 + patch.
  return fmt::format("{}.{}.{}", v / 10000, (v % 10000) / 100, v % 100);
}

std::string cudaRuntimeVersion() {
  int v = 0;
  return cudaRuntimeGetVersion(&v) == cudaSuccess ? cudaVersionString(v) : "unknown";
}

std::string cudaDriverVersion() {
  int v = 0;
  return cudaDriverGetVersion(&v) == cudaSuccess ? cudaVersionString(v) : "none";
}

}  // namespace fabricmap::worker::nccl
