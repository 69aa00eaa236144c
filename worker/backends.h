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

struct BackendChoice {
  std::string name;
  std::string reason;  // why `auto` chose it; empty when named explicitly
};

// `auto` resolves to nccl when every rank has a GPU and this build has the NCCL backend, else
// mpi (saying why). Throws UsageError for an unknown or unavailable name, and for nccl when some
// node has fewer GPUs than ranks (`gpuShortage` names it; empty when every rank has one).
BackendChoice resolveBackend(std::string_view requested, const std::string& gpuShortage);
std::unique_ptr<Backend> createBackend(std::string_view name, const BackendContext& context);

}  // namespace fabricmap::worker
