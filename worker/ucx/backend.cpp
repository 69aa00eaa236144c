// UCX backend: the UCP context, host or GPU buffers and what it waives (see backend.h); the
// transfers are in pairs.cpp.
#include "worker/ucx/backend.h"

#include <algorithm>

#include "core/config.h"
#include "core/error.h"
#include "worker/host_buffer.h"
#if FABRICMAP_HAVE_CUDA
#include "worker/device_buffer.h"
#endif
#include "worker/ucx/collective.h"
#include "worker/ucx/context.h"
#include "worker/ucx/copies.h"
#include "worker/ucx/pairs.h"
#include "worker/ucx/traffic.h"

namespace fabricmap::worker::ucx {
namespace {

#if FABRICMAP_HAVE_CUDA
void copyCuda(void* to, const void* from, std::size_t bytes) {
  FM_CHECK_CUDA(cudaMemcpy(to, from, bytes, cudaMemcpyDefault));
}
#endif

// This rank's GPU, made current before UCX starts (its CUDA transports use the current device);
// -1 for host memory. Preflight refuses --pair-memory cuda where a rank has no GPU.
int deviceFor(const BackendContext& context) {
  if (context.pairMemory != MemoryKind::kCuda) return -1;
#if FABRICMAP_HAVE_CUDA
  return useRankDevice(context.localRank, context.gpusPerNode);
#else
  throw FM_FAULT("this build has no CUDA: the ucx backend cannot measure from GPU memory");
#endif
}

class UcxBackend final : public Backend {
 public:
  explicit UcxBackend(const BackendContext& context)
      : api_(context.pairApi),
        device_(deviceFor(context)),
        ucp_(MPI_COMM_WORLD,
             {.rma = api_ == PairApi::kRma, .cudaMemory = device_ >= 0, .netDevices = context.nic.name()}),
        cudaDomains_(device_ >= 0 ? cudaRegisteringDomains() : std::vector<std::string>{}) {}

  std::string_view name() const override { return "ucx"; }

  std::string deviceBusId() const override {
#if FABRICMAP_HAVE_CUDA
    if (device_ >= 0) return deviceBusIdOf(device_);
#endif
    return {};
  }

  std::string waiver(const CollectiveSpec& /*spec*/) const override { return collectiveWaiver(); }

  std::unique_ptr<CollectiveRunner> prepare(MPI_Comm /*group*/, const CollectiveSpec& /*spec*/) override {
    throw FM_FAULT("the ucx backend was asked to prepare a collective it waives");
  }

  std::unique_ptr<PairRunner> preparePairs(MPI_Comm world, const PairSpec& spec) override {
    const std::size_t bytes = std::max<std::uint64_t>(spec.bytes, spec.latencyBytes);
    return makePairRunner(ucp_, world, spec, buffersOf(bytes), api_);
  }

  // Every peer met and its lanes; in GPU memory also how UCX can move it there (cudaPathOf).
  std::vector<EndpointPath> endpointPaths() override {
    std::vector<EndpointPath> paths;
    for (int peer : ucp_.connectedPeers()) {
      std::string lanes = summarizeEndpoint(ucp_.endpointInfo(peer));
      if (device_ >= 0) lanes += "; CUDA memory: " + cudaPathOf(lanes, cudaDomains_);
      paths.push_back({peer, std::move(lanes)});
    }
    return paths;
  }

  std::vector<core::CopyMethod> copyMethods() const override { return ucx::copyMethods(); }

  std::unique_ptr<CopyRunner> prepareCopies(MPI_Comm /*pair*/, const CopySpec& /*spec*/) override {
    throw FM_FAULT("the ucx backend offers no copies");
  }

  std::unique_ptr<TrafficRunner> prepareTraffic(const std::vector<TrafficSpec>& /*specs*/) override {
    throw core::UsageError(trafficRefusal());
  }

 private:
  // `bytes` to send and, by tag matching, to receive (remote writes land in UCX's own buffer; in
  // host memory tag matching uses UCX's own buffers both ways: pairs.h).
  PairBuffers buffersOf(std::size_t bytes) {
    const bool receives = api_ == PairApi::kTag;
#if FABRICMAP_HAVE_CUDA
    if (device_ >= 0) {
      deviceInput_.reserve(bytes);
      if (receives) deviceOutput_.reserve(bytes);
      return {deviceInput_.data(), receives ? deviceOutput_.data() : nullptr, UCS_MEMORY_TYPE_CUDA, copyCuda};
    }
#endif
    if (receives) return {nullptr, nullptr, UCS_MEMORY_TYPE_HOST, nullptr};
    input_.reserve(bytes);
    return {input_.data(), nullptr, UCS_MEMORY_TYPE_HOST, nullptr};
  }

  PairApi api_;
  int device_;  // the GPU whose memory the pairs use; -1: host memory
  Ucp ucp_;
  std::vector<std::string> cudaDomains_;  // UCX's memory domains that register CUDA memory
  HostBuffer input_;
#if FABRICMAP_HAVE_CUDA
  DeviceBuffer deviceInput_;
  DeviceBuffer deviceOutput_;
#endif
};

}  // namespace

std::unique_ptr<Backend> createBackend(const BackendContext& context) {
  return std::make_unique<UcxBackend>(context);
}

std::string libraryVersion() { return versionString(); }

}  // namespace fabricmap::worker::ucx
