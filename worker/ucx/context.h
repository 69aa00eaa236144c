// One UCP context and worker per rank, an endpoint to each peer (made on first use), and the wait
// for a UCP request: what the ucx backend's transfers go through. Built only with UCX.
#pragma once

#include <mpi.h>
#include <ucp/api/ucp.h>

#include <cstdint>
#include <string>
#include <vector>

namespace fabricmap::worker::ucx {

// Tags of the messages a pair exchanges: the kind in the top byte, the sender's world rank in the
// low 32 bits, so a receive matches one peer's messages of one kind (mask: every bit).
enum class TagKind : std::uint8_t { kData = 1, kAck = 2, kPing = 3, kCheck = 4, kDone = 5, kKey = 6 };
inline std::uint64_t tagOf(TagKind kind, int sender) {
  return (static_cast<std::uint64_t>(kind) << 56) | static_cast<std::uint32_t>(sender);
}
inline constexpr std::uint64_t kFullMask = ~std::uint64_t{0};

// What a rank's UCX must do besides tag matching.
struct UcpOptions {
  bool rma = false;         // remote memory access (ucp_put_nbx)
  bool cudaMemory = false;  // move CUDA device memory (the context must know UCS_MEMORY_TYPE_CUDA)
  std::string netDevices;   // when not empty, replaces UCX_NET_DEVICES ("mlx5_0:1": --nic-per-rank)
};

class Ucp {
 public:
  // Collective over `world`: every rank starts UCX (the UCX_* environment: UCX_TLS,
  // UCX_NET_DEVICES, ...), the workers' addresses are exchanged, and each rank reaches its next
  // rank. Where any rank cannot, every rank throws the same UsageError naming the first rank that
  // failed and why (an unknown transport, none that reaches the peer, a UCX built without CUDA
  // asked to move CUDA memory).
  Ucp(MPI_Comm world, const UcpOptions& options);
  ~Ucp();
  Ucp(const Ucp&) = delete;
  Ucp& operator=(const Ucp&) = delete;

  int rank() const { return rank_; }
  ucp_context_h context() const { return context_; }
  ucp_worker_h worker() const { return worker_; }
  // The endpoint to world rank `peer`, made on first use.
  ucp_ep_h endpoint(int peer);
  // One turn of the worker's progress in a wait; `idle` counts the wait's turns in a row that
  // moved nothing (start it at 0). Past kSpinsBeforeYield of them every idle turn also yields the
  // core: a rank waiting long on a slow peer lets the ranks that share its core run (4 ranks on
  // 2 cores starved a healthy pair 25x beside a throttled one), while a wait of microseconds, a
  // ping-pong's, only spins.
  void progress(unsigned& idle);
  // Waits for a request an *_nbx call returned, progressing the worker; throws on failure.
  void wait(ucs_status_ptr_t request, const char* what);
  // Waits for all of them.
  void waitAll(std::vector<ucs_status_ptr_t>& requests, const char* what);
  // Ends an exchange with `peer` on both sides: every operation toward it completed there (a flush,
  // which may need the peer's progress), then a UCX handshake. A rank leaves only once the peer's
  // flush is done, so neither waits in MPI while the other still needs its UCX progress (a
  // rendezvous' last acknowledgement).
  void finish(int peer);
  // What UCX chose toward `peer`: ucp_ep_print_info's text.
  std::string endpointInfo(int peer);
  // The world ranks this rank has an endpoint to, ascending.
  std::vector<int> connectedPeers() const;

 private:
  // this rank's part; why it failed, empty when it did not
  std::string start(const UcpOptions& options);
  std::string reachNext();    // an endpoint to the next rank; why not
  void release();             // closes the endpoints, destroys the worker and the context
  ucp_context_h context_ = nullptr;
  ucp_worker_h worker_ = nullptr;
  static constexpr unsigned kSpinsBeforeYield = 128;
  int rank_ = 0;
  int size_ = 1;
  std::vector<std::vector<char>> addresses_;  // every rank's worker address
  std::vector<ucp_ep_h> endpoints_;           // by world rank; null until first used
};

// A buffer of this rank allocated and registered by UCX (ucp_mem_map with UCP_MEM_MAP_ALLOCATE, as
// ucx_perftest's buffers are: memory UCX can also map into a peer on the same host, where a
// malloc'd buffer is reachable only through a system call per transfer), host or CUDA memory as
// `type` says; `remote`: its key packed for the peers' remote writes (ucp_rkey_pack). Freed when
// destroyed. Local.
class Registered {
 public:
  Registered(ucp_context_h context, std::size_t length, ucs_memory_type_t type = UCS_MEMORY_TYPE_HOST,
             bool remote = true);
  std::byte* data() const { return data_; }
  ~Registered();
  Registered(const Registered&) = delete;
  Registered& operator=(const Registered&) = delete;
  // The buffer's address and the packed key, as a peer needs them to write into it (`remote`).
  const std::vector<char>& description() const { return description_; }

 private:
  ucp_context_h context_;
  ucp_mem_h memory_ = nullptr;
  std::byte* data_ = nullptr;
  std::vector<char> description_;  // the address (8 bytes), then the packed key
};

// A peer's registered buffer as this rank writes into it: its address and the key unpacked for
// the endpoint to it (ucp_ep_rkey_unpack); the key destroyed with it.
class RemoteBuffer {
 public:
  RemoteBuffer(ucp_ep_h endpoint, const std::vector<char>& description);
  ~RemoteBuffer();
  RemoteBuffer(const RemoteBuffer&) = delete;
  RemoteBuffer& operator=(const RemoteBuffer&) = delete;
  std::uint64_t address() const { return address_; }
  ucp_rkey_h key() const { return key_; }

 private:
  std::uint64_t address_ = 0;
  ucp_rkey_h key_ = nullptr;
};

// ucp_ep_print_info's text in a line: each lane's transport/device with what UCX uses it for, in
// lane order, then where tag sends switch to rendezvous: "self/memory0 (am, am_bw); cma/memory
// (rma_bw); tag rendezvous from 8192 B". Empty when the text has no lanes.
std::string summarizeEndpoint(const std::string& printed);

// The memory domains of this process's UCX that register CUDA memory (uct_md_query): "mlx5_0"
// where the NIC can reach GPU memory directly (GPUDirect RDMA), "cuda_cpy", "cuda_ipc", ...
std::vector<std::string> cudaRegisteringDomains();

// How an endpoint whose lanes summarizeEndpoint described moves CUDA memory, from what its
// transports can do: "CUDA IPC" (a cuda_ipc lane: GPU to GPU inside the node), "GPUDirect RDMA on
// mlx5_0" (a bandwidth lane whose device's domain, in `domains`, registers CUDA memory), else
// "staged through host memory" (UCX copies between the GPU and host buffers the network reaches).
std::string cudaPathOf(const std::string& lanes, const std::vector<std::string>& domains);

// "1.13.1": the UCX library this process runs with.
std::string versionString();

}  // namespace fabricmap::worker::ucx
