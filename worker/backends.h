// The backends this build has, by name: the one place that knows which backend folders exist.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "worker/backend.h"

namespace fabricmap::worker {

struct LibraryVersions {
  std::string mpi;
  std::string nccl;         // empty when built without NCCL
  std::string cudaRuntime;  // empty when built without CUDA
  std::string cudaDriver;
};

LibraryVersions libraryVersions();

// Backends that can run collectives in this build ("mpi", and "nccl" with the GPU path).
std::vector<std::string_view> availableBackends();

// `auto` resolves to nccl when every rank has a GPU and this build has the NCCL backend, else
// mpi. Throws UsageError for an unknown or unavailable name.
std::string resolveBackendName(std::string_view requested, bool everyRankHasGpu);
std::unique_ptr<Backend> createBackend(std::string_view name);

}  // namespace fabricmap::worker
