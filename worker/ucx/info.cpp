// The UCX backend's registry entry (see worker/backend.h): known in every build, created only in a
// build with UCX. Never chosen by --backend auto (it measures no collectives).
#include "core/config.h"
#include "worker/ucx/backend.h"

namespace fabricmap::worker::ucx {

const BackendInfo& backendInfo() {
  static const BackendInfo kInfo{
      .name = "ucx",
      .memory = MemoryKind::kHost,
      .measures = {.collectives = false,
                   .pairs = true,
                   .copies = false,
                   .traffic = false,
                   .graphs = false,
                   .rma = true,
                   .cudaPairs = FABRICMAP_HAVE_CUDA != 0},
      .busbwAtLineRate = false,
      .pinsNics = true,
#if FABRICMAP_HAVE_UCX
      .create = createBackend,
#else
      .create = nullptr,
#endif
  };
  return kInfo;
}

}  // namespace fabricmap::worker::ucx
