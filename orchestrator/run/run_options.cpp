// `fabricmap run`'s option table and suites (see run_options.h).
#include "orchestrator/run/run_options.h"

#include <sstream>

#include "core/error.h"
#include "orchestrator/run/run_config.h"

namespace fabricmap::orchestrator {
namespace po = boost::program_options;
namespace {

// quick: a whole sweep in well under a minute on a small host; full: up to 1 GiB, nccl-tests' -f 2.
constexpr Suite kSuites[] = {
    {"quick", "8", "8M", 4, 20, 2, "256K", 10, 100, "1G", "4M", "16M", "256M", 10, 512, 1024, 2048, 4096, 10, "8M", "256M"},
    {"full", "8", "1G", 2, 20, 5, "1M", 20, 1000, "8G", "16M", "64M", "1G", 20, 1024, 2048, 4096, 8192, 20, "64M", "1G"},
};

// The sweep (nccl-tests' options and the layout of ranks and groups), in --help's order.
void addSweepOptions(po::options_description& d) {
  // clang-format off
  d.add_options()
    ("help,h", "show this help")
    ("suite", po::value<std::string>()->default_value("quick"),
     "preset sweep: quick (8 B..8 MiB, x4) or full (8 B..1 GiB, x2); explicit options override")
    ("backend", po::value<std::string>()->default_value("auto"),
     "auto | mpi | nccl | ucx (auto: nccl when every rank has a GPU; ucx: the pairs over UCP only)")
    ("min-bytes,b", po::value<std::string>(), "smallest message size (K/M/G = 1024^n)")
    ("max-bytes,e", po::value<std::string>(), "largest message size")
    ("step-factor,f", po::value<std::string>(), "multiply the size by this integer > 1 each step")
    ("step-bytes,i", po::value<std::string>(), "add this many bytes each step instead")
    ("iters,n", po::value<int>(), "timed iterations per size")
    ("warmup-iters,w", po::value<int>(), "untimed warm-up iterations per size")
    ("check,c", po::value<int>()->default_value(1), "check results exactly: 1 (default) or 0")
    ("noise-cv", po::value<double>()->default_value(0.2),
     "mark a step noisy when a group's iteration times vary beyond this coefficient of variation")
    ("step-timeout", po::value<double>(),
     "seconds any step may take before the job ends as hung, naming the ranks that hold it up "
     "(default: 300 s plus the step's data at 50 MB/s)")
    ("cuda-graph", "nccl backend: capture each size's timed iterations into a CUDA graph and launch it once")
    ("cudagraph,G", po::value<int>(), "nccl-tests' form of --cuda-graph: 0 off, 1 or more on")
    ("dtype,d", po::value<std::string>()->default_value("float"),
     "element type(s): int8 uint8 int32 uint32 int64 uint64 half float double bfloat16, a "
     "comma list, or all")
    (",o", po::value<std::vector<std::string>>()->composing(),
     "reduction op(s) sum|prod|min|max|all (as nccl-tests), or the output file when the value "
     "is a path (has a '.' or '/')")
    ("op", po::value<std::string>(), "reduction op(s): sum, prod, min, max, a comma list, or all")
    ("output", po::value<std::string>(), "results file (default results/<UTC time>.h5)")
    ("force", "replace the results file when it exists (without it an existing file is refused)")
    ("ops", po::value<std::string>()->default_value("all"),
     "collectives: all_reduce,all_gather,reduce_scatter,broadcast,reduce,alltoall,sendrecv or all")
    ("root,r", po::value<int>()->default_value(0), "root rank within each group (broadcast, reduce)")
    ("min-group", po::value<int>()->default_value(2),
     "smallest group to run collectives in; 1 also runs one-rank groups (a one-GPU smoke test: "
     "results are checked, busbw is 0 by definition)")
    ("in-place", "run in-place only (with --out-of-place: both)")
    ("out-of-place", "run out-of-place only (with --in-place: both)")
    ("placement", po::value<std::string>(), "out-of-place | in-place | both (default both)")
    ("scopes", po::value<std::string>()->default_value("world,intra,inter"),
     "world (all ranks), intra (per node), inter (per local rank across nodes)")
    ("gpus-per-node", po::value<int>(),
     "GPUs per node to bind local ranks to (local rank modulo this, so more ranks share GPUs; "
     "default: every visible GPU, one rank each)")
    ("ranks-per-node", po::value<int>(),
     "treat consecutive blocks of K ranks as one node (testing on one machine; recorded as emulated)")
    ("progress", po::value<std::string>()->implicit_value("live"),
     "live | lines | off (default: live when stderr is a terminal)");
  // clang-format on
}

// The phases (collectives, copies, pairwise, training, scaling), their judging, and running.
void addPhaseOptions(po::options_description& d) {
  // clang-format off
  d.add_options()
    ("collectives", "run the collective sweeps only (default: collectives and pairwise)")
    ("pairwise", "run the pairwise bandwidth/latency matrices (phases given: only those run)")
    ("copies", "run the GPU-pair copy matrix inside each node (default with GPUs; on the mpi "
               "backend, host-memory copies between a node's ranks)")
    ("copy-bytes", po::value<std::string>(), "bytes per GPU-pair copy (quick suite: 256M on GPUs, 16M host)")
    ("copy-iters", po::value<int>(), "timed copies per direction and method (quick suite: 10)")
    ("pairwise-mode", po::value<std::string>()->default_value("full"),
     "full: every rank and node pair (circle method, n-1 rounds); quick: a few random peers each")
    ("pairwise-peers", po::value<int>()->default_value(3), "quick mode: random peers per rank/node")
    ("pair-bytes", po::value<std::string>(), "pairwise stream message size (quick suite: 256K, on GPUs 4M)")
    ("pair-window", po::value<int>(), "pairwise messages per iteration, acknowledged per window as osu_bw (default 64, 1..1024)")
    ("pair-iters", po::value<int>(), "pairwise timed iterations")
    ("nic-per-rank", po::value<std::string>(),
     "pin each rank's library to one NIC: auto (the NIC nearest its GPU; without GPUs the node's active "
     "RDMA ports, else its interfaces, in turn by local rank) or a list such as mlx5_0:1,mlx5_1:1 (local "
     "rank i takes entry i modulo their number): UCX's NET_DEVICES (ucx), NCCL_IB_HCA (nccl), "
     "UCX_NET_DEVICES and btl_tcp_if_include before MPI_Init (mpi); recorded per rank (nic_pinned)")
    ("ucx-api", po::value<std::string>()->default_value("tag"),
     "ucx backend: how pairs move bytes: tag (ucp_tag_send_nbx, as ucx_perftest tag_bw/tag_lat) or rma "
     "(ucp_put_nbx into the peer's registered buffer and a flush, as put_bw/put_lat)")
    ("pair-memory", po::value<std::string>()->default_value("auto"),
     "where pair buffers live: auto (the backend's own: GPU memory on nccl, host memory on mpi and "
     "ucx), host, or cuda (ucx backend in a CUDA build: each rank's GPU, moved by a UCX built with "
     "CUDA; GPUDirect RDMA where the NIC registers GPU memory)")
    ("latency-iters", po::value<int>(), "pairwise ping-pong round trips (8 B)")
    ("retests", po::value<int>()->default_value(2), "re-measurements of a pair flagged slow")
    ("min-confidence", po::value<double>()->default_value(0.5),
     "findings less sure than this (0..1: supporting pairs, their clarity, margin over the next "
     "explanation) are reported as information only")
    ("slow-threshold", po::value<double>()->default_value(0.9),
     "a pair is slow below this fraction of its link class's baseline, in (0, 1]")
    ("latency-factor", po::value<double>()->default_value(2.0),
     "latency is bad above this multiple of its link class's baseline, >= 1")
    ("line-rate", po::value<double>(),
     "GB/s a node's NICs carry together, to judge its inter-node bandwidth against (below_line_rate); "
     "default: the sum of its active RDMA ports' rates (400G: 50 GB/s)")
    ("line-rate-fraction", po::value<double>()->default_value(0.8),
     "a node below this fraction of its line rate is below_line_rate, in (0, 1]")
    ("sysfs-root", po::value<std::string>()->default_value("/sys"),
     "the sysfs tree each node's inventory is read from (a saved copy for tests and triage)")
    ("fabric", po::value<std::string>(),
     "the fabric's topology: ibnetdiscover output or \"node -> leaf\", \"leaf -> spine\" lines; slow node "
     "pairs are then blamed on switches and uplinks where those explain them (read by rank 0, /fabric)")
    ("patterns", po::value<std::string>(),
     "phases to run, a comma list: collectives, copies, pairwise, training (like the phase "
     "switches: only those run)")
    ("layout", po::value<std::string>(),
     "training pattern: tp=T,pp=P,dp=D[,ep=E] in Megatron-LM rank order (TP innermost); "
     "default tp = ranks per node, dp = nodes")
    ("strict-layout", "refuse a layout whose tensor-parallel groups cross nodes (default: a warning finding)")
    ("micro-batch", po::value<int>()->default_value(1), "training pattern: sequences per micro-batch (b)")
    ("seq-len", po::value<int>(), "training pattern: tokens per sequence (s; quick suite: 512 host, 2048 GPUs)")
    ("hidden", po::value<int>(), "training pattern: hidden size (h; quick suite: 1024 host, 4096 GPUs)")
    ("layers", po::value<int>()->default_value(2), "training pattern: layers simulated per pipeline stage")
    ("top-k", po::value<int>()->default_value(2), "training pattern: experts per token (EP alltoall)")
    ("sequence-parallel", "training pattern: TP as all_gather + reduce_scatter pairs (Megatron sequence parallelism)")
    ("dp-mode", po::value<std::string>()->default_value("allreduce"),
     "training pattern: allreduce (DDP buckets) or zero (reduce_scatter + all_gather, ZeRO/FSDP)")
    ("bucket-bytes", po::value<std::string>()->default_value("25M"), "training pattern: DP gradient bucket size")
    ("train-dtype", po::value<std::string>()->default_value("bfloat16"), "training pattern: element type")
    ("train-iters", po::value<int>(), "training pattern: timed training steps per measurement (quick suite: 10)")
    ("scaling", "run the scaling sweep: one all_reduce on 2, 4, ... GPUs of every node and on 1, 2, 4, ... nodes")
    ("scaling-bytes", po::value<std::string>(), "scaling sweep: all_reduce size per rank (quick suite: 8M host, 256M GPUs)")
    ("storage", po::value<std::string>(),
     "run the storage feed under this directory (a phase): each reading rank reads its own files in "
     "large sequential reads, then 4 KiB reads at random offsets, the page cache kept out (O_DIRECT, "
     "else evicted); /storage per rank, node and job")
    ("storage-write", "--storage: write the run's own files first (PATH/fabricmap-storage/, removed at the "
                      "end) and measure that; without it the files already under PATH are read")
    ("storage-ranks", po::value<std::string>()->default_value("all"),
     "--storage: all ranks read, or node (each node's first)")
    ("storage-bytes", po::value<std::string>()->default_value("1G"),
     "--storage: bytes each reading rank writes or reads")
    ("accept", po::value<std::string>(),
     "acceptance in one run: measure what this profile judges (a built-in such as hgx-h100-8, or a profile "
     "file), then judge the file as `fabricmap verify` does, record the verdict in it and print it last; "
     "exit 0 on PASS, 1 on FAIL or NOT JUDGED")
    ("allow-missing", "--accept: a check the file cannot answer does not fail the verdict (PASS on what was judged)")
    ("preflight",
     "check before measuring anything, then stop: every rank runs the same fabricmap build, sees the "
     "expected GPUs (the same count on every node, one per rank on the nccl backend, --gpus-per-node), "
     "and the output can be written; exit 0 when all is well, 2 naming each problem")
    ("resume", po::value<std::string>(),
     "finish the incomplete run recorded in FILE.h5: run only the steps it lacks, with its "
     "configuration, on the same rank layout, and mark it complete")
    ("inject-fault", po::value<std::vector<std::string>>()->composing(),
     "TESTING ONLY: corrupt:rank=R[:op=OP][:step=N] changes an output element before the check; "
     "error:rank=R[:op=OP][:step=N] fails that rank with a runtime error; stall:rank=R:step=N "
     "hangs it (sleeps forever); crash:rank=R:step=N kills it (SIGKILL)");
  // clang-format on
}

}  // namespace

const Suite& suiteNamed(const std::string& name) {
  for (const Suite& s : kSuites) {
    if (name == s.name) return s;
  }
  throw core::UsageError("unknown suite '" + name + "' (quick or full)");
}

po::options_description describeOptions() {
  po::options_description d("fabricmap run options");
  addSweepOptions(d);
  addPhaseOptions(d);
  return d;
}

std::string runHelpText() {
  std::ostringstream out;
  out << "usage: mpirun -np N fabricmap run [options]\n\n"
         "Measures collectives on every scope (all ranks, each node, each rail across nodes) and\n"
         "writes an HDF5 results file. Sizes take K/M/G suffixes (powers of 1024); rates are\n"
         "GB/s (1e9 B/s) as in nccl-tests.\n\n"
      << describeOptions();
  return out.str();
}

}  // namespace fabricmap::orchestrator
