// GPU memory of a layout (see memory_model.h).
#include "orchestrator/verdicts/memory_model.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <array>
#include <set>
#include <utility>
#include <vector>

#include "core/error.h"

namespace fabricmap::orchestrator {
namespace {

constexpr std::array<std::pair<Framework, std::string_view>, 3> kFrameworks = {
    {{Framework::kMegatron, "megatron"}, {Framework::kDeepSpeed, "deepspeed"}, {Framework::kVllm, "vllm"}}};
constexpr std::array<std::pair<Recompute, std::string_view>, 3> kRecomputes = {
    {{Recompute::kNone, "none"}, {Recompute::kSelective, "selective"}, {Recompute::kFull, "full"}}};

constexpr double kHalf = 2;  // bytes of a 16-bit value

// Korthikanti et al.'s per-layer activation terms (units of sbh bytes): what the attention block
// and layer norms keep besides the MLP, the MLP's own share, and the attention scores' 5as/h.
constexpr double kOutsideMlp = 15;  // 11 attention + 4 layer norms
constexpr double kMlp = 19;
constexpr double kReplicated = 10;  // kept whole on every TP rank without sequence parallelism

int headsOf(const ModelSpec& m) { return m.heads > 0 ? m.heads : std::max(1, m.hidden / 128); }

// Parameters one GPU holds (dense over tp x pp; experts over tp x pp x ep), dense and expert apart.
struct Share {
  double dense = 0;
  double experts = 0;
};
Share shareOf(const ModelSpec& m, const core::Layout& l) {
  const double slices = static_cast<double>(l.tp) * l.pp;
  return {(m.params - m.expertParams()) / slices, m.expertParams() / (slices * l.ep)};
}

// Bytes per parameter of (weights, gradients, optimizer states) under ZeRO-style sharding over
// `d` ranks: DeepSpeed's 2 + 2 + 12, Megatron's 2 + 4 (fp32 gradients) + 12.
struct PerParameter {
  double weights = 0, gradients = 0, optimizer = 0;
};
PerParameter perParameter(Framework f, int stage, double d) {
  if (f == Framework::kVllm) return {kHalf, 0, 0};
  const double gradients = f == Framework::kMegatron ? 4 : kHalf;
  return {stage >= 3 ? kHalf / d : kHalf, stage >= 2 ? gradients / d : gradients, stage >= 1 ? 12 / d : 12};
}

// Layers' worth of activations the first pipeline stage keeps (1F1B, interleaved with v stages).
double layersInFlight(const ModelSpec& m, const MemoryChoice& c) {
  const double p = c.layout.pp;
  const double perStage = static_cast<double>(m.layers) / p;
  const double inFlight = std::min<double>(p, std::max(1, c.microBatches));
  const double interleave = c.virtualStages > 1 && inFlight >= p ? 1 + (p - 1) / (p * c.virtualStages) : 1;
  return perStage * inFlight * interleave;
}

}  // namespace

std::string_view frameworkName(Framework f) {
  for (const auto& [value, text] : kFrameworks) {
    if (value == f) return text;
  }
  return "?";
}

Framework parseFramework(std::string_view text) {
  for (const auto& [value, name] : kFrameworks) {
    if (name == text) return value;
  }
  throw core::UsageError(fmt::format("unknown --framework '{}' (megatron, deepspeed or vllm)", text));
}

std::string_view recomputeName(Recompute r) {
  for (const auto& [value, text] : kRecomputes) {
    if (value == r) return text;
  }
  return "?";
}

Recompute parseRecompute(std::string_view text) {
  for (const auto& [value, name] : kRecomputes) {
    if (name == text) return value;
  }
  throw core::UsageError(fmt::format("unknown --recompute '{}' (none, selective or full)", text));
}

std::string choiceProblem(Framework framework, const MemoryChoice& c) {
  if (c.sequenceParallel && c.layout.tp < 2) return "sequence parallelism needs tensor parallelism";
  if (c.zeroStage < 0 || c.zeroStage > 3) return fmt::format("ZeRO stage {} does not exist", c.zeroStage);
  switch (framework) {
    case Framework::kMegatron:
      if (c.zeroStage > 1) return "Megatron-LM shards optimizer states only (its distributed optimizer)";
      break;
    case Framework::kDeepSpeed:
      if (c.zeroStage == 3 && c.layout.pp > 1) return "DeepSpeed runs ZeRO-3 without pipeline parallelism";
      if (c.zeroStage >= 2 && c.layout.pp > 1) return "DeepSpeed's pipeline engine takes ZeRO-1 at most";
      break;
    case Framework::kVllm:
      if (c.zeroStage != 0 || c.recompute != Recompute::kNone || c.sequenceParallel) {
        return "vLLM serves: no optimizer sharding, recomputation or sequence parallelism";
      }
      break;
  }
  return {};
}

double activationBytesPerLayer(const ModelSpec& m, int seq, const MemoryChoice& c) {
  const double s = seq;
  const double sbh = s * c.microBatch * m.hidden;
  const double t = c.layout.tp;
  const double scores = 5.0 * headsOf(m) * s / m.hidden;  // the attention's softmax, dropout, scores
  const double mlp = kMlp * (m.moe() ? m.topK : 1);
  const double perRank = kOutsideMlp + mlp - kReplicated;  // split by TP without SP
  switch (c.recompute) {
    case Recompute::kFull: return kHalf * sbh / (c.sequenceParallel ? t : 1);
    case Recompute::kSelective:
      return c.sequenceParallel ? sbh * (kOutsideMlp + mlp) / t : sbh * (kReplicated + perRank / t);
    case Recompute::kNone: break;
  }
  return c.sequenceParallel ? sbh * (kOutsideMlp + mlp + scores) / t : sbh * (kReplicated + (perRank + scores) / t);
}

double recomputeFactor(const ModelSpec& m, int seq, Recompute r) {
  const double attention = static_cast<double>(seq) / m.hidden;
  switch (r) {
    case Recompute::kFull: return 4.0 / 3.0;
    case Recompute::kSelective: return (1 + attention / 3) / (1 + attention / 6);
    case Recompute::kNone: break;
  }
  return 1;
}

MemoryEstimate memoryPerGpu(Framework framework, const ModelSpec& m, int seq, const MemoryChoice& c,
                            double reserveBytes) {
  const Share share = shareOf(m, c.layout);
  const double expertRanks = std::max(1, c.layout.dp / c.layout.ep);
  const PerParameter dense = perParameter(framework, c.zeroStage, c.layout.dp);
  const PerParameter experts = perParameter(framework, c.zeroStage, expertRanks);
  MemoryEstimate e;
  e.weights = share.dense * dense.weights + share.experts * experts.weights;
  e.gradients = share.dense * dense.gradients + share.experts * experts.gradients;
  e.optimizer = share.dense * dense.optimizer + share.experts * experts.optimizer;
  if (framework == Framework::kVllm) {
    // keys and values of every layer on this stage for the sequences served at once, split by TP
    const double layers = static_cast<double>(m.layers) / c.layout.pp;
    e.activations = 2.0 * kHalf * layers * seq * c.microBatch * m.hidden / c.layout.tp;
  } else {
    e.activations = activationBytesPerLayer(m, seq, c) * layersInFlight(m, c);
  }
  e.reserve = reserveBytes;
  return e;
}

MemoryChoice memoryChoiceOf(const PredictConfig& c) {
  return {.layout = c.layout,
          .sequenceParallel = c.sequenceParallel,
          .zeroStage = modelStatesOf(c).zeroStage,
          .recompute = c.recompute,
          .microBatch = c.microBatch,
          .microBatches = microBatchesPerStep(c),
          .virtualStages = c.virtualStages};
}

MemoryEstimate memoryPerGpu(const PredictConfig& c) {
  return memoryPerGpu(modelStatesOf(c).framework, c.model, c.seq, memoryChoiceOf(c), c.reserveBytes);
}

namespace {

// The model states' bytes per parameter in words, as perParameter counts them.
std::string statesText(const ModelStates& s) {
  if (s.framework == Framework::kMegatron) {
    return s.zeroStage >= 1 ? "Megatron-LM's distributed optimizer (2 B weights, 4 B fp32 gradients, 12/dp B "
                              "optimizer states per parameter)"
                            : "Megatron-LM's model states (2 B weights, 4 B fp32 gradients, 12 B optimizer states "
                              "per parameter)";
  }
  if (s.framework == Framework::kVllm) return "vLLM's 16-bit weights";
  static constexpr std::array<std::string_view, 4> kStages = {
      "2 + 2 + 12 B", "2 + 2 + 12/dp B", "2 + 2/dp + 12/dp B", "2/dp + 2/dp + 12/dp B"};
  return fmt::format("DeepSpeed ZeRO-{} ({} per parameter: weights, gradients, optimizer states)", s.zeroStage,
                     kStages.at(static_cast<std::size_t>(std::clamp(s.zeroStage, 0, 3))));
}

}  // namespace

std::string memoryModelText(const PredictConfig& c) {
  const std::string_view recompute = c.recompute == Recompute::kFull        ? "full recomputation"
                                     : c.recompute == Recompute::kSelective ? "selective recomputation"
                                                                            : "no recomputation";
  return fmt::format("{}, activations with {}{} (Korthikanti et al. 2022), {:.1f} GiB reserve",
                     statesText(modelStatesOf(c)), recompute, c.sequenceParallel ? " and sequence parallelism" : "",
                     c.reserveBytes / (1ull << 30));
}

namespace {

// The smallest positive figure of `values`, with how many there were.
std::pair<double, std::size_t> smallestOf(const std::vector<std::uint64_t>& values) {
  double smallest = 0;
  std::size_t count = 0;
  for (const std::uint64_t v : values) {
    if (v == 0) continue;
    smallest = count == 0 ? static_cast<double>(v) : std::min(smallest, static_cast<double>(v));
    ++count;
  }
  return {smallest, count};
}

}  // namespace

constexpr double kGiBytes = 1024.0 * 1024 * 1024;

GpuMemoryChoice chooseGpuMemory(std::optional<double> declared, const std::string& declaredFrom,
                                const results::ResultsFile& file) {
  const std::optional<GpuMemory> recorded = gpuMemoryOf(file);
  if (!declared) return recorded ? GpuMemoryChoice{recorded->bytes, recorded->source, ""} : GpuMemoryChoice{};
  GpuMemoryChoice choice{declared, declaredFrom, ""};
  if (recorded && std::fabs(*declared - recorded->bytes) > 0.05 * recorded->bytes) {
    choice.contradiction = fmt::format("{} declares {:.1f} GiB per GPU, but {} records {:.1f} GiB ({}): the fit is "
                                       "judged on the declared figure, as asked",
                                       declaredFrom, *declared / kGiBytes, file.path, recorded->bytes / kGiBytes,
                                       recorded->source);
  }
  return choice;
}

std::optional<GpuMemory> gpuMemoryOf(const results::ResultsFile& file) {
  std::vector<std::uint64_t> inventory;
  for (const core::GpuInventoryRecord& g : file.topology.inventory.gpus) inventory.push_back(g.memoryBytes);
  if (const auto [bytes, gpus] = smallestOf(inventory); gpus > 0) {
    return GpuMemory{bytes, fmt::format("the smallest of {} GPU(s) in the file (NVML total)", gpus)};
  }
  // No inventory (an imported log, an older file): the ranks' own GPU figures. An imported log
  // prints GPU names only, so its figures are what the names tell (topologies/specs.h).
  std::vector<std::uint64_t> ranks;
  std::set<std::string> names;
  for (const core::RankRecord& r : file.topology.ranks) {
    ranks.push_back(r.gpuMemoryBytes);
    if (r.gpuMemoryBytes > 0) names.insert(r.gpuName);
  }
  const auto [bytes, count] = smallestOf(ranks);
  if (count == 0) return std::nullopt;
  if (!file.imported.empty()) {
    return GpuMemory{bytes, fmt::format("the smallest of {} rank(s)' GPUs, from the imported log's GPU name{} ({})",
                                        count, names.size() == 1 ? "" : "s", fmt::join(names, ", "))};
  }
  return GpuMemory{bytes, fmt::format("the smallest of {} rank(s)' GPUs in the file (NVML total)", count)};
}

}  // namespace fabricmap::orchestrator
