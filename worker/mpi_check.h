// One check for MPI return codes. MPI's default error handler (MPI_ERRORS_ARE_FATAL, which
// fabricmap keeps: mpirun then ends every rank, none hangs) aborts before a failing call returns;
// a handler that returns (set by a launcher or a test), or a call that fails without one, gives a
// code, which must not be ignored.
#pragma once

#include <mpi.h>

#include <string>

#include "core/error.h"

namespace fabricmap::worker {

// Throws core::RuntimeFault naming the call and MPI's message for `rc` unless it is MPI_SUCCESS.
inline void checkMpi(int rc, const char* call, const char* file, int line) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  if (MPI_Error_string(rc, text, &length) != MPI_SUCCESS) length = 0;
  throw core::RuntimeFault(std::string(call) + " failed: " + (length > 0 ? std::string(text, length) : "error " + std::to_string(rc)),
                           file, line);
}

}  // namespace fabricmap::worker

// FM_MPI(MPI_Barrier(comm)): the call, checked.
#define FM_MPI(call) ::fabricmap::worker::checkMpi((call), #call, __FILE__, __LINE__)
