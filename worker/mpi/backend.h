// The host-memory MPI backend: every collective with MPI calls on CPU buffers. It runs on any MPI
// cluster and is the reference the GPU backends are compared against.
#pragma once

#include <memory>
#include <string>

#include "worker/backend.h"

namespace fabricmap::worker::mpi {

std::unique_ptr<Backend> createBackend();

// The library this backend measures, for the results file's provenance.
std::string libraryVersion();

// This backend for the registry (worker/backends.cpp); info.cpp, built in every build.
const BackendInfo& backendInfo();

}  // namespace fabricmap::worker::mpi
