// The NCCL backend (GPU buffers). Built only with FABRICMAP_ENABLE_NCCL. So far it reports the
// NCCL and CUDA versions for provenance; the collectives arrive with the GPU path.
#pragma once

#include <string>

namespace fabricmap::worker::nccl {

std::string libraryVersion();       // "2.28.9"
std::string cudaRuntimeVersion();   // "13.0"
std::string cudaDriverVersion();    // "13.0", or "none" without a driver

}  // namespace fabricmap::worker::nccl
