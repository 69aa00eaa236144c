// Training-step prediction (`fabricmap predict`): what a model and a parallel layout send per step
// (bytes and message sizes of TP, PP, DP and EP traffic, Megatron-LM style), how long that takes
// on the bandwidth curves a results file measured, and what the step, a training run and its cost
// come to. Pure code: the command reads the files and prints.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/layout.h"
#include "core/ops.h"
#include "core/records.h"
#include "results/h5_reader.h"

namespace fabricmap::orchestrator {

// The architecture figures a prediction needs. Experts: every layer is an MoE layer whose FFN is
// `experts` SwiGLU experts of `ffn` (3 x hidden x ffn parameters each), `topK` of them per token.
struct ModelSpec {
  std::string name;   // preset name, or "custom"
  double params = 0;  // total parameters
  int layers = 0;
  int hidden = 0;
  int heads = 0;    // attention heads; 0: unknown (then TP is not checked against them)
  int ffn = 0;      // FFN hidden size; 0: unknown (needed only for MoE)
  int experts = 1;  // 1: dense model
  int topK = 1;
  bool moe() const { return experts > 1; }
  double expertParams() const;  // parameters in experts (0 for a dense model)
  double activeParams() const;  // parameters one token passes through (params for dense)
};

// A preset: the model and the sequence length and global batch (sequences) it was trained with.
struct ModelPreset {
  ModelSpec model;
  int seq = 0;
  int globalBatch = 0;
  std::string_view source;  // where the figures come from
};
const std::vector<ModelPreset>& modelPresets();
std::optional<ModelPreset> findPreset(std::string_view name);

// How data-parallel ranks exchange gradients: all_reduce (DDP); reduce_scatter of the gradients and
// all_gather of the updated parameters (ZeRO-1/2, Megatron-LM's distributed optimizer); ZeRO-3,
// which also all-gathers the parameters again for the backward pass.
enum class DpMode { kAllReduce, kZero, kZero3 };
std::string_view dpModeName(DpMode mode);  // "allreduce", "zero", "zero3"

// The memory side of a layout, declared here because a prediction checks it (memory_model.h counts
// the bytes and names these): whose model states (Megatron-LM, DeepSpeed; vLLM serves), and which
// activations are recomputed in the backward pass instead of kept.
enum class Framework { kMegatron, kDeepSpeed, kVllm };
enum class Recompute { kNone, kSelective, kFull };

// How a layout keeps its model states: the framework and its ZeRO stage (Megatron-LM: 1 is its
// distributed optimizer). A stage of 1 or more exchanges gradients as DpMode::kZero (3: kZero3).
struct ModelStates {
  Framework framework = Framework::kMegatron;
  int zeroStage = 0;
};

// Bytes per GPU, the most loaded pipeline stage (memory_model.h).
struct MemoryEstimate {
  double weights = 0;
  double gradients = 0;
  double optimizer = 0;    // fp32 master weights, momentum, variance
  double activations = 0;  // training; vLLM: the KV cache
  double reserve = 0;      // CUDA context, NCCL buffers, allocator slack (fixed)
  double total() const { return weights + gradients + optimizer + activations + reserve; }
};

struct PredictConfig {
  ModelSpec model;
  std::string modelSource = "custom";  // where the model's figures come from (a preset's source)
  int seq = 4096;
  int microBatch = 1;
  int globalBatch = 1024;
  std::string dtype = "bf16";      // activations and parameters: bf16, fp16, fp32
  std::string gradDtype = "bf16";  // gradients as DP reduces them
  core::Layout layout;
  bool sequenceParallel = false;
  DpMode dpMode = DpMode::kAllReduce;
  std::uint64_t bucketBytes = 25ull << 20;
  double overlap = 0;  // share of DP (and expert-DP) communication hidden behind compute
  double mfu = 0.4;      // of the model's own compute: no communication, no pipeline bubble
  int virtualStages = 1;  // interleaved 1F1B: model chunks per pipeline stage (Megatron-LM's v)
  // activations recomputed: less memory kept, more compute (full recomputation runs the forward
  // pass twice: x 4/3; memory_model.h recomputeFactor)
  Recompute recompute = Recompute::kNone;
  // whose model states the memory check counts; unset: what dpMode implies (modelStatesOf)
  std::optional<ModelStates> modelStates;
  std::optional<double> gpuMemoryBytes;  // per GPU; unset: the file's (memory_model.h gpuMemoryOf)
  double reserveBytes = 4e9;             // CUDA context, NCCL and allocator headroom per GPU
  std::optional<double> peakTflops;  // per GPU; unset: from the GPU model recorded in the file
  double tokens = 1e12;              // tokens to train, for days, GPU-hours and cost
  std::optional<double> pricePerGpuHour;
};

// Bytes per element of "bf16", "fp16", "fp32" (and aliases core::parseDType knows); throws
// UsageError for others.
int dtypeBytes(std::string_view dtype);
// Throws UsageError naming the first problem: non-positive sizes, a layout the batch or the model
// cannot be split over, fractions out of range.
void validate(const PredictConfig& c);
int microBatchesPerStep(const PredictConfig& c);  // global batch / (micro-batch x dp)
// The model states a prediction's memory check counts: the configuration's own, else what its
// DpMode implies of Megatron-LM, the step model's framework (allreduce: plain, zero: its
// distributed optimizer), and for zero3, which Megatron-LM lacks, DeepSpeed's ZeRO-3.
ModelStates modelStatesOf(const PredictConfig& c);

// "1T", "300B", "1.5e12", "7B": counts with decimal suffixes K M B (or G) T. Throws UsageError
// naming `what`.
double parseCount(std::string_view text, std::string_view what);

// The collectives a results file measured: ops with a usable row (bytes, a positive busbw, no
// wrong results) in any scope.
std::set<core::Op> measuredOps(const results::ResultsFile& file);

// What each kind of parallelism is priced on: tensor (without sequence parallelism) and data
// parallelism (DDP) on all_reduce; sequence parallelism and ZeRO (every stage, Megatron-LM's
// distributed optimizer) on all_gather and reduce_scatter; pipelines on sendrecv; experts on
// alltoall.
enum class PricedOn { kAllReduce, kGatherScatter, kSendRecv, kAllToAll };
// The sentence a planner needs when `file` lacks what `what` is priced on: "sequence parallelism
// and ZeRO need all_gather and reduce_scatter curves, which FILE did not measure: run with --ops
// all_gather,reduce_scatter or import those nccl-tests logs (all_gather_perf, reduce_scatter_perf)";
// empty when every op was measured.
std::string unmeasuredNeed(PricedOn what, const std::set<core::Op>& measured, std::string_view file);

// One op of a traffic type's message: an all_reduce, or one half of a pair (all_gather +
// reduce_scatter). `bytes` is counted as nccl-tests counts it (algbw = bytes / time).
struct TrafficLeg {
  core::Op op;
  std::uint64_t bytes = 0;
};

// What one group of a kind sends per training step: `messages` messages, each its legs in turn.
struct Traffic {
  std::string type;  // "tp", "pp", "dp", "edp" (expert gradients), "ep"
  int groupSize = 1;
  std::uint64_t messages = 0;  // per step, each group
  std::vector<TrafficLeg> legs;
  bool overlappable = false;  // DP kinds: --overlap hides part of it
  std::string what;           // how the messages were counted, for people
  std::string none;           // why there is no such traffic (tp=1, ...); empty when there is
};
// Every traffic type of the model and layout, in the order tp, pp, dp, (edp, ep for MoE); a type
// without traffic says why in `none`.
std::vector<Traffic> trafficOf(const PredictConfig& c);

// The groups of a traffic type as world ranks (core::groupsOf; "edp": the ranks of each DP group
// that hold the same experts).
std::vector<std::vector<int>> groupsFor(const core::Layout& layout, std::string_view type);
// The measured scope that fits groups placed on nodes of `ranksPerNode` consecutive ranks: "intra"
// when every group fits in one node, "inter" when every group has one rank per node, else "world".
std::string scopeFor(const std::vector<std::vector<int>>& groups, int ranksPerNode);

// A bandwidth curve: busbw (from the median time) per message size of one scope and op, the
// median over its groups, sizes ascending.
struct Curve {
  std::string scope;
  core::Op op = core::Op::kAllReduce;
  std::string dtype;  // the element type measured
  bool inPlace = false;
  int groups = 0;
  int nranks = 0;
  std::vector<std::uint64_t> sizes;
  std::vector<double> busbw;  // GB/s
};
// The curve of `scope`/`op` in `rows`: rows of `dtype` (nccl-tests name) when measured, else of the
// type measured most; out-of-place rows when there are any, else in-place; rows with wrong
// results or no positive busbw left out. Empty: nothing usable was measured.
std::optional<Curve> curveOf(const std::vector<core::CollectiveRecord>& rows, std::string_view scope, core::Op op,
                             std::string_view dtype);

// busbw at `bytes` on a curve: log-log interpolation between the measured sizes around it (a
// power law between neighbours), the measured figure at a measured size, the nearest end's figure
// beyond the measured range by at most 2x; nothing (with the reason) further out.
struct CurvePoint {
  std::optional<double> busbw;
  std::string how;     // "measured at 4 MiB", "interpolated (log-log) at 6 MiB between 4 MiB and 8 MiB", ...
  std::string reason;  // why there is no figure
};
CurvePoint busbwAt(const Curve& curve, std::uint64_t bytes);

struct LegResult {
  TrafficLeg leg;
  std::optional<double> busbw;    // GB/s
  std::optional<double> seconds;  // per step: messages x bytes x bus factor / busbw
  std::string source;             // the measurement the figure came from
  std::string reason;             // why unknown
};

struct TrafficResult {
  Traffic traffic;
  std::string status;  // "ok", "unknown", "none"
  std::string scope;   // measured scope used
  std::vector<LegResult> legs;
  std::optional<double> interference;  // concurrent / isolated, from /patterns/training
  std::string interferenceSource;
  std::optional<double> seconds;         // per step, interference included
  std::optional<double> exposedSeconds;  // what adds to the step (DP: x (1 - overlap))
  std::string reason;                    // why unknown, or none's reason
};

struct Prediction {
  std::string file;
  int ranksPerNode = 0;
  int fileRanks = 0;
  std::string gpu;  // the GPU model the peak came from, "" when given or unknown
  double peakTflops = 0;
  std::string peakSource;
  std::vector<TrafficResult> traffic;
  double computeSeconds = 0;
  // pp > 1: the 1F1B schedule's idle time, compute x (pp - 1) / (micro-batches x virtual stages)
  double bubbleSeconds = 0;
  std::optional<double> commSeconds;     // all traffic, nothing hidden
  std::optional<double> exposedSeconds;  // what adds to compute
  std::optional<double> stepSeconds;
  // compute / step: the share of the step the GPUs spend in the model's compute (the bubble and
  // exposed communication idle them). Not an MFU: the step's MFU is stepMfu.
  std::optional<double> utilization;
  // The model FLOPs utilization of the whole step: compute share x --mfu, less the recomputed share
  // of the compute (recomputed FLOPs are run, not model FLOPs): / the recomputation's factor.
  std::optional<double> stepMfu;
  std::optional<double> tokensPerSecond;
  double steps = 0;  // steps to train --tokens tokens
  std::optional<double> days;
  std::optional<double> gpuHours;
  std::optional<double> cost;
  std::string unknownReason;  // why the step time is unknown
  // Memory per GPU of the layout (memory_model.h, the model states of modelStatesOf), checked
  // against the GPU's memory where known (--gpu-memory, else the file's); unknown: not checked.
  MemoryEstimate memory;
  std::string memoryModel;  // what the estimate counts, for people
  std::optional<double> gpuMemoryBytes;
  std::string gpuMemorySource;
  std::vector<std::string> notes;

  // Whether the layout fits the GPU's memory; unset when the GPU's memory is unknown.
  std::optional<bool> fitsMemory() const;
  // "DOES NOT FIT: needs 41.2 GiB per GPU of 40.0 GiB (...)"; empty when it fits or was not checked.
  std::string doesNotFit() const;
};

// The peak dense 16-bit tensor TFLOP/s of a GPU by its device name; nullopt when unknown.
struct PeakFigure {
  double tflops = 0;
  std::string model;  // as topologies/specs.h names it, "H100 SXM"
};
std::optional<PeakFigure> peakTflopsOf(std::string_view gpuName);

// Ranks per node of a results file's topology (its emulated block size, else the smallest node).
int ranksPerNodeOf(const core::Topology& topology);

// The prediction for one results file. Throws UsageError when the peak is neither given nor known
// from the file's GPUs, or when the file measured nothing any needed traffic could use. A layout
// that does not fit the GPU's memory is predicted all the same, flagged (fitsMemory, doesNotFit):
// its communication is worth reading, its days and cost are not achievable.
Prediction predict(const PredictConfig& c, const results::ResultsFile& file);
// As predict, but a layout none of whose traffic the file measured comes back with every reason
// and no step time instead of being refused: advise lists such layouts unpriced.
Prediction predictStep(const PredictConfig& c, const results::ResultsFile& file);

// `fabricmap predict --json` (README.md documents it).
nlohmann::ordered_json predictionsToJson(const PredictConfig& c, const std::vector<Prediction>& predictions);

}  // namespace fabricmap::orchestrator
