// UCX backend: the UCP context, buffers and what it waives (see backend.h); the transfers are in
// pairs.cpp.
#include "worker/ucx/backend.h"

#include <algorithm>

#include "core/error.h"
#include "worker/host_buffer.h"
#include "worker/ucx/collective.h"
#include "worker/ucx/context.h"
#include "worker/ucx/copies.h"
#include "worker/ucx/pairs.h"
#include "worker/ucx/traffic.h"

namespace fabricmap::worker::ucx {
namespace {

class UcxBackend final : public Backend {
 public:
  UcxBackend(PairApi api, const NicChoice& nic) : api_(api), ucp_(MPI_COMM_WORLD, api == PairApi::kRma, nic.name()) {}

  std::string_view name() const override { return "ucx"; }

  std::string waiver(const CollectiveSpec& /*spec*/) const override { return collectiveWaiver(); }

  std::unique_ptr<CollectiveRunner> prepare(MPI_Comm /*group*/, const CollectiveSpec& /*spec*/) override {
    throw FM_FAULT("the ucx backend was asked to prepare a collective it waives");
  }

  std::unique_ptr<PairRunner> preparePairs(MPI_Comm world, const PairSpec& spec) override {
    const std::size_t bytes = std::max<std::uint64_t>(spec.bytes, spec.latencyBytes);
    input_.reserve(bytes);
    if (api_ == PairApi::kTag) output_.reserve(bytes);  // remote writes land in UCX's own buffer
    return makePairRunner(ucp_, world, spec, input_.data(), output_.data(), api_);
  }

  std::vector<EndpointPath> endpointPaths() override {
    std::vector<EndpointPath> paths;
    for (int peer : ucp_.connectedPeers()) paths.push_back({peer, summarizeEndpoint(ucp_.endpointInfo(peer))});
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
  PairApi api_;
  Ucp ucp_;
  HostBuffer input_;
  HostBuffer output_;
};

}  // namespace

std::unique_ptr<Backend> createBackend(const BackendContext& context) {
  return std::make_unique<UcxBackend>(context.pairApi, context.nic);
}

std::string libraryVersion() { return versionString(); }

}  // namespace fabricmap::worker::ucx
