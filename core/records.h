// Measurement and description records: what workers produce and sinks (HDF5, console, JSON)
// format. Plain data with names as strings, so a reader of an older or newer file still works.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "core/fabric.h"
#include "core/findings.h"
#include "core/stats.h"

namespace fabricmap::core {

// What one rank sees of its own host at start, before anything is gathered.
struct HostProbe {
  std::string hostname;
  int cpu = -1;
  int numaNode = -1;
  int gpuCount = 0;
  int cpus = 0;                         // CPUs this rank may run on (its affinity mask)
  std::vector<std::uint64_t> cpuMask = {};  // that mask, 64 CPUs per word (empty: unknown)
  std::uint64_t memAvailableBytes = 0;  // MemAvailable of the host
  int sharedLeader = -1;  // lowest world rank sharing memory with this rank (its node's leader)
  int visibleGpus = 0;    // GPUs this rank may use: gpuCount, or fewer by CUDA_VISIBLE_DEVICES
  std::string tool = {};  // "fabricmap <version> (<git revision>)" this rank runs
  // The running kernel's boot id (/proc/sys/kernel/random/boot_id; empty when unreadable): the
  // same for every process of one machine, network namespaces and containers included.
  std::string bootId = {};
};

struct RankRecord {
  int rank = 0;
  int node = 0;
  int localRank = 0;
  std::string hostname;
  int cpu = -1;       // CPU the rank ran on at start
  int numaNode = -1;  // NUMA node of that CPU
  int gpuIndex = -1;  // -1: no GPU bound
  std::string gpuUuid;
  std::string gpuName;
  std::string gpuBusId;
  std::uint64_t gpuMemoryBytes = 0;
  std::string cpus;     // the CPUs the rank may run on, its affinity at start ("0-7,64-71"); empty: unknown
  std::string nic;      // nearest RDMA NIC of the rank's GPU, empty when unknown
  std::string nicPath;  // its PCIe path (PIX, PXB: GPUDirect RDMA friendly; PHB, NODE, SYS)
  // Whether the CPUs it may run on are those near its GPU and near its NIC (the devices'
  // local_cpulist): "yes" all, "partly" some, "no" none; empty: unknown
  std::string nearGpu;
  std::string nearNic;
  std::string pinnedNic;  // --nic-per-rank: the NIC its library was pinned to ("mlx5_0:1"); empty: not pinned
};

struct NodeRecord {
  int node = 0;
  std::string name;      // hostname, or "<hostname>/<k>" for an emulated node
  std::string hostname;  // the real host
  int ranks = 0;
  int gpus = 0;
  int cpus = 0;  // CPUs the ranks on this host may run on: the union of their masks (0: unknown)
  std::uint64_t memAvailableBytes = 0;  // host memory available at start
  // Its kernel's boot id (HostProbe): nodes with the same one are one machine (emulated nodes,
  // network namespaces, containers), whose ranks share its CPUs and scheduler. Empty: unknown.
  std::string bootId;
  std::string nics;           // "mlx5_0 400G IB, ..." when known
  std::string topologyClass;  // FULL_NVSWITCH, ..., NO_GPU; UNCLASSIFIED when discovery could not
  std::string nvswitch;       // "yes", "no", "unknown" (discovery's verdict)
  std::string topologyWarnings;  // discovery's and classification's warnings, "; "-separated
  std::vector<std::string> gpuLinks;  // G x G `nvidia-smi topo -m` codes ("X", "NV18", "PIX", ...)
  int gpuLinkCount() const;           // G, from gpuLinks
};

// A node's hardware inventory as a results file keeps it (/inventory/*; topologies/inventory.h
// reads it from sysfs and says what each field means). A value that could not be read is empty,
// 0 or -1, and the node's `notes` say why.
struct NicRecord {  // /inventory/nics: an RDMA port, or an Ethernet NIC without RDMA
  int node = 0;
  std::string device;  // mlx5_0; the interface's name for an Ethernet NIC
  int port = 0;        // 0 for an Ethernet NIC
  std::string kind;    // "rdma" or "ethernet"
  std::string state;   // ACTIVE, DOWN, ... (an Ethernet NIC's operstate: up, down, ...)
  std::string physState;
  double rateGbps = 0;
  int width = 0;
  std::string speed;
  std::string linkLayer;  // IB, RoCE, Ethernet, unknown
  std::string netdev;
  std::string pciBusId;
  int numaNode = -1;

  bool activeRdma() const { return kind == "rdma" && state == "ACTIVE"; }
};

struct PcieRecord {  // /inventory/pcie: a GPU's or NIC's PCIe link
  int node = 0;
  std::string device;  // "GPU" or the NIC's name
  std::string busId;
  bool gpu = false;
  double speedGTs = 0;
  double maxSpeedGTs = 0;
  int width = 0;
  int maxWidth = 0;
  double slotMaxSpeedGTs = 0;
  int slotMaxWidth = 0;
  int numaNode = -1;
  std::string localCpus;  // the CPUs near it, as the kernel lists them ("0-55,112-167")
};

struct GpuInventoryRecord {  // /inventory/gpus: a GPU of a node, as NVML and sysfs describe it
  int node = 0;
  int index = -1;  // NVML's index on its node
  std::string busId;
  std::string name;
  std::uint64_t memoryBytes = 0;
  int numaNode = -1;
  std::string nic;      // its nearest RDMA NIC; empty: none known
  std::string nicPath;  // PIX, PXB, PHB, NODE, SYS
  // the health of its memory (topologies/gpu_topology.h GpuMemoryHealth): "yes", "no", "unknown";
  // counts -1 when unknown
  std::string ecc;
  std::string eccPending;
  int retiredSingleBit = -1;
  int retiredDoubleBit = -1;
  std::string retirePending;
  int remappedCorrectable = -1;
  int remappedUncorrectable = -1;
  std::string remapPending;
  std::string remapFailed;
};

struct NodeInventoryRecord {  // /inventory/node: what is known of the node as a whole
  int node = 0;
  int gpus = 0;           // NVIDIA GPUs on its PCI bus
  std::string gpuDirect;  // GPUDirect RDMA: yes, no, unknown
  std::string gpuDirectHow;
  std::string notes;  // what could not be read, and why; "; "-separated
};

struct CounterRecord {  // /inventory/counters: a port's error counter at the run's start and end
  int node = 0;
  std::string device;
  int port = 0;
  std::string counter;
  std::uint64_t start = 0;
  std::uint64_t end = 0;

  // What grew during the run; a counter that went down was reset (or wrapped): all of it is new.
  std::uint64_t growth() const { return end >= start ? end - start : end; }
};

// /inventory/endpoints: how the communication library reached a rank's peers (the ucx backend:
// ucp_ep_print_info in a line), one row per rank and distinct way, its peers as ranges.
struct EndpointRecord {
  int rank = 0;
  std::string peers;       // "1-3,5"
  std::string transports;  // "tcp/eth0 (am, am_bw, rma_bw); tag rendezvous from 8192 B"
};

struct InventoryRows {
  std::vector<NicRecord> nics;
  std::vector<PcieRecord> pcie;
  std::vector<GpuInventoryRecord> gpus;    // from each node's GPU discovery
  std::vector<NodeInventoryRecord> nodes;  // one per node whose inventory was read
  std::vector<CounterRecord> counters;     // at the end of the run
  std::vector<EndpointRecord> endpoints;   // at the end of the run, where the backend says
};

struct Topology {
  std::vector<RankRecord> ranks;
  std::vector<NodeRecord> nodes;
  InventoryRows inventory;  // empty when not read (older files, imported logs)
  bool emulated = false;  // nodes are blocks of consecutive ranks (--ranks-per-node)
  int ranksPerNode = 0;   // the block size when emulated
  FabricGraph fabric;     // the switches above the nodes (--fabric); empty when not given
};

// Rank 0's own real costs in a run (its thinking, not the measuring): seconds of its clock (real
// time, also where MPI_Wtime is simulated) planning (the plan, then each retest's suspects and
// rounds), analysing (the matrices and the findings) and feeding the sinks (formatting and
// writing every record until the end, the file's last flush not counted), and the process's peak
// resident memory (under SimGrid's SMPI, every simulated rank's process at once).
struct RankZeroCosts {
  double planSeconds = 0;
  double analysisSeconds = 0;
  double writeSeconds = 0;
  std::uint64_t peakRssBytes = 0;
};

// Root attributes of a results file: where and how it was measured.
struct Provenance {
  int schemaVersion = 4;  // what a file says; the sinks write results/schema.h kSchemaVersion
  std::string toolVersion;
  std::string gitRevision;
  std::string createdUtc;
  std::string commandLine;
  std::string backend;
  std::string mpiVersion;
  std::string mpiTransport;     // Open MPI's selected pml (and btls or mtl) on rank 0; empty when unknown
  std::string ncclVersion;
  std::string cudaRuntimeVersion;
  std::string cudaDriverVersion;
  std::string ncclEnvironment;  // the NCCL_* variables rank 0 ran with, "NAME=value" per line
  std::string ucxVersion;       // empty when built without UCX
  std::string ucxEnvironment;   // the UCX_* variables rank 0 ran with, "NAME=value" per line
  std::string slurmJobId;
  std::string slurmNodelist;
  std::string slurmPartition;    // SLURM_JOB_PARTITION
  std::string slurmGpusPerNode;  // SLURM_GPUS_PER_NODE as Slurm gives it ("8", "h100:8")
  std::string launcher;          // "srun", "mpirun" or "unknown": what started the ranks
  std::string hostnames;  // comma-separated, node order
  int worldSize = 0;
  int nodeCount = 0;
  bool emulated = false;
  int ranksPerNode = 0;
  int plannedSteps = 0;
  std::string runConfig;  // the normalized run configuration as JSON
  std::string runArguments;  // the arguments after `run`, a JSON array (what --resume re-parses)
  std::string resumed;       // one line per --resume of this run: when, steps kept, the command
  std::string importedFrom;  // `fabricmap import`: the logs read, a JSON array; empty for a run
};

// One test of an imported log (`fabricmap import nccl-tests`): a row of /imported. The log's own
// summary lines are kept as given, so an imported file still says what the provider's log said.
struct ImportRecord {
  std::string file;  // the log as named on the command line
  std::string format;  // "nccl-tests"
  std::string op;
  std::string toolVersion;  // the nccl-tests version the log prints; empty when it prints none
  std::string ncclVersion;  // the NCCL version the log's INFO lines print; empty when none
  std::string parameters;   // the "nThread 1 nGpus 8 minBytes ..." line as given
  int ranks = 0;
  int nodes = 0;
  int rows = 0;  // table rows (each gives an out-of-place and an in-place step)
  int firstStep = 0;
  int lastStep = 0;
  std::string outOfBounds;          // "0 OK" as given
  double avgBusBandwidth = 0;       // GB/s, the footer's value; NaN when the log has no footer
  std::string avgBusBandwidthLine;  // that footer line as given
};

// One scope (world, intra, inter) and its groups, or why it was waived.
struct ScopeRecord {
  std::string scope;
  int groups = 0;
  std::string members;  // groups separated by ';', ranks as ranges: "0-3;4-7"
  std::string status;   // "active" or "waived"
  std::string reason;
};

// The kind of a planned step, one per row type of StepRows, and its name in /steps and journals.
enum class StepKind : std::uint8_t { kCollective, kCopy, kPairwise, kScaling, kTraining, kStorage };
inline constexpr std::array<std::pair<StepKind, std::string_view>, 6> kStepKindNames{{
    {StepKind::kCollective, "collective"},
    {StepKind::kCopy, "copy"},
    {StepKind::kPairwise, "pairwise"},
    {StepKind::kScaling, "scaling"},
    {StepKind::kTraining, "training"},
    {StepKind::kStorage, "storage"},
}};
inline std::string_view name(StepKind kind) { return nameIn(kStepKindNames, kind); }
inline std::optional<StepKind> parseStepKind(std::string_view text) { return parseIn(kStepKindNames, text); }
inline std::ostream& operator<<(std::ostream& out, StepKind k) { return out << name(k); }

// One planned step, written when it ends.
struct StepRecord {
  int step = 0;
  StepKind kind = StepKind::kCollective;
  std::string scope;
  std::string op;
  std::string dtype;
  std::string redop;  // "none" for data-movement ops
  std::uint64_t bytes = 0;  // requested size
  bool inPlace = false;
  int groups = 0;
  std::string status;  // "ok", "wrong", "unchecked" (-c 0), "waived"
  std::string reason;
  double seconds = 0;  // wall time of the step
  bool noisy = false;  // some group's iteration times varied beyond --noise-cv
};

// One group's measurement of one collective step: a row of the nccl-tests table.
struct CollectiveRecord {
  int step = 0;
  std::string scope;
  int group = 0;
  std::string ranks;  // world ranks as ranges, "0-3" or "0,2"
  int nranks = 0;
  std::string op;
  std::string dtype;
  std::string redop;
  int root = -1;
  bool inPlace = false;
  std::uint64_t bytes = 0;  // counted bytes (S in algbw = S/t)
  std::uint64_t count = 0;  // counted elements
  int iters = 0;
  int warmup = 0;
  TimeStats timeUs;  // per-iteration time of the slowest rank, microseconds
  double algbw = 0;  // GB/s from the mean time (nccl-tests)
  double busbw = 0;
  double algbwMedian = 0;  // GB/s from the median time
  double busbwMedian = 0;
  bool checked = false;     // results were checked (-c 1); otherwise `wrong` means nothing
  std::uint64_t wrong = 0;  // wrong output elements summed over the group's ranks
  std::string wrongRanks;   // ranks that saw wrong elements
};

// One pair's measurement in one round: a row of /pairs. For node pairs, `a` and `b` are nodes and
// the figures aggregate all local rank pairs streaming at once.
struct PairRecord {
  int step = 0;
  std::string level;  // "rank" or "node"
  int a = 0;
  int b = 0;
  int sample = 0;  // 0: first measurement; 1, 2, ...: retests
  std::uint64_t bytes = 0;
  int window = 0;
  int iters = 0;
  int streams = 0;            // concurrent rank pairs (1 for rank level)
  double bwAB = 0;            // GB/s from a to b
  double bwBA = 0;            // GB/s from b to a
  double bwBidir = 0;         // GB/s both directions at once, summed
  double latencyUs = 0;       // one-way latency, half the ping-pong round trip
  std::uint64_t wrong = 0;    // wrong elements in a checked transfer each way
  double cv = 0;              // largest coefficient of variation of a stream's iteration times
                              // (a -> b, b -> a, both): above --noise-cv the sample is noisy
};

// One GPU pair's copies by one method in one copy step: a row of /copies. Rates are GB/s, NaN
// where the method or direction does not apply (through host memory only writes are measured).
struct CopyRecord {
  int step = 0;
  int node = 0;
  int a = 0;  // local ranks of the pair (a < b)
  int b = 0;
  int rankA = 0;  // their world ranks
  int rankB = 0;
  int gpuA = -1;  // their GPU indices (-1: none, host-memory backend)
  int gpuB = -1;
  std::string method;  // "ce", "sm", "host"
  std::string path;    // "peer" (P2P mapping), "host_staged" (no P2P: through pinned host memory),
                       // "shared_memory" (host buffers of the host-memory backend)
  std::uint64_t bytes = 0;
  int iters = 0;
  double writeAB = 0;     // a writes into b's memory
  double writeBA = 0;
  double writeBidir = 0;  // both write at once, summed
  double readAB = 0;      // b reads from a's memory (data moves a -> b)
  double readBA = 0;
  double readBidir = 0;
  std::uint64_t wrong = 0;  // wrong elements in checked copies each way
};

// One traffic type of the training pattern in one mode: a row of /patterns/training. A training
// step (one iteration) is every group of the type sending its `messages` messages in order;
// "concurrent" rows ran with every other type at once, "isolated" rows alone.
struct TrainingRecord {
  int step = 0;
  std::string mode;     // "isolated" or "concurrent"
  std::string traffic;  // "tp", "pp", "dp", "ep"
  std::string ops;      // one message: "all_reduce", "all_gather+reduce_scatter" (sequence
                        // parallel), "reduce_scatter+all_gather" (ZeRO), "sendrecv", "alltoall"
  int groups = 0;       // groups of this type
  int nranks = 0;       // ranks per group
  std::uint64_t bytes = 0;  // counted bytes of one message (per op of a pair, as nccl-tests)
  int messages = 0;         // messages per step on each group (a pair of ops counts once)
  int iters = 0;
  int warmup = 0;
  TimeStats timeUs;  // per step: the slowest rank's time for all its messages, microseconds
  double algbw = 0;  // GB/s: bytes x messages (x 2 for a pair of ops) / median time
  double busbw = 0;  // algbw x the ops' bus factor
  // concurrent rows: median concurrent time / median isolated time of the same traffic (1: no
  // interference); NaN on isolated rows or when the isolated run is missing.
  double interference = std::numeric_limits<double>::quiet_NaN();
  bool noisy = false;  // iteration times varied beyond --noise-cv
};

// One point of the scaling sweep: a row of /patterns/scaling. The same all_reduce (fixed bytes
// per rank) on growing groups: the first n GPUs of every node at once ("gpus"), or every GPU of
// the first n nodes ("nodes").
struct ScalingRecord {
  int step = 0;
  std::string level;  // "gpus" or "nodes"
  int n = 0;          // GPUs per node or nodes
  int groups = 0;     // concurrent groups (one per node for "gpus")
  int nranks = 0;     // ranks per group
  std::string op;     // "all_reduce"
  std::uint64_t bytes = 0;
  int iters = 0;
  TimeStats timeUs;  // per iteration, the slowest rank of any group
  double algbw = 0;
  double busbw = 0;        // GB/s from the median time
  double efficiency = 0;   // busbw / the best busbw at a smaller n of the level (1 at the smallest; NaN: unusable)
  bool noisy = false;
  std::uint64_t wrong = 0;  // wrong output elements over every group (the all_reduce is checked)
};

// One measurement of the storage feed: a row of /storage. Per reading rank ("rank"), per node
// (its ranks at once: bytes summed over the slowest rank's time) and for the whole job ("all").
struct StorageRecord {
  int step = 0;
  std::string test;   // "write" (sequential), "read" (sequential), "randread" (4 KiB at random offsets)
  std::string level;  // "rank", "node", "all"
  int rank = -1;      // world rank; -1 for node and all rows
  int node = -1;      // -1 for the all row
  int ranks = 0;      // ranks whose I/O the row sums
  std::uint64_t bytes = 0;
  std::uint64_t ops = 0;  // reads or writes issued
  std::uint64_t blockBytes = 0;
  double seconds = 0;  // the slowest rank's time
  double gbps = 0;     // bytes / seconds, GB/s
  double iops = 0;     // ops / seconds
  // how the page cache was kept out: "direct" (O_DIRECT), "dropped" (written, synced and evicted
  // with posix_fadvise before reading), "cached" (neither possible: figures may be the cache's)
  std::string cache;
};

// The rows one finished step measured, as the sinks get them: one alternative per step kind's row
// type, viewing the executor's rows (no copy). A new step kind adds its row type here, its table
// in results/schema, and its formatting where a sink shows it; sinks store every kind through the
// schema without naming it.
using StepRows = std::variant<std::span<const CollectiveRecord>, std::span<const CopyRecord>,
                              std::span<const PairRecord>, std::span<const ScalingRecord>,
                              std::span<const TrainingRecord>, std::span<const StorageRecord>>;

// Calls f(std::type_identity<R>{}) for each step kind's row type R, in StepRows' order.
template <class F>
void forEachRowType(F&& f) {
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    (f(std::type_identity<typename std::variant_alternative_t<I, StepRows>::value_type>{}), ...);
  }(std::make_index_sequence<std::variant_size_v<StepRows>>{});
}

// Link classes of rank pairs (the HDF5 enum of /matrix/rank/link_class).
enum class LinkClass : std::uint8_t { kSelf, kNvswitch, kNvlink, kPcie, kSameNodeHost, kInterNode };
inline constexpr std::size_t kLinkClasses = 6;
std::string_view name(LinkClass c);

// A square matrix, row-major; NaN where not measured. Single precision in memory (an 8,192-rank
// matrix is 256 MiB, not 512); files store float64. Dense (n x n values) or sparse (only the cells
// set, in index order: quick pairwise mode measures a few peers per rank, and 16,384 ranks must not
// cost n x n).
struct Matrix {
  int n = 0;
  std::vector<float> values;         // dense: n x n; empty when sparse
  bool sparse = false;
  std::map<std::uint64_t, float> cells;  // sparse: index(row, col) -> value

  float at(int row, int col) const {
    if (!sparse) return values[index(row, col)];
    const auto it = cells.find(index(row, col));
    return it == cells.end() ? std::numeric_limits<float>::quiet_NaN() : it->second;
  }
  // The cell to write (a sparse matrix creates it, NaN).
  float& at(int row, int col) {
    if (!sparse) return values[index(row, col)];
    return cells.try_emplace(index(row, col), std::numeric_limits<float>::quiet_NaN()).first->second;
  }
  std::size_t index(int row, int col) const {
    return static_cast<std::size_t>(row) * static_cast<std::size_t>(n) + static_cast<std::size_t>(col);
  }
  // Calls f(row, col, value) for every finite cell, row by row.
  template <class F>
  void forEachCell(F&& f) const {
    const auto un = static_cast<std::size_t>(n);
    if (sparse) {
      for (const auto& [i, v] : cells) {
        if (std::isfinite(v)) f(static_cast<int>(i / un), static_cast<int>(i % un), v);
      }
      return;
    }
    for (int row = 0; row < n && !values.empty(); ++row) {
      const float* line = values.data() + static_cast<std::size_t>(row) * un;
      for (int col = 0; col < n; ++col) {
        if (std::isfinite(line[col])) f(row, col, line[col]);
      }
    }
  }
  // Calls f(col, value) for every finite cell of `row`.
  template <class F>
  void forEachInRow(int row, F&& f) const {
    forEachInRow(row, 0, n, std::forward<F>(f));
  }
  // Calls f(col, value) for every finite cell of `row` in columns [first, end) (a sparse matrix
  // visits only the cells set).
  template <class F>
  void forEachInRow(int row, int first, int end, F&& f) const {
    if (sparse) {
      for (auto it = cells.lower_bound(index(row, first)); it != cells.end() && it->first < index(row, end); ++it) {
        if (std::isfinite(it->second)) f(static_cast<int>(it->first - index(row, 0)), it->second);
      }
      return;
    }
    for (int col = first; col < end; ++col) {
      const float v = values[index(row, col)];
      if (std::isfinite(v)) f(col, v);
    }
  }
};
Matrix nanMatrix(int n);     // dense, every cell NaN
Matrix sparseMatrix(int n);  // sparse, no cell set

// The link class of every rank pair, without an R x R table: from each rank's node and GPU and
// each node's GPU x GPU classes (O(ranks + GPUs^2) memory), or, read from a file, the R x R table
// it stores (`table`).
struct LinkClasses {
  int n = 0;
  std::vector<LinkClass> table;  // n x n when read from a file; empty otherwise
  std::vector<int> rankNode;     // per rank
  std::vector<int> rankGpu;      // per rank: its GPU's row in its node's block, -1 host memory
  std::vector<int> nodeGpus;     // per node: G
  std::vector<std::size_t> nodeBlock;  // per node: where its G x G block starts in gpuPairs
  std::vector<LinkClass> gpuPairs;
  bool empty() const { return n == 0; }
  LinkClass at(int a, int b) const;
};
// The classes of a topology's rank pairs: different nodes are inter_node; two ranks on the GPUs of
// one node the link between those GPUs (NV* nvswitch or nvlink, PIX/PXB/PHB/NODE/SYS pcie);
// otherwise (host memory, GPUs discovery did not see, a shared GPU) same_node_host.
LinkClasses linkClassesOf(const Topology& topology);

// The worst sample of a cell. A matrix of worst samples may be empty (n = 0) where no pair was
// measured twice: the worst is then the only sample, the best.
inline float worstAt(const Matrix& worst, const Matrix& best, int row, int col) {
  return worst.n > 0 ? worst.at(row, col) : best.at(row, col);
}
// A cell of a matrix that may be empty (n = 0): NaN there.
inline float cellOr(const Matrix& m, int row, int col) {
  return row < m.n && col < m.n ? m.at(row, col) : std::numeric_limits<float>::quiet_NaN();
}

// One node's GPU-pair copy matrices: /matrix/gpu/<node>. Rows and columns are the node's local
// ranks, each driving one GPU; a cell (i, j) is data moving from i to j.
struct CopyMatrices {
  struct ByMethod {
    std::string method;  // "ce", "sm", "host"
    Matrix writeUnidir;  // GB/s, i writes into j
    Matrix writeBidir;   // GB/s, both at once, summed (symmetric)
    Matrix readUnidir;   // GB/s, j reads from i
    Matrix readBidir;
  };
  int node = 0;
  std::vector<int> ranks;         // world rank of each row
  std::vector<int> gpus;          // its GPU index, -1 when none
  std::vector<std::string> path;  // n x n: "self", "peer", "host_staged", "shared_memory", "" (not measured)
  std::vector<ByMethod> methods;
  int n() const { return static_cast<int>(ranks.size()); }
};

// What a healthy link of a class delivers on this fabric (the analysis's baseline).
struct Expected {
  double bandwidth = 0;  // GB/s; NaN when the class has no measurements
  double latency = 0;    // us
  // How much healthy pairs of the class differ from each other: robust coefficient of variation
  // (1.4826 x median absolute deviation / median), 0 on a perfectly uniform fabric.
  double bandwidthSpread = 0;
  double latencySpread = 0;
  // Where the class's bandwidths fall in two groups more than 2x apart (the faulty ones below,
  // see orchestrator/analysis/judging.h), the middle of that gap as a share of the baseline: values
  // below it are slow however much the healthy ones differ. 0: no such gap.
  double bandwidthGapBar = 0;

  // The share of the baseline below which bandwidth is slow: `threshold`, lower where healthy
  // pairs already differ by more (three robust standard deviations) but never below 0.1, and at
  // least the gap's middle (never above `threshold`).
  double bandwidthBar(double threshold) const;
};

// The pairwise and copy results of a run: /matrix/...
struct Matrices {
  bool pairsMeasured = false;  // false: only copies ran; the pairwise matrices hold nothing
  std::string mode;  // "full" or "quick"
  std::uint64_t bytes = 0;
  int window = 0;
  int iters = 0;
  int latencyIters = 0;
  std::uint64_t latencyBytes = 0;
  // Each cell holds the best sample (highest bandwidth, lowest latency); *Worst the worst one.
  // They differ only for pairs measured again (retests), and tell a noisy pair from a slow one.
  Matrix rankUnidir;   // GB/s, row sends to column
  Matrix rankBidir;    // GB/s, symmetric
  Matrix rankLatency;  // us, symmetric
  Matrix rankUnidirWorst;
  Matrix rankLatencyWorst;
  LinkClasses rankLinkClass;
  std::vector<float> rankPeerMedian;     // GB/s per rank, median over what it sent and received
  bool nodeMeasured = false;             // false: node figures derived from the rank matrix
  Matrix nodeBw;       // GB/s, row node's ranks send to column node's ranks at once
  Matrix nodeLatency;  // us
  Matrix nodeBwWorst;
  Matrix nodeLatencyWorst;
  // Baselines, fixed after every pair's first measurement (retests are judged against the bar
  // the other pairs passed with one sample). Unset: the analysis derives them from the matrices.
  bool expectedFixed = false;
  std::array<Expected, kLinkClasses> classExpected{};  // by LinkClass (kSelf unused)
  Expected nodeExpected;
  // Where a class's expected bandwidth comes from the reference specs of a recognised GPU (its
  // NVLink or PCIe peak at the share tuned transfers reach) instead of the measured population:
  // the model named, e.g. "H100 SXM"; empty otherwise.
  std::array<std::string, kLinkClasses> classExpectedFrom{};
  // GPU-pair copies inside nodes (empty when not measured): per node, and folded into rank x rank
  // matrices (the best method and direction of each same-node pair; n = 0 when none measured).
  std::vector<CopyMatrices> copies;
  std::uint64_t copyBytes = 0;
  int copyIters = 0;
  Matrix rankCopyUnidir;  // GB/s, row to column
  Matrix rankCopyBidir;   // GB/s, symmetric
  // Per cell measured once, how noisy that sample was: the coefficient of variation of its
  // iteration times (/pairs time_cv); 0 once retested (the samples' agreement then tells), NaN or
  // n = 0 unknown. Built during the run for the analysis, not written.
  Matrix rankCv;
  Matrix nodeCv;
};

// A bottleneck the analysis found: a row of /findings.
struct Finding {
  Severity severity = Severity::kInfo;
  FindingKind kind = FindingKind::kNode;  // named in the file, JSON and console (core/findings.h)
  std::string subject;   // "node3 (host-3)", "node1 -> node2", "rank 5 (node2)"
  double measured = 0;
  double expected = 0;
  double ratio = 0;      // measured / expected
  std::string unit;      // "GB/s" or "us"
  std::string message;   // one line a person understands
  int nodeA = -1;        // the nodes and ranks the finding names (-1: none)
  int nodeB = -1;
  int rank = -1;
  // How sure the analysis is of this culprit, 0..1: how many pairs support it, how well their
  // samples agree, and its margin over the next explanation. Direct evidence (wrong data, a hang)
  // is 1; below --min-confidence a finding is only information.
  double confidence = 1.0;
};

}  // namespace fabricmap::core
