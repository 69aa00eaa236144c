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
  std::string mpiTransport;  // what Open MPI selected: "pml ob1, btl self,vader"; empty when unknown
  std::string nccl;         // empty when built without NCCL
  std::string cudaRuntime;  // empty when built without CUDA
  std::string cudaDriver;
  std::string ucx;          // empty when built without UCX
};

LibraryVersions libraryVersions();

// Every backend fabricmap knows, in the order `auto` prefers them, whether this build has it or
// not: adding a backend is one line in backends.cpp.
const std::vector<const BackendInfo*>& registeredBackends();

// The backend named `name`, built here or not; null when no backend has that name.
const BackendInfo* findBackend(std::string_view name);

// The names of the known backends that `has` (every one when null), for messages: "mpi or nccl",
// with "auto" first when asked.
std::string backendNames(bool withAuto, bool (*has)(const BackendInfo&) = nullptr);

struct BackendChoice {
  const BackendInfo* info = nullptr;
  std::string name;
  std::string reason;  // why `auto` chose it; empty when named explicitly
};

// `auto` resolves to the first available GPU backend when every rank has a GPU, else to the first
// host-memory one (saying why). Throws UsageError for an unknown or unavailable name, and for a
// GPU backend when some node has fewer GPUs than ranks (`gpuShortage` names it; empty when every
// rank has one).
BackendChoice resolveBackend(std::string_view requested, const std::string& gpuShortage);

}  // namespace fabricmap::worker
