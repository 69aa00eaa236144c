// The interface every backend (a folder under worker/) implements. A backend owns its buffers and
// devices; the executor owns timing order, checks and gathering, so every backend is measured the
// same way.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/dtype.h"
#include "core/ops.h"
#include "core/pattern.h"
#include "core/plan.h"

namespace fabricmap::worker {

// One collective as a group runs it: what to call and on how many elements.
struct CollectiveSpec {
  core::Op op = core::Op::kAllReduce;
  core::DType dtype = core::DType::kFloat;
  core::RedOp redop = core::RedOp::kSum;
  int root = 0;  // group rank
  bool inPlace = false;
  core::OpShape shape;
  core::Pattern pattern;  // test data of this step
};

// A prepared collective with its buffers. Not thread-safe; one is alive per rank at a time.
class CollectiveRunner {
 public:
  virtual ~CollectiveRunner() = default;
  // Input buffers get the step's pattern, output buffers the pattern's poison value.
  virtual void fill() = 0;
  // Runs the op once, complete on this rank when it returns.
  virtual void runOnce() = 0;
  // Runs `iters` ops back to back; returns when each completed on this rank, in seconds since
  // the call began (entry i is the completion of op i).
  virtual std::vector<double> timeIterations(int iters) = 0;
  // Runs `iters` ops back to back with nothing recorded between them and returns the seconds
  // until the last completed on this rank; negative where timeIterations already costs nothing
  // between the ops (the host backends), so its figures stand.
  virtual double timeBatch(int /*iters*/) { return -1; }
  // Output elements of this rank that differ from the expected values.
  virtual std::uint64_t countWrong() = 0;
  // Fault injection for tests: changes output element `element` so the check must catch it.
  virtual void corruptOutput(std::uint64_t element) = 0;
};

// What a round of pairwise transfers streams.
struct PairSpec {
  std::uint64_t bytes = 0;  // message size
  int window = 1;           // messages in flight per iteration
  int iters = 1;            // timed iterations
  int warmup = 0;           // untimed iterations before them
  int latencyIters = 0;     // ping-pong round trips
  std::uint64_t latencyBytes = 8;
  std::uint32_t seed = 0;   // test pattern of the checked transfer
  // Seconds past which the last warm window marks the pair clearly slow: then that window is its
  // figure and both sides time no more, so that a broken cable does not hold every round it is in
  // (0: never).
  double slowWindow = 0;
  // A probe before the windows, where the backend has one: a short window of probeMessages of
  // probeBytes each (0: none), sent `probes` times where it took past slowProbe seconds (a first
  // contact may set the connection up); past it every time, the pair is clearly slow and the
  // probe is its figure: a window at a hundredth of the rate holds the round a hundred healthy
  // windows long.
  int probeMessages = 0;
  std::uint64_t probeBytes = 0;
  int probes = 1;
  double slowProbe = 0;
};

// Point-to-point transfers between this rank and one peer (a world rank) at a time. Both sides
// call the same method with mirrored roles.
class PairRunner {
 public:
  virtual ~PairRunner() = default;
  // What a stream took on this rank: seconds from a handshake with the peer until its part was
  // done, and the coefficient of variation of its iterations' times (how steady it was).
  struct Timing {
    double seconds = 0;
    double cv = 0;
    int iters = 0;  // the windows timed: spec.iters, or 1 for a clearly slow pair (its last warm one)
    // Both sides found the pair clearly slow (PairSpec::slowWindow, slowProbe): a probe or the
    // last warm window is its figure.
    bool clearlySlow = false;
    double probe = 0;  // seconds of the stream's last probe (0: none)
  };
  // Streams iters x window messages to the peer, from it, or both ways at once; a sender-only side
  // waits for the receiver's acknowledgement, so its time covers delivery.
  virtual Timing stream(int peer, bool send, bool receive) = 0;
  // Ping-pong; returns the one-way latency in seconds (round trip / 2), on both sides.
  virtual double pingPong(int peer, bool initiator) = 0;
  // One patterned message from the sender; the receiver returns how many elements arrived wrong.
  virtual std::uint64_t checkedTransfer(int peer, bool sender) = 0;
};

// What a GPU-pair copy step moves.
struct CopySpec {
  std::uint64_t bytes = 0;  // per copy
  int iters = 1;            // timed copies per phase
  int warmup = 0;
  std::uint32_t seed = 0;   // test pattern of the checked copies
};

// Copies between this rank's memory and one peer's on the same node, each side owning a source
// and a destination buffer the other can reach. Every call is made by both ranks of the pair
// with their roles (collective over the pair).
class CopyRunner {
 public:
  virtual ~CopyRunner() = default;
  // How the pair reaches each other's memory ("peer", "host_staged", "shared_memory"); the
  // same on both sides.
  virtual std::string path() const = 0;
  // Whether `method` can run on this path (the SM kernel needs a peer mapping).
  virtual bool supports(core::CopyMethod method) const = 0;
  // Whether reads (pulling from the peer's memory) mean something on this path.
  virtual bool canRead() const = 0;
  // `iters` copies of spec.bytes started together on both sides. An `active` rank copies: from
  // its source into the peer's destination (`write`), or from the peer's source into its own
  // destination (read); an idle rank only takes part in the start. Returns the active rank's
  // seconds from the common start until its copies completed (0 on an idle rank).
  virtual double transfer(core::CopyMethod method, bool active, bool write) = 0;
  // One copy of a test pattern: the `source` rank's data reaches the other side (written by
  // the source, or read by the destination); the destination returns its wrong elements.
  virtual std::uint64_t checkedCopy(core::CopyMethod method, bool source, bool write) = 0;
};

// One traffic type of the training pattern as this rank takes part in it.
struct TrafficSpec {
  MPI_Comm group = MPI_COMM_NULL;  // this rank's group of the type (pipeline: in stage order)
  std::vector<core::Op> ops;       // the ops of one message, in order
  core::DType dtype = core::DType::kBfloat16;
  std::uint64_t bytes = 0;         // requested size of each op
  int messages = 0;                // per training step
};

// The training pattern's traffic on this rank: every type on its own group, able to run at the
// same time as the others. The data is not checked (the collective sweep checks every op).
class TrafficRunner {
 public:
  virtual ~TrafficRunner() = default;
  // One training step of the types marked in `active` (indices into the specs), all started at
  // once, each sending its messages one after the other (sendrecv: even messages to the next
  // stage and from the previous one, odd ones back). Returns per type the seconds from the start
  // until this rank's part was done; 0 for inactive types.
  virtual std::vector<double> step(const std::vector<bool>& active) = 0;
};

// What a backend needs to know about its rank when it is created.
// The NIC a rank's communication library is pinned to (--nic-per-rank): an RDMA device's port
// ("mlx5_0", 1) or a network interface ("eth0", port 0); empty: the library chooses.
struct NicChoice {
  std::string device;
  int port = 0;
  bool empty() const { return device.empty(); }
  // As UCX_NET_DEVICES and NCCL_IB_HCA name it: "mlx5_0:1", "eth0".
  std::string name() const { return port > 0 ? device + ":" + std::to_string(port) : device; }
};

// How a backend that offers both moves a pair's bytes: two-sided tag matching or one-sided remote
// writes (--ucx-api tag|rma).
enum class PairApi { kTag, kRma };

// How the communication library reaches one peer: the transports and devices it chose, in a line
// ("tcp/eth0 (am, am_bw, rma_bw); tag rendezvous from 8192 B").
struct EndpointPath {
  int peer = 0;  // world rank
  std::string transports;
};

// Where a backend's buffers live.
enum class MemoryKind { kHost, kCuda };

struct BackendContext {
  int localRank = 0;                 // index among the ranks of this node
  int gpusPerNode = 0;               // GPUs to spread local ranks over; 0: all the rank sees
  double stepTimeoutSeconds = 600;   // a wait on the device longer than this is a fault
  bool cudaGraph = false;            // time collectives as one captured CUDA graph per batch
  PairApi pairApi = PairApi::kTag;   // ucx: tag matching or remote writes
  NicChoice nic;                     // pin the library to this NIC; empty: its own choice
  MemoryKind pairMemory = MemoryKind::kHost;  // where pair buffers live (--pair-memory)
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string_view name() const = 0;
  // PCI bus id of the GPU this rank measures with; empty for host-memory backends.
  virtual std::string deviceBusId() const { return {}; }
  // Every peer this rank opened an endpoint to, and how the library reaches it; empty where the
  // library does not say. Local.
  virtual std::vector<EndpointPath> endpointPaths() { return {}; }
  // Empty when this backend can run the collective; otherwise why not (recorded as waived).
  virtual std::string waiver(const CollectiveSpec& spec) const = 0;
  // Prepares one collective for `group`, a communicator this rank belongs to. Collective over
  // `group`.
  virtual std::unique_ptr<CollectiveRunner> prepare(MPI_Comm group, const CollectiveSpec& spec) = 0;
  // Buffers for pairwise transfers between ranks of `world`. Local (no communication).
  virtual std::unique_ptr<PairRunner> preparePairs(MPI_Comm world, const PairSpec& spec) = 0;
  // The methods of GPU-pair copies, in the order they are measured; empty: no copies.
  virtual std::vector<core::CopyMethod> copyMethods() const = 0;
  // Copies between the two ranks of `pair` (same node, rank 0 is the pair's `a`). Collective
  // over `pair`: both map each other's buffers.
  virtual std::unique_ptr<CopyRunner> prepareCopies(MPI_Comm pair, const CopySpec& spec) = 0;
  // Buffers (and, for GPUs, a stream and communicator per type) for the training pattern.
  // Collective over each spec's group.
  virtual std::unique_ptr<TrafficRunner> prepareTraffic(const std::vector<TrafficSpec>& specs) = 0;
};

// What a backend is, for the orchestrator to ask instead of comparing names. Each backend
// registers one from its own folder (worker/<name>/info.cpp, compiled in every build, so a backend
// this build lacks is still known by name) in worker/backends.cpp's list.
struct BackendInfo {
  std::string_view name;
  // kCuda: one GPU per rank, the GPU sizes of the suite, GPU-pair copies by default.
  MemoryKind memory = MemoryKind::kHost;
  struct Measures {
    bool collectives = false;
    bool pairs = false;
    bool copies = false;   // GPU-pair (or shared-memory) copies inside a node
    bool traffic = false;  // the training pattern and the scaling sweep
    bool graphs = false;   // collectives timed as captured CUDA graphs (--cuda-graph)
    bool rma = false;      // pairs by one-sided remote writes as well as two-sided (--ucx-api rma)
    bool cudaPairs = false;  // pairs from GPU memory besides its own kind's (--pair-memory cuda)
  } measures;
  // Its all_reduce's busbw reaches the links' rate (a bandwidth-optimal ring, as NCCL runs it), so
  // below_line_rate judges the inter scope's rails by it. Open MPI's algorithms over TCP reach about
  // half of it: judged there, a healthy rail would be named.
  bool busbwAtLineRate = false;
  // --nic-per-rank: its library takes the rank's NIC from BackendContext::nic (after MPI_Init).
  // Otherwise it is MPI's own, pinned before MPI_Init (orchestrator/run/nic_pinning.h).
  bool pinsNics = false;
  // Creates it on this rank; null when this build does not have it.
  std::unique_ptr<Backend> (*create)(const BackendContext& context) = nullptr;

  bool available() const { return create != nullptr; }
};

}  // namespace fabricmap::worker
