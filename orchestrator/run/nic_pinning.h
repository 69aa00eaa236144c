// --nic-per-rank: the one NIC each rank's communication library is pinned to, so the inter scope
// and the node matrices measure every rail instead of whatever NIC the library picked.
#pragma once

#include <mpi.h>

#include <string>
#include <vector>

#include "core/records.h"
#include "worker/backend.h"

namespace fabricmap::orchestrator {

using worker::NicChoice;

// Every rank's NIC under `mode`, from the ranks' records and the nodes' inventory (rank 0's
// topology):
// - "auto": the NIC nearest the rank's GPU (its active RDMA port); without a GPU, the node's active
//   RDMA ports (else its network interfaces that are up) in turn by local rank; none: empty.
// - "mlx5_0:1,mlx5_1:1,..." (or "mlx5_0", "eth0"): local rank i takes entry i modulo their number,
//   a device without a port at its active port on the rank's node; a listed NIC that a node's
//   inventory lacks is a UsageError naming the node and its NICs.
std::vector<NicChoice> pinNics(const core::Topology& topology, const std::string& mode);

// The mpi backend's pinning, before MPI_Init (Open MPI picks its devices inside it, after which
// nothing can move them): this process's NIC under `mode`, from the launcher's local rank
// (OMPI_COMM_WORLD_LOCAL_RANK, SLURM_LOCALID, MPI_LOCALRANKID), this node's GPU discovery (local
// rank i measures GPU i, spread over `gpusPerNode` when given) and its NICs in sysfs, set as
// UCX_NET_DEVICES (Open MPI's UCX pml) and, where the NIC has a network interface,
// OMPI_MCA_btl_tcp_if_include (ob1 over TCP). Returns what it set: empty when `mode` is, when the
// launcher gives no local rank, or when `mode` names no NIC here (refused after MPI_Init).
NicChoice pinBeforeMpiInit(const std::string& mode, const std::string& sysfsRoot, int gpusPerNode);

// Collective over `world`: rank 0's pinNics on every rank (none when `mode` is empty). A
// UsageError on rank 0 is thrown on every rank.
std::vector<NicChoice> agreedNics(MPI_Comm world, const core::Topology& topology, const std::string& mode);

}  // namespace fabricmap::orchestrator
