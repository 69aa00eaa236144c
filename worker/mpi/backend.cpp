// MPI backend: buffers and capability checks (see backend.h); the calls are in collective.cpp.
#include "worker/mpi/backend.h"

#include <algorithm>
#include <climits>

#include "worker/comm.h"
#include "worker/host_buffer.h"
#include "worker/host_check.h"
#include "worker/mpi/collective.h"
#include "worker/mpi/copies.h"
#include "worker/mpi/pairs.h"
#include "worker/mpi/traffic.h"

namespace fabricmap::worker::mpi {
namespace {

class MpiBackend final : public Backend {
 public:
  std::string_view name() const override { return "mpi"; }

  std::string waiver(const CollectiveSpec& spec) const override {
    if (!hostSupports(spec.dtype)) {
      return std::string("MPI has no ") + std::string(core::traits(spec.dtype).name) + " type";
    }
    const std::uint64_t largest = std::max(spec.shape.inputElems, spec.shape.outputElems);
    if (largest > static_cast<std::uint64_t>(INT_MAX)) {
      return "element count above 2^31-1 needs MPI-4 large-count calls";
    }
    return {};
  }

  std::unique_ptr<PairRunner> preparePairs(MPI_Comm world, const PairSpec& spec) override {
    const std::size_t bytes = std::max<std::uint64_t>(spec.bytes, spec.latencyBytes);
    input_.reserve(bytes);
    output_.reserve(bytes);
    return makePairRunner(world, spec, input_.data(), output_.data());
  }

  std::vector<core::CopyMethod> copyMethods() const override { return {core::CopyMethod::kHost}; }

  std::unique_ptr<CopyRunner> prepareCopies(MPI_Comm pair, const CopySpec& spec) override {
    return makeCopyRunner(pair, spec);
  }

  std::unique_ptr<TrafficRunner> prepareTraffic(const std::vector<TrafficSpec>& specs) override {
    return makeTrafficRunner(specs);
  }

  std::unique_ptr<CollectiveRunner> prepare(MPI_Comm group, const CollectiveSpec& spec) override {
    const std::size_t ts = core::traits(spec.dtype).size;
    input_.reserve(spec.shape.inputElems * ts);
    // In place, the output buffer also holds the input (reduce_scatter's is n blocks).
    output_.reserve(std::max(spec.shape.outputElems, spec.inPlace ? spec.shape.inputElems : 0) * ts);
    return makeCollective(group, spec, input_.data(), output_.data());
  }

 private:
  // Reused across steps: a sweep allocates and touches its largest buffers once.
  HostBuffer input_;
  HostBuffer output_;
};

}  // namespace

std::unique_ptr<Backend> createBackend() { return std::make_unique<MpiBackend>(); }

std::string libraryVersion() { return mpiLibraryVersion(); }

}  // namespace fabricmap::worker::mpi
