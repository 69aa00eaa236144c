// Layout advice (`fabricmap advise`): every way a model can be laid out on the GPUs a results file
// measured (tp x pp x dp, x ep for MoE; sequence parallelism, ZeRO stage or distributed optimizer,
// activation recomputation, micro-batch size), each checked against the GPUs' memory
// (memory_model.h) and, when it fits, priced by predict's step model on the file's curves; ranked
// by step time. Pure code: the command reads the files and prints.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "orchestrator/verdicts/memory_model.h"
#include "orchestrator/verdicts/predict.h"
#include "results/h5_reader.h"

namespace fabricmap::orchestrator {

struct AdviseConfig {
  PredictConfig base;  // the model, sequence, batch, dtypes, MFU, peak, tokens, price; not its layout
  Framework framework = Framework::kMegatron;
  int gpus = 0;                          // 0: every rank the file measured
  std::optional<double> gpuMemoryBytes;  // per GPU; unset: the smallest total NVML reported in the file
  double reserveBytes = 4e9;             // CUDA context, NCCL and allocator headroom per GPU
  int top = 10;
  double bytesPerToken = 4;  // of the tokenized data the loader reads (int32 ids; uint16 is 2)
};

// Every choice the framework offers for `gpus` GPUs, `gpusPerNode` to a node (tensor parallelism
// stays inside a node): tp dividing the hidden size and heads, pp dividing the layers, ep dividing
// the experts and dp, micro-batches of 1, 2, 4 or 8 dividing the batch (vLLM: the batch spread over
// the replicas), Megatron-LM's interleaved stages, and the framework's memory options
// (choiceProblem empty).
std::vector<MemoryChoice> candidateChoices(const AdviseConfig& config, int gpus, int gpusPerNode);

// The prediction's configuration for one choice: its layout, micro-batch, sequence parallelism,
// the data-parallel exchange its sharding implies, its recomputation's extra compute.
PredictConfig predictConfigFor(const AdviseConfig& config, const MemoryChoice& choice);

struct Candidate {
  MemoryChoice choice;
  MemoryEstimate memory;  // vLLM: with one sequence's KV cache
  std::optional<Prediction> prediction;  // unset: not a training step (vLLM) or not priceable
  std::string unpriced;                  // why not priced
  std::string flags;                     // the framework's own options for it
  int sequences = 0;  // vLLM: sequences of --seq tokens whose KV cache fits beside the weights
};

// The storage feed a file measured (/storage, the job's rows) against what the fastest layout
// consumes: its tokens per second in data, and a checkpoint of the model's state (16-bit weights
// and fp32 optimizer states: 14 bytes per parameter) at the measured write rate.
struct StorageFeed {
  double readGBps = 0;                  // sequential reads, every reading rank at once
  int readers = 0;
  std::optional<double> writeGBps;      // unset: the run wrote nothing (no --storage-write)
  std::optional<double> loaderGBps;     // the fastest layout's tokens/s x bytes per token
  double checkpointBytes = 0;
  std::optional<double> checkpointSeconds;
};

struct Advice {
  std::string file;
  int gpus = 0;
  int gpusPerNode = 0;
  double gpuMemoryBytes = 0;
  std::string memorySource;
  std::size_t considered = 0;  // choices enumerated
  std::size_t fitting = 0;     // of them, fitting the memory
  std::vector<Candidate> best;  // the fastest fitting choice of each layout and micro-batch, fastest first
  std::string doesNotFit;       // when nothing fits: how much memory or how many GPUs would
  std::optional<StorageFeed> storage;  // when the file measured the storage feed
  std::vector<std::string> notes;
};

Advice advise(const AdviseConfig& config, const results::ResultsFile& file);

// Megatron-LM's arguments, a DeepSpeed configuration fragment, or vLLM's arguments for a choice.
std::string frameworkFlags(const AdviseConfig& config, const MemoryChoice& choice);

// The files by their best layout: cheapest first where a price was given, else fewest GPU-seconds
// per step; files where nothing fits or nothing could be priced last.
std::vector<const Advice*> providersRanked(const std::vector<Advice>& advice);

// What is advised on, one line: "llama-7b (6.74B parameters, 32 layers, hidden 4096), seq 2048,
// global batch 64, megatron training" (advise_text.cpp, as the rest of this block).
std::string adviseSubject(const AdviseConfig& config);
// What a file's storage feed means for the fastest layout: its data loader's share of the reads,
// and a checkpoint's time at the measured writes (or why unknown); a sentence each.
std::vector<std::string> storageSentences(const AdviseConfig& config, const StorageFeed& feed);
// One file's advice as the body of the report's "advice" section (results/report.h ReportSection):
// the same table, flags, notes and storage feed as the console, every text escaped.
std::string adviceToHtml(const AdviseConfig& config, const Advice& advice);

// `fabricmap advise --json` (README.md documents it): one entry per file and, with several, the
// best layout of each, cheapest (else fastest) first.
nlohmann::ordered_json adviceToJson(const AdviseConfig& config, const std::vector<Advice>& advice);

}  // namespace fabricmap::orchestrator
