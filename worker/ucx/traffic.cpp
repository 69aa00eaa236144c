// The ucx backend's traffic (see traffic.h).
#include "worker/ucx/traffic.h"

namespace fabricmap::worker::ucx {

std::string trafficRefusal() {
  return "the ucx backend has no collectives for the training pattern or the scaling sweep (use --backend mpi or "
         "nccl)";
}

}  // namespace fabricmap::worker::ucx
