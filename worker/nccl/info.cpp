// The NCCL backend's registry entry (see worker/backend.h): known in every build, created only in
// a build with NCCL.
#include "core/config.h"
#include "worker/nccl/backend.h"

namespace fabricmap::worker::nccl {

const BackendInfo& backendInfo() {
  static const BackendInfo kInfo{
      .name = "nccl",
      .memory = MemoryKind::kCuda,
      .measures = {.collectives = true, .pairs = true, .copies = true, .traffic = true, .graphs = true, .rma = false},
      .busbwAtLineRate = true,
      .pinsNics = true,
#if FABRICMAP_HAVE_NCCL
      .create = createBackend,
#else
      .create = nullptr,
#endif
  };
  return kInfo;
}

}  // namespace fabricmap::worker::nccl
