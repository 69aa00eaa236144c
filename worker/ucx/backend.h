// The UCX backend: the fabric's raw point-to-point path, UCP tag-matching sends and receives or
// remote writes on host memory (or, in a CUDA build with --pair-memory cuda, the rank's GPU
// memory), the way ucx_perftest measures it, with no MPI or NCCL in between. Pairs only: the
// collectives are waived. Built with UCX (FABRICMAP_ENABLE_UCX); known by name in every build.
#pragma once

#include <memory>
#include <string>

#include "worker/backend.h"

namespace fabricmap::worker::ucx {

// Collective over MPI_COMM_WORLD (the workers' addresses are exchanged); every rank throws the
// same UsageError when UCX cannot start or reach a peer anywhere.
std::unique_ptr<Backend> createBackend(const BackendContext& context);

// "1.13.1", for the results file's provenance.
std::string libraryVersion();

// This backend for the registry (worker/backends.cpp); info.cpp, built in every build.
const BackendInfo& backendInfo();

}  // namespace fabricmap::worker::ucx
