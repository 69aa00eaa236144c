// Backend registry (see backends.h).
#include "worker/backends.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/config.h"
#include "core/error.h"
#include "worker/mpi/backend.h"
#if FABRICMAP_HAVE_NCCL
#include "worker/nccl/backend.h"
#endif

namespace fabricmap::worker {

LibraryVersions libraryVersions() {
  LibraryVersions v;
  v.mpi = mpi::libraryVersion();
#if FABRICMAP_HAVE_NCCL
  v.nccl = nccl::libraryVersion();
  v.cudaRuntime = nccl::cudaRuntimeVersion();
  v.cudaDriver = nccl::cudaDriverVersion();
#endif
  return v;
}

std::vector<std::string_view> availableBackends() {
#if FABRICMAP_HAVE_NCCL
  return {"mpi", "nccl"};
#else
  return {"mpi"};
#endif
}

BackendChoice resolveBackend(std::string_view requested, const std::string& gpuShortage) {
  const auto available = availableBackends();
  const bool haveNccl = std::find(available.begin(), available.end(), "nccl") != available.end();
  if (requested == "auto") {
    if (!haveNccl) return {"mpi", "this build has no NCCL"};
    if (!gpuShortage.empty()) return {"mpi", gpuShortage};
    return {"nccl", "every rank has a GPU"};
  }
  if (requested == "mpi") return {"mpi", ""};
  if (requested == "nccl") {
    if (!haveNccl) {
      throw core::UsageError(fmt::format("backend 'nccl' is not available in this build (available: {})",
                                         fmt::join(available, ", ")));
    }
    if (!gpuShortage.empty()) {
      throw core::UsageError("backend 'nccl' needs one GPU per rank: " + gpuShortage);
    }
    return {"nccl", ""};
  }
  throw core::UsageError(fmt::format("unknown backend '{}' (available: auto, {})", requested,
                                     fmt::join(available, ", ")));
}

std::unique_ptr<Backend> createBackend(std::string_view name, const BackendContext& context) {
#if FABRICMAP_HAVE_NCCL
  if (name == "nccl") return nccl::createBackend(context);
#endif
  (void)context;
  if (name == "mpi") return mpi::createBackend();
  throw core::UsageError(fmt::format("backend '{}' is not available in this build", name));
}

}  // namespace fabricmap::worker
