// The NCCL backend: every collective and the pairwise transfers on GPU buffers, one rank per GPU.
// Built only with FABRICMAP_ENABLE_NCCL.
#pragma once

#include <memory>
#include <string>

#include "worker/backend.h"

namespace fabricmap::worker::nccl {

// Binds this rank to its GPU (local rank modulo the GPUs it sees, or `gpusPerNode`).
std::unique_ptr<Backend> createBackend(const BackendContext& context);

std::string libraryVersion();

// This backend for the registry (worker/backends.cpp); info.cpp, built in every build.
const BackendInfo& backendInfo();       // "2.28.9"
std::string cudaRuntimeVersion();   // "13.0"
std::string cudaDriverVersion();    // "13.0", or "none" without a driver

}  // namespace fabricmap::worker::nccl
