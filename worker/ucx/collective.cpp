// The ucx backend's collectives: none (see collective.h).
#include "worker/ucx/collective.h"

namespace fabricmap::worker::ucx {

std::string collectiveWaiver() {
  return "UCX (UCP) has no collectives: the ucx backend measures the pairs; run the sweeps with --backend mpi or nccl";
}

}  // namespace fabricmap::worker::ucx
