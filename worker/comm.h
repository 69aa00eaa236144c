// MPI control-plane helpers: communicator ownership, waits that sleep instead of spinning, and
// the bootstrap exchange of host probes.
#pragma once

#include <mpi.h>

#include <string>
#include <vector>

#include "core/records.h"

namespace fabricmap::worker {

// Owns a communicator made by MPI_Comm_split and friends; MPI_COMM_NULL when this rank is not in it.
class Communicator {
 public:
  Communicator() = default;
  explicit Communicator(MPI_Comm comm) : comm_(comm) {}
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;
  Communicator(Communicator&& other) noexcept : comm_(other.comm_) { other.comm_ = MPI_COMM_NULL; }
  Communicator& operator=(Communicator&& other) noexcept;
  ~Communicator();

  MPI_Comm get() const { return comm_; }
  bool member() const { return comm_ != MPI_COMM_NULL; }
  int rank() const;
  int size() const;

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
};

// Completes `request` by testing it with growing sleeps (20 us up to 1 ms) in between, so a rank
// waiting for others yields its core to the ranks that are measuring.
void waitSleeping(MPI_Request& request);

// A barrier that sleeps while it waits (MPI_Ibarrier + waitSleeping).
void sleepingBarrier(MPI_Comm comm);

// Whether all ranks of `comm` can share memory (an MPI shared-memory window); the same answer on
// every rank. Collective.
bool sharesMemory(MPI_Comm comm);

// Every rank's probe on every rank, with sharedLeader filled from MPI_COMM_TYPE_SHARED.
std::vector<core::HostProbe> exchangeProbes(MPI_Comm world, core::HostProbe mine);

// Every rank's `mine` on rank 0 (in rank order); empty elsewhere. Collective over `comm`.
std::vector<std::string> gatherStrings(MPI_Comm comm, const std::string& mine);

// Rank 0's `value` on every rank. Collective over `comm`.
std::string broadcastString(MPI_Comm comm, std::string value);
// Rank 0's bytes on every rank, resized there. Collective over `comm`.
void broadcastBytes(MPI_Comm comm, std::vector<char>& bytes);
// Rank 0's ints on every rank. Collective over `comm`.
std::vector<int> broadcastInts(MPI_Comm comm, std::vector<int> ints);

// The MPI library's own version string.
std::string mpiLibraryVersion();

}  // namespace fabricmap::worker
