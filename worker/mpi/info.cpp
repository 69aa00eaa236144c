// The MPI backend's registry entry (see worker/backend.h).
#include "worker/mpi/backend.h"

namespace fabricmap::worker::mpi {

const BackendInfo& backendInfo() {
  static const BackendInfo kInfo{
      .name = "mpi",
      .memory = MemoryKind::kHost,
      .measures = {.collectives = true, .pairs = true, .copies = true, .traffic = true, .graphs = false, .rma = false},
      .create = [](const BackendContext&) { return createBackend(); },
  };
  return kInfo;
}

}  // namespace fabricmap::worker::mpi
