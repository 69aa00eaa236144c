// Which point-to-point layer Open MPI selected in this process: what the mpi backend's pairs and
// collectives actually went through (the UCX pml, ob1 over shared memory and TCP, an MTL).
#pragma once

#include <string>

namespace fabricmap::worker {

// "pml ob1, btl self,tcp,vader", "pml ucx", "pml cm, mtl ofi"; empty when the MPI library is not
// Open MPI or does not say. After MPI_Init; local (no communication).
std::string mpiTransport();

}  // namespace fabricmap::worker
