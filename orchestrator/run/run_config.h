// What `fabricmap run` was asked to do, parsed identically on every rank.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/dtype.h"
#include "core/ops.h"
#include "core/plan.h"
#include "orchestrator/analysis/analysis.h"
#include "orchestrator/analysis/matrices.h"

namespace fabricmap::orchestrator {

enum class Placement { kOutOfPlace, kInPlace, kBoth };
enum class PairwiseMode { kFull, kQuick };
// Where pair buffers live (--pair-memory); kAuto: the backend's own kind (RunConfig::cudaPairs).
enum class PairMemory { kAuto, kHost, kCuda };
enum class ProgressMode { kAuto, kLive, kLines, kOff };

struct RunConfig {
  std::string backend = "auto";
  std::string suite = "quick";
  std::uint64_t minBytes = 0;
  std::uint64_t maxBytes = 0;
  std::uint64_t stepFactor = 0;
  std::uint64_t stepBytes = 0;  // > 0: additive steps instead of the factor
  int iters = 0;
  int warmup = 0;
  bool check = true;
  bool cudaGraph = false;  // nccl: time each batch of iterations as one captured CUDA graph
  bool remoteWrites = false;  // ucx: pairs by remote writes (--ucx-api rma) instead of tag matching
  std::string nicPerRank;     // --nic-per-rank: "auto", a list of NICs, or empty (the library's choice)
  PairMemory pairMemory = PairMemory::kAuto;
  std::vector<core::Op> ops;
  std::vector<core::DType> dtypes;
  std::vector<core::RedOp> redops;
  Placement placement = Placement::kBoth;
  std::vector<core::Scope> scopes;
  int root = 0;
  int minGroup = 2;  // smallest group a collective runs in (1: one-GPU smoke tests)
  int ranksPerNode = 0;  // > 0: emulate nodes of this many consecutive ranks
  int gpusPerNode = 0;   // > 0: spread each node's ranks over this many GPUs (0: all visible)
  std::string output;    // empty: results/<UTC timestamp>.h5
  ProgressMode progress = ProgressMode::kAuto;
  bool preflight = false;  // check the ranks, GPUs and output, then stop before measuring
  std::vector<core::Fault> faults;  // test-only fault injection
  double noiseCv = 0.2;    // a step whose iteration times vary beyond this coefficient is noisy
  double minConfidence = 0.5;  // findings less sure than this are information (--min-confidence)
  double stepTimeout = 0;  // seconds a step may take before it is a hang; 0: derived per step
  // the node inventory (topologies/inventory.h): the sysfs tree each node's first rank reads, and
  // the line rate a node's inter-node bandwidth is judged against (GB/s per node; 0: its active
  // RDMA ports' rates) below this fraction
  std::string sysfsRoot = "/sys";
  // --fabric: the switches above the nodes (ibnetdiscover output or "child -> parent" lines,
  // topologies/fabric_file.h), for the analysis to blame switches; empty: none
  std::string fabricFile;
  double lineRateGBps = 0;
  double lineRateFraction = 0.8;
  // the inter scope's all_reduce rails are judged against the line rate too: set from the
  // backend (worker::BackendInfo::busbwAtLineRate) by applyBackendDefaults, not an option
  bool railsAtLineRate = false;
  // pairs from GPU memory: --pair-memory resolved against the backend by applyBackendDefaults
  // (auto: the backend's own kind), not an option
  bool cudaPairs = false;

  // what runs: collective sweeps, GPU-pair copies, pairwise matrices; by default the sweeps and
  // the matrices, and the copies where the backend has GPUs (applyBackendDefaults)
  bool collectives = true;
  bool copies = false;
  bool pairwise = true;
  bool phasesGiven = false;  // --collectives/--copies/--pairwise chose the phases
  // GPU-pair copy matrix inside each node
  std::uint64_t copyBytes = 0;  // bytes per copy
  int copyIters = 0;            // timed copies per direction and method
  int copyWarmup = 2;
  // pairwise matrices
  PairwiseMode pairwiseMode = PairwiseMode::kFull;
  int pairwisePeers = 3;          // quick mode: random peers per rank/node
  std::uint64_t pairBytes = 0;    // stream message size
  int pairWindow = 0;             // messages in flight per window, one acknowledgement per window (osu_bw: 64)
  int pairIters = 0;
  int latencyIters = 0;
  int retests = 2;                // re-measurements of a pair flagged slow
  double slowThreshold = 0.9;     // slow below this fraction of the class baseline
  double latencyFactor = 2.0;     // bad latency above this multiple of the class baseline

  // the training pattern (--patterns training): every traffic type of a parallel layout,
  // isolated and concurrent; message sizes from a model shape
  bool training = false;
  std::string layout;         // "tp=T,pp=P,dp=D[,ep=E]"; empty: tp = ranks per node, dp = nodes
  bool strictLayout = false;  // refuse a layout whose TP groups cross nodes
  int microBatch = 1;
  int seqLen = 0;             // tokens per sequence (suite: 512 host, 2048 GPUs)
  int hidden = 0;             // hidden size (suite: 1024 host, 4096 GPUs)
  int layers = 2;             // transformer layers simulated per pipeline stage
  int topK = 2;               // experts per token (EP traffic)
  bool sequenceParallel = false;  // TP as all_gather + reduce_scatter instead of all_reduce
  bool zero = false;              // DP as reduce_scatter + all_gather (ZeRO/FSDP) instead of all_reduce
  std::uint64_t bucketBytes = 25ull << 20;  // DP gradient bucket
  core::DType trainDtype = core::DType::kBfloat16;
  int trainIters = 0;  // timed training steps per measurement
  int trainWarmup = 2;
  // the scaling sweep (--scaling): all_reduce of scalingBytes on 2, 4, ... GPUs and 1, 2, ... nodes
  bool scaling = false;
  std::uint64_t scalingBytes = 0;  // suite: 8M host, 256M GPUs
  // the storage feed (--storage PATH): each reading rank's I/O under the path
  std::string storagePath;  // empty: no storage phase
  bool storageWrite = false;           // write the run's own files first (and measure that)
  bool storageEveryRank = true;        // --storage-ranks all; false: node (each node's first rank)
  std::uint64_t storageBytes = 1ull << 30;  // per reading rank
  // --accept PROFILE: the phases its checks judge, then the file judged against it (acceptance.h)
  std::string accept;         // a built-in profile's name or a profile file; empty: no acceptance
  bool allowMissing = false;  // --allow-missing: a check the file cannot answer does not fail it

  // which suite-derived sizes were given explicitly (backend defaults do not override them)
  bool maxBytesGiven = false;
  bool pairBytesGiven = false;
  bool copyBytesGiven = false;
  bool seqLenGiven = false;
  bool hiddenGiven = false;
  bool scalingBytesGiven = false;
};

struct ParsedRun {
  RunConfig config;
  bool help = false;
  std::string resume;             // --resume FILE: finish the incomplete run recorded there
  bool force = false;             // --force: the output may replace the file at its path
  bool measurementGiven = false;  // an option besides the run-time ones (resume, output,
                                  // progress, step timeout, injected faults) was given
};

// Parses `fabricmap run` arguments (argv after "run"). Throws UsageError naming the problem.
ParsedRun parseRunOptions(const std::vector<std::string>& args);
std::string runHelpText();

// The suite's sizes for the backend the run uses, where the user did not set them: on GPUs
// (nccl) the collectives go up to 1 GiB (full: 8 GiB), pairs stream 256 MiB (full: 1 GiB), each
// GPU-pair copy moves 256 MiB (full: 1 GiB), the training pattern has a 7B model's shape (full:
// a 70B model's), the scaling all_reduce moves 256 MiB (full: 1 GiB), and the copy matrix runs
// unless phases were chosen.
void applyBackendDefaults(RunConfig& config, std::string_view backend);

// "corrupt:rank=1:op=all_reduce[:step=N]" -> Fault (kinds corrupt, error, stall, crash). Throws
// UsageError.
core::Fault parseFault(const std::string& text);
std::string faultKindName(core::Fault::Kind kind);

// The configuration as a stable JSON string (recorded in the results file).
std::string toJsonString(const RunConfig& config);

// Where two configurations would measure differently, as "key: A vs B" (empty: they measure the
// same). The run-time settings (step timeout, injected faults, output, progress) are not compared.
std::vector<std::string> measurementDifferences(const RunConfig& a, const RunConfig& b);

// What the analysis takes from a run's options: the pairs' shape and the judging thresholds.
MatrixShape matrixShapeOf(const RunConfig& config);
AnalysisConfig analysisConfigOf(const RunConfig& config);

}  // namespace fabricmap::orchestrator
