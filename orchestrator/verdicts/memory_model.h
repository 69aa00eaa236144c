// GPU memory of a training (or inference) layout, per GPU of the most loaded pipeline stage (the
// first): what `fabricmap advise` checks each layout against before pricing it.
//
// Model states, mixed precision with Adam, as the frameworks keep them:
// - DeepSpeed (ZeRO, Rajbhandari et al. 2020): 16-bit weights (2 B/parameter) and gradients (2 B),
//   fp32 master weights, momentum and variance (12 B); stage 1 shards the optimizer states over the
//   data-parallel ranks, stage 2 the gradients too, stage 3 the weights too: 16, 4 + 12/d, 2 + 14/d,
//   16/d bytes per parameter.
// - Megatron-LM: 16-bit weights and fp32 gradients (18 B/parameter); its distributed optimizer
//   shards the fp32 master weights and optimizer states: 6 + 12/d (Megatron-LM's
//   docs/distrib_optimizer.md). It has no sharded gradients or weights.
// - vLLM (inference): 16-bit weights only, and the KV cache instead of activations.
// Parameters per GPU: the dense ones over tp x pp, the experts' over tp x pp x ep, sharded for ZeRO
// over dp (dense) and dp / ep (experts). Pipeline stages hold equal shares (embeddings not apart).
//
// Activations (Korthikanti et al. 2022, "Reducing Activation Recomputation in Large Transformer
// Models", Table 2), 16-bit, per layer and micro-batch of b sequences of s tokens, hidden h, a
// heads, tensor parallelism t:
//   no recomputation: sbh(10 + 24/t + 5as/(ht)); with sequence parallelism sbh/t (34 + 5as/h)
//   selective (the attention's softmax and dropout recomputed): sbh(10 + 24/t); with SP 34 sbh/t
//   full (only each layer's input kept): 2sbh; with SP 2sbh/t
// The first pipeline stage holds L/p layers for p micro-batches in flight under 1F1B (fewer when
// the step has fewer), L (1 + (p - 1)/(p v)) layers' worth with v interleaved stages. MoE: the MLP's
// share (19 of the 34) scales with the experts each token visits (top-k). Attention heads unknown:
// 128-wide heads assumed. Not counted: the embedding and output layer's activations (no
// vocabulary in the model figures), framework buffers beyond the fixed reserve.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/layout.h"
#include "orchestrator/verdicts/predict.h"

namespace fabricmap::orchestrator {

// Framework, Recompute, ModelStates and MemoryEstimate are declared in predict.h: a prediction
// checks its layout's memory.
std::string_view frameworkName(Framework f);  // "megatron", "deepspeed", "vllm"
Framework parseFramework(std::string_view text);  // throws UsageError

std::string_view recomputeName(Recompute r);  // "none", "selective", "full"
Recompute parseRecompute(std::string_view text);  // throws UsageError

// One way to run a model: its layout and the memory choices the frameworks offer.
struct MemoryChoice {
  core::Layout layout;
  bool sequenceParallel = false;
  // DeepSpeed: ZeRO stage 0-3. Megatron: 0, or 1 for the distributed optimizer. vLLM: 0.
  int zeroStage = 0;
  Recompute recompute = Recompute::kNone;
  int microBatch = 1;     // sequences per micro-batch (vLLM: sequences served at once per replica)
  int microBatches = 1;   // per step and pipeline (global batch / (micro-batch x dp))
  int virtualStages = 1;  // interleaved 1F1B
};

// Why `choice` is not one `framework` offers (ZeRO-2 on Megatron, sequence parallelism without
// tensor parallelism, ...); empty when it is.
std::string choiceProblem(Framework framework, const MemoryChoice& choice);

// Activation bytes of one layer and one micro-batch (the formulas above, dense).
double activationBytesPerLayer(const ModelSpec& model, int seq, const MemoryChoice& choice);

// The compute a recomputation choice adds, as a factor on the model's own (Korthikanti et al. 2022,
// Section 5: 72bLsh^2 (1 + s/6h) FLOPs per step without recomputation, (1 + s/3h) with the selective
// kind, 96bLsh^2 (1 + s/6h) with full recomputation).
double recomputeFactor(const ModelSpec& model, int seq, Recompute recompute);

MemoryEstimate memoryPerGpu(Framework framework, const ModelSpec& model, int seq, const MemoryChoice& choice,
                            double reserveBytes);

// A prediction's layout as a memory choice (its model states modelStatesOf), and its memory.
MemoryChoice memoryChoiceOf(const PredictConfig& c);
MemoryEstimate memoryPerGpu(const PredictConfig& c);
// What that estimate counts, for people: "Megatron-LM's model states (2 B weights, 4 B fp32
// gradients, 12 B optimizer states per parameter), activations with selective recomputation, 4.0
// GiB reserve".
std::string memoryModelText(const PredictConfig& c);

// A GPU's memory as a results file records it: the smallest NVML total of its GPUs' inventory, else
// the smallest of its ranks' GPUs (NVML's, or what an imported log's GPU names tell); nothing for a
// host-memory run, or a log whose GPU names do not tell it.
struct GpuMemory {
  double bytes = 0;
  std::string source;  // "the smallest of 8 GPU(s) in the file (NVML total)", ...
};
std::optional<GpuMemory> gpuMemoryOf(const results::ResultsFile& file);

// The GPU memory a layout must fit: `declared` (--gpu-memory, a providers line: `declaredFrom`)
// where given, else the file's. A declared figure more than 5 % from what the file records is used
// as asked, and `contradiction` says so: an A100-40GB log judged with --gpu-memory 96G would
// otherwise fit layouts that cannot run on it, without a word.
struct GpuMemoryChoice {
  std::optional<double> bytes;
  std::string source;
  std::string contradiction;  // empty unless the declared figure contradicts the file's
};
GpuMemoryChoice chooseGpuMemory(std::optional<double> declared, const std::string& declaredFrom,
                                const results::ResultsFile& file);

}  // namespace fabricmap::orchestrator
