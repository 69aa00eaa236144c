// Layout advice (`fabricmap advise`): every way a model can be laid out on the GPUs a results file
// measured (tp x pp x dp, x ep for MoE; sequence parallelism, ZeRO stage or distributed optimizer,
// activation recomputation, micro-batch size), each checked against the GPUs' memory
// (memory_model.h) and, when it fits, priced by predict's step model on the file's curves; ranked
// by step time. Only priced layouts are ranked: what fits but cannot be priced from the file (its
// ops or scopes not measured) is listed apart, unranked, with why and what to measure. Pure code:
// the command reads the files and prints.
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
  // the model, sequence, batch, dtypes, MFU, peak, tokens, price, the GPU memory (unset: the file's,
  // memory_model.h gpuMemoryOf) and reserve; not its layout or memory options, which advise searches
  PredictConfig base;
  Framework framework = Framework::kMegatron;
  int gpus = 0;  // 0: every rank the file measured
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
  // unset: not a training step (vLLM), or not predicted (its memory option needs ops the file did
  // not measure, or the prediction was refused); set without a step time: its traffic not priced
  std::optional<Prediction> prediction;
  std::string unpriced;  // why not priced
  std::string flags;     // the framework's own options for it
  int sequences = 0;     // vLLM: sequences of --seq tokens whose KV cache fits beside the weights
  bool priced() const { return prediction && prediction->stepSeconds; }
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
  // of those, the ones whose memory option (sequence parallelism, ZeRO, the distributed optimizer)
  // needs all_gather and reduce_scatter curves the file lacks: not priced, the search keeps to the rest
  std::size_t optionsUnmeasured = 0;
  // Training: the fastest priced choice of each layout and micro-batch, fastest first (the ranking;
  // only priced layouts are in it). vLLM: each layout's replicas, fewest GPUs first.
  std::vector<Candidate> best;
  std::size_t rankedLayouts = 0;  // all of the ranking, before --top
  // Training layouts (tp, pp, dp, ep) that fit but could not be priced, one choice each (one whose
  // traffic was counted first, then the least recomputation, the least memory), in layout order:
  // unranked; at most --top less the ranked ones (--top when none is ranked).
  std::vector<Candidate> unpriced;
  std::size_t unpricedLayouts = 0;       // all of them, before --top
  std::vector<std::string> whyUnpriced;  // the distinct reasons, the first few
  std::vector<std::string> toPriceMore;  // what to measure so that more is priced, in words
  std::string doesNotFit;                // when nothing fits: how much memory or how many GPUs would
  std::optional<StorageFeed> storage;  // when the file measured the storage feed
  std::vector<std::string> notes;
};

Advice advise(const AdviseConfig& config, const results::ResultsFile& file);

// Megatron-LM's arguments, a DeepSpeed configuration fragment, or vLLM's arguments for a choice.
std::string frameworkFlags(const AdviseConfig& config, const MemoryChoice& choice);

// The sentence that heads a list of layouts that fit but none of which is priced: said plainly, never
// a ranking ("no layout priced: none of the 12 layouts that fit ...").
std::string nothingPriced(const Advice& advice);

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
