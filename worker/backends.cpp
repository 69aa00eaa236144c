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

std::vector<std::string_view> availableBackends() { return {"mpi"}; }

std::string resolveBackendName(std::string_view requested, bool everyRankHasGpu) {
  const auto available = availableBackends();
  const auto has = [&](std::string_view b) {
    return std::find(available.begin(), available.end(), b) != available.end();
  };
  if (requested == "auto") return everyRankHasGpu && has("nccl") ? "nccl" : "mpi";
  if (has(requested)) return std::string(requested);
  if (requested == "nccl") {
    throw core::UsageError(
        "backend 'nccl' is not available in this build (available: " +
        fmt::format("{}", fmt::join(available, ", ")) + ")");
  }
  throw core::UsageError(fmt::format("unknown backend '{}' (available: auto, {})", requested,
                                     fmt::join(available, ", ")));
}

std::unique_ptr<Backend> createBackend(std::string_view name) {
  if (name == "mpi") return mpi::createBackend();
  throw core::UsageError(fmt::format("backend '{}' is not available in this build", name));
}

}  // namespace fabricmap::worker
