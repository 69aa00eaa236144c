// Layout advice (see advise.h).
#include "orchestrator/verdicts/advise.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <tuple>

#include "core/error.h"
#include "core/units.h"

namespace fabricmap::orchestrator {
namespace {

std::vector<int> divisorsOf(int n) {
  std::vector<int> low;
  std::vector<int> high;
  for (int d = 1; d * d <= n; ++d) {
    if (n % d != 0) continue;
    low.push_back(d);
    if (d != n / d) high.push_back(n / d);
  }
  low.insert(low.end(), high.rbegin(), high.rend());
  return low;
}

// The memory options a framework offers, as (sequence parallel, ZeRO stage, recomputation).
struct MemoryOptions {
  std::vector<bool> sequenceParallel;
  std::vector<int> zeroStages;
  std::vector<Recompute> recompute;
};
MemoryOptions optionsOf(Framework f) {
  switch (f) {
    case Framework::kMegatron:
      return {{false, true}, {0, 1}, {Recompute::kNone, Recompute::kSelective, Recompute::kFull}};
    case Framework::kDeepSpeed: return {{false}, {0, 1, 2, 3}, {Recompute::kNone, Recompute::kFull}};
    case Framework::kVllm: break;
  }
  return {{false}, {0}, {Recompute::kNone}};
}

bool tpSplits(const ModelSpec& m, int tp) { return m.hidden % tp == 0 && (m.heads == 0 || m.heads % tp == 0); }

// Micro-batch sizes for dp replicas: training 1, 2, 4, 8 dividing the batch per replica; vLLM one
// sequence (a replica must hold at least one; how many more its memory holds is its capacity).
std::vector<int> microBatchesFor(const AdviseConfig& c, int dp) {
  const int perReplica = c.base.globalBatch / dp;
  if (c.framework == Framework::kVllm) return {1};
  std::vector<int> out;
  for (int mb : {1, 2, 4, 8}) {
    if (c.base.globalBatch % dp == 0 && perReplica % mb == 0) out.push_back(mb);
  }
  return out;
}

// Interleaved 1F1B's model chunks per stage (Megatron-LM): 1, and with pipelining the counts up
// to 12 that split each stage's layers evenly, where the micro-batches fill the pipeline in whole
// rounds (Megatron-LM requires micro-batches divisible by the stages).
std::vector<int> virtualStagesFor(const AdviseConfig& c, const core::Layout& layout, int microBatches) {
  std::vector<int> out = {1};
  if (c.framework != Framework::kMegatron || layout.pp < 2 || microBatches % layout.pp != 0) return out;
  const int layersPerStage = c.base.model.layers / layout.pp;
  for (int v = 2; v <= std::min(12, layersPerStage); ++v) {
    if (layersPerStage % v == 0) out.push_back(v);
  }
  return out;
}

void addMemoryChoices(const AdviseConfig& c, const core::Layout& layout, int mb, std::vector<MemoryChoice>& out) {
  const MemoryOptions options = optionsOf(c.framework);
  const int microBatches = std::max(1, c.base.globalBatch / (mb * layout.dp));
  for (int v : virtualStagesFor(c, layout, microBatches)) {
    for (bool sp : options.sequenceParallel) {
      for (int zero : options.zeroStages) {
        for (Recompute r : options.recompute) {
          MemoryChoice choice{.layout = layout, .sequenceParallel = sp, .zeroStage = zero, .recompute = r,
                              .microBatch = mb, .microBatches = microBatches, .virtualStages = v};
          if (choiceProblem(c.framework, choice).empty()) out.push_back(choice);
        }
      }
    }
  }
}

std::pair<double, std::string> gpuMemoryOf(const AdviseConfig& c, const results::ResultsFile& file) {
  if (c.gpuMemoryBytes) return {*c.gpuMemoryBytes, "--gpu-memory"};
  double smallest = 0;
  std::size_t gpus = 0;
  for (const core::GpuInventoryRecord& g : file.topology.inventory.gpus) {
    if (g.memoryBytes == 0) continue;
    smallest = gpus == 0 ? static_cast<double>(g.memoryBytes) : std::min(smallest, static_cast<double>(g.memoryBytes));
    ++gpus;
  }
  if (gpus == 0) {
    throw core::UsageError(file.path + ": no GPU memory recorded (a host-memory run, or a file before the "
                                       "inventory): declare it with --gpu-memory (80G)");
  }
  return {smallest, fmt::format("the smallest of {} GPU(s) in the file (NVML total)", gpus)};
}

double gib(double bytes) { return bytes / (1ull << 30); }

constexpr int kMostGpus = 1 << 17;  // the largest cluster "does not fit" looks for

// The least memory any choice for `gpus` needs, and the smallest GPU count (doubling, in nodes)
// at which one fits: what "does not fit" tells.
std::string doesNotFit(const AdviseConfig& c, int gpus, int perNode, double memory) {
  double least = std::numeric_limits<double>::infinity();
  for (const MemoryChoice& choice : candidateChoices(c, gpus, perNode)) {
    least = std::min(least, memoryPerGpu(c.framework, c.base.model, c.base.seq, choice, c.reserveBytes).total());
  }
  std::string text = std::isfinite(least)
                         ? fmt::format("no layout fits {} GPUs of {:.1f} GiB: the smallest needs {:.1f} GiB per "
                                       "GPU ({:.1f} GiB more)",
                                       gpus, gib(memory), gib(least), gib(least - memory))
                         : fmt::format("no layout of this model and batch runs on {} GPUs", gpus);
  for (int more = gpus * 2; more <= kMostGpus; more *= 2) {
    for (const MemoryChoice& choice : candidateChoices(c, more, perNode)) {
      if (memoryPerGpu(c.framework, c.base.model, c.base.seq, choice, c.reserveBytes).total() <= memory) {
        return text + fmt::format("; {} GPUs of this memory would fit it ({})", more, core::formatLayout(choice.layout));
      }
    }
  }
  return text;
}

// Fastest first; then the least memory.
bool faster(const Candidate& a, const Candidate& b) {
  const double sa = a.prediction && a.prediction->stepSeconds ? *a.prediction->stepSeconds : 1e300;
  const double sb = b.prediction && b.prediction->stepSeconds ? *b.prediction->stepSeconds : 1e300;
  if (sa != sb) return sa < sb;
  return a.memory.total() < b.memory.total();
}

// Serving: the sequences of --seq tokens whose KV cache the memory left after the weights holds,
// up to the batch's share of this replica; the choice's micro-batch becomes that (--max-num-seqs).
Candidate served(const AdviseConfig& c, MemoryChoice choice, const MemoryEstimate& oneSequence, double memory) {
  const double perSequence = std::max(oneSequence.activations, 1.0);
  const double room = memory - (oneSequence.total() - oneSequence.activations);
  const int wanted = std::max(1, (c.base.globalBatch + choice.layout.dp - 1) / choice.layout.dp);
  Candidate candidate{choice, oneSequence, std::nullopt, "serving: no training step", {}};
  candidate.sequences = static_cast<int>(std::min<double>(std::floor(room / perSequence), 1 << 30));
  candidate.choice.microBatch = std::clamp(candidate.sequences, 1, wanted);
  candidate.flags = frameworkFlags(c, candidate.choice);
  return candidate;
}

Candidate priced(const AdviseConfig& c, const MemoryChoice& choice, const MemoryEstimate& memory,
                 const results::ResultsFile& file) {
  Candidate candidate{choice, memory, std::nullopt, {}, frameworkFlags(c, choice)};
  try {
    candidate.prediction = predict(predictConfigFor(c, choice), file);
    if (!candidate.prediction->stepSeconds) candidate.unpriced = candidate.prediction->unknownReason;
  } catch (const core::UsageError& e) {
    candidate.unpriced = e.what();
  }
  return candidate;
}

std::optional<StorageFeed> storageFeedOf(const AdviseConfig& c, const Advice& a, const results::ResultsFile& file) {
  StorageFeed feed;
  bool read = false;
  for (const core::StorageRecord& r : file.storage) {
    if (r.level != "all") continue;
    if (r.test == "read") {
      feed.readGBps = r.gbps;
      feed.readers = r.ranks;
      read = true;
    }
    if (r.test == "write") feed.writeGBps = r.gbps;
  }
  if (!read) return std::nullopt;
  if (!a.best.empty() && a.best.front().prediction && a.best.front().prediction->tokensPerSecond) {
    feed.loaderGBps = *a.best.front().prediction->tokensPerSecond * c.bytesPerToken / 1e9;
  }
  feed.checkpointBytes = 14.0 * c.base.model.params;
  if (feed.writeGBps && *feed.writeGBps > 0) feed.checkpointSeconds = feed.checkpointBytes / (*feed.writeGBps * 1e9);
  return feed;
}

}  // namespace

std::vector<MemoryChoice> candidateChoices(const AdviseConfig& c, int gpus, int gpusPerNode) {
  const ModelSpec& m = c.base.model;
  std::vector<MemoryChoice> out;
  for (int tp : divisorsOf(gpus)) {
    if (tp > std::max(1, gpusPerNode) || !tpSplits(m, tp)) continue;
    for (int pp : divisorsOf(gpus / tp)) {
      if (m.layers % pp != 0) continue;  // Megatron-LM and DeepSpeed split the layers evenly
      const int dp = gpus / (tp * pp);
      for (int ep : m.moe() ? divisorsOf(dp) : std::vector<int>{1}) {
        if (m.experts % ep != 0) continue;
        for (int mb : microBatchesFor(c, dp)) addMemoryChoices(c, {.tp = tp, .pp = pp, .dp = dp, .ep = ep}, mb, out);
      }
    }
  }
  return out;
}

PredictConfig predictConfigFor(const AdviseConfig& c, const MemoryChoice& choice) {
  PredictConfig p = c.base;
  p.layout = choice.layout;
  p.microBatch = choice.microBatch;
  p.sequenceParallel = choice.sequenceParallel;
  p.dpMode = choice.zeroStage >= 3 ? DpMode::kZero3 : choice.zeroStage >= 1 ? DpMode::kZero : DpMode::kAllReduce;
  p.recomputeFactor = recomputeFactor(c.base.model, c.base.seq, choice.recompute);
  p.virtualStages = choice.virtualStages;
  return p;
}

Advice advise(const AdviseConfig& c, const results::ResultsFile& file) {
  Advice a;
  a.file = file.path;
  a.gpus = c.gpus > 0 ? c.gpus : static_cast<int>(file.topology.ranks.size());
  a.gpusPerNode = ranksPerNodeOf(file.topology);
  if (a.gpus < 1 || a.gpusPerNode < 1) throw core::UsageError(file.path + ": no ranks recorded to lay a model out on");
  std::tie(a.gpuMemoryBytes, a.memorySource) = gpuMemoryOf(c, file);
  std::map<std::tuple<int, int, int, int, int>, Candidate> bestOfLayout;
  const std::vector<MemoryChoice> choices = candidateChoices(c, a.gpus, a.gpusPerNode);
  a.considered = choices.size();
  for (const MemoryChoice& choice : choices) {
    const MemoryEstimate memory = memoryPerGpu(c.framework, c.base.model, c.base.seq, choice, c.reserveBytes);
    if (memory.total() > a.gpuMemoryBytes) continue;
    ++a.fitting;
    Candidate candidate = c.framework == Framework::kVllm ? served(c, choice, memory, a.gpuMemoryBytes)
                                                          : priced(c, choice, memory, file);
    const auto key = std::make_tuple(choice.layout.tp, choice.layout.pp, choice.layout.dp, choice.layout.ep,
                                     choice.microBatch);
    const auto found = bestOfLayout.find(key);
    if (found == bestOfLayout.end() || faster(candidate, found->second)) bestOfLayout[key] = std::move(candidate);
  }
  for (auto& [key, candidate] : bestOfLayout) a.best.push_back(std::move(candidate));
  std::sort(a.best.begin(), a.best.end(), [&](const Candidate& x, const Candidate& y) {
    if (c.framework == Framework::kVllm) {  // serving: fewest GPUs per replica, then the most sequences
      const int gx = x.choice.layout.tp * x.choice.layout.pp;
      const int gy = y.choice.layout.tp * y.choice.layout.pp;
      return gx != gy ? gx < gy : x.sequences > y.sequences;
    }
    return faster(x, y);
  });
  if (a.best.size() > static_cast<std::size_t>(std::max(c.top, 1))) a.best.resize(static_cast<std::size_t>(c.top));
  if (a.fitting == 0) a.doesNotFit = doesNotFit(c, a.gpus, a.gpusPerNode, a.gpuMemoryBytes);
  a.storage = storageFeedOf(c, a, file);
  if (a.gpus > static_cast<int>(file.topology.ranks.size())) {
    a.notes.push_back(fmt::format("{} GPUs asked, the file measured {}: larger groups are priced at the measured "
                                  "groups' busbw",
                                  a.gpus, file.topology.ranks.size()));
  }
  return a;
}

}  // namespace fabricmap::orchestrator
