// Backend registry (see backends.h).
#include "worker/backends.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/config.h"
#include "core/error.h"
#include "worker/mpi/backend.h"
#include "worker/mpi_transport.h"
#include "worker/nccl/backend.h"
#include "worker/ucx/backend.h"

namespace fabricmap::worker {

LibraryVersions libraryVersions() {
  LibraryVersions v;
  v.mpi = mpi::libraryVersion();
  v.mpiTransport = mpiTransport();
#if FABRICMAP_HAVE_NCCL
  v.nccl = nccl::libraryVersion();
  v.cudaRuntime = nccl::cudaRuntimeVersion();
  v.cudaDriver = nccl::cudaDriverVersion();
#endif
#if FABRICMAP_HAVE_UCX
  v.ucx = ucx::libraryVersion();
#endif
  return v;
}

const std::vector<const BackendInfo*>& registeredBackends() {
  static const std::vector<const BackendInfo*> kBackends{&nccl::backendInfo(), &mpi::backendInfo(),
                                                         &ucx::backendInfo()};
  return kBackends;
}

std::string backendNames(bool withAuto, bool (*has)(const BackendInfo&)) {
  std::vector<std::string> names;
  for (const BackendInfo* b : registeredBackends()) {
    if (has == nullptr || has(*b)) names.emplace_back(b->name);
  }
  std::sort(names.begin(), names.end());
  if (withAuto) names.insert(names.begin(), "auto");
  if (names.size() < 2) return names.empty() ? "" : names.front();
  const std::string last = names.back();
  names.pop_back();
  return fmt::format("{} or {}", fmt::join(names, ", "), last);
}

const BackendInfo* findBackend(std::string_view name) {
  for (const BackendInfo* b : registeredBackends()) {
    if (b->name == name) return b;
  }
  return nullptr;
}

namespace {

std::string availableNames() {
  std::vector<std::string_view> names;
  for (const BackendInfo* b : registeredBackends()) {
    if (b->available()) names.push_back(b->name);
  }
  std::sort(names.begin(), names.end());
  return fmt::format("{}", fmt::join(names, ", "));
}

const BackendInfo* firstAvailable(MemoryKind memory) {
  for (const BackendInfo* b : registeredBackends()) {
    if (b->available() && b->memory == memory && b->measures.collectives) return b;
  }
  return nullptr;
}

BackendChoice autoBackend(const std::string& gpuShortage) {
  const BackendInfo* gpu = firstAvailable(MemoryKind::kCuda);
  const BackendInfo* host = firstAvailable(MemoryKind::kHost);
  if (host == nullptr) throw FM_FAULT("this build registers no host-memory backend");
  if (gpu == nullptr) return {host, std::string(host->name), "this build has no GPU backend"};
  if (!gpuShortage.empty()) return {host, std::string(host->name), gpuShortage};
  return {gpu, std::string(gpu->name), "every rank has a GPU"};
}

}  // namespace

BackendChoice resolveBackend(std::string_view requested, const std::string& gpuShortage) {
  if (requested == "auto") return autoBackend(gpuShortage);
  const BackendInfo* found = findBackend(requested);
  if (found == nullptr) {
    throw core::UsageError(fmt::format("unknown backend '{}' (available: auto, {})", requested, availableNames()));
  }
  const BackendInfo& info = *found;
  if (!info.available()) {
    throw core::UsageError(fmt::format("backend '{}' is not available in this build (available: {})", info.name,
                                       availableNames()));
  }
  if (info.memory == MemoryKind::kCuda && !gpuShortage.empty()) {
    throw core::UsageError(fmt::format("backend '{}' needs one GPU per rank: {}", info.name, gpuShortage));
  }
  return {&info, std::string(info.name), ""};
}

}  // namespace fabricmap::worker
