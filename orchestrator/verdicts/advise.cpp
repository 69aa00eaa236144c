// Layout advice (see advise.h).
#include "orchestrator/verdicts/advise.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <tuple>

#include "core/error.h"
#include "core/units.h"
#include "orchestrator/verdicts/scope_model.h"

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

// The GPU memory a layout must fit: --gpu-memory, else the file's (a contradiction between them is
// one of the advice's notes).
std::pair<double, std::string> gpuMemoryFor(const AdviseConfig& c, const results::ResultsFile& file,
                                            std::vector<std::string>& notes) {
  const GpuMemoryChoice gpu = chooseGpuMemory(c.base.gpuMemoryBytes, "--gpu-memory", file);
  if (!gpu.contradiction.empty()) notes.push_back(gpu.contradiction);
  if (!gpu.bytes) {
    throw core::UsageError(file.path + ": no GPU memory recorded (a host-memory run, a file before the inventory, or "
                                       "a log whose GPU names do not tell it): declare it with --gpu-memory (80G)");
  }
  return {*gpu.bytes, gpu.source};
}

double gib(double bytes) { return bytes / (1ull << 30); }

constexpr int kMostGpus = 1 << 17;  // the largest cluster "does not fit" looks for

// The least memory any choice for `gpus` needs, and the smallest GPU count (doubling, in nodes)
// at which one fits: what "does not fit" tells.
std::string doesNotFit(const AdviseConfig& c, int gpus, int perNode, double memory) {
  double least = std::numeric_limits<double>::infinity();
  for (const MemoryChoice& choice : candidateChoices(c, gpus, perNode)) {
    least = std::min(least, memoryPerGpu(c.framework, c.base.model, c.base.seq, choice, c.base.reserveBytes).total());
  }
  std::string text = std::isfinite(least)
                         ? fmt::format("no layout fits {} GPUs of {:.1f} GiB: the smallest needs {:.1f} GiB per "
                                       "GPU ({:.1f} GiB more)",
                                       gpus, gib(memory), gib(least), gib(least - memory))
                         : fmt::format("no layout of this model and batch runs on {} GPUs", gpus);
  for (int more = gpus * 2; more <= kMostGpus; more *= 2) {
    for (const MemoryChoice& choice : candidateChoices(c, more, perNode)) {
      if (memoryPerGpu(c.framework, c.base.model, c.base.seq, choice, c.base.reserveBytes).total() <= memory) {
        return text + fmt::format("; {} GPUs of this memory would fit it ({})", more, core::formatLayout(choice.layout));
      }
    }
  }
  return text;
}

// Fastest first; then the least memory.
bool faster(const Candidate& a, const Candidate& b) {
  const double sa = a.priced() ? *a.prediction->stepSeconds : 1e300;
  const double sb = b.priced() ? *b.prediction->stepSeconds : 1e300;
  if (sa != sb) return sa < sb;
  return a.memory.total() < b.memory.total();
}

// Which of two memory options of one layout and micro-batch it is shown with. Priced: the faster
// step. Not priced: one whose traffic was counted (so it prices once the layout's own ops and scopes
// are measured) over one whose memory option needs ops the file lacks, then the least recomputed
// compute, then the least memory: what a planner would run, not the least-memory extreme.
bool shownBefore(const Candidate& a, const Candidate& b) {
  if (a.priced() != b.priced()) return a.priced();
  if (a.priced()) return faster(a, b);
  if (a.prediction.has_value() != b.prediction.has_value()) return a.prediction.has_value();
  if (a.choice.recompute != b.choice.recompute) return a.choice.recompute < b.choice.recompute;
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
    candidate.prediction = predictStep(predictConfigFor(c, choice), file);
    if (!candidate.prediction->stepSeconds) candidate.unpriced = candidate.prediction->unknownReason;
  } catch (const core::UsageError& e) {
    candidate.unpriced = e.what();
  }
  return candidate;
}

// Sequence parallelism and every ZeRO stage (Megatron-LM's distributed optimizer) exchange by
// all_gather and reduce_scatter (predict_traffic.cpp).
bool needsGatherScatter(const MemoryChoice& choice) { return choice.sequenceParallel || choice.zeroStage >= 1; }

// A memory option the file cannot price: not predicted at all, said why.
Candidate unmeasuredOption(const AdviseConfig& c, const MemoryChoice& choice, const MemoryEstimate& memory,
                           const std::string& path) {
  const std::string option = choice.sequenceParallel && choice.zeroStage >= 1 ? "sequence parallelism and ZeRO need"
                             : choice.sequenceParallel                        ? "sequence parallelism needs"
                                                                              : "ZeRO (the distributed optimizer) needs";
  return {choice, memory, std::nullopt,
          fmt::format("its {} all_gather and reduce_scatter curves, which {} did not measure", option, path),
          frameworkFlags(c, choice)};
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
  p.recompute = choice.recompute;
  p.modelStates = ModelStates{c.framework, choice.zeroStage};
  p.virtualStages = choice.virtualStages;
  return p;
}

namespace {

using LayoutKey = std::tuple<int, int, int, int, int>;  // tp, pp, dp, ep, micro-batch

LayoutKey keyOf(const MemoryChoice& m) {
  return {m.layout.tp, m.layout.pp, m.layout.dp, m.layout.ep, m.microBatch};
}

// Every fitting choice, the one each layout and micro-batch is shown with. Memory options the file
// cannot price (it lacks all_gather or reduce_scatter) are not predicted: the search keeps to the
// options it can price, and a layout that fits only with such an option is listed unpriced.
std::map<LayoutKey, Candidate> fittingChoices(const AdviseConfig& c, const results::ResultsFile& file, Advice& a) {
  const bool gatherScatter = unmeasuredNeed(PricedOn::kGatherScatter, measuredOps(file), file.path).empty();
  std::map<LayoutKey, Candidate> shown;
  const std::vector<MemoryChoice> choices = candidateChoices(c, a.gpus, a.gpusPerNode);
  a.considered = choices.size();
  for (const MemoryChoice& choice : choices) {
    const MemoryEstimate memory = memoryPerGpu(c.framework, c.base.model, c.base.seq, choice, c.base.reserveBytes);
    if (memory.total() > a.gpuMemoryBytes) continue;
    ++a.fitting;
    Candidate candidate;
    if (c.framework == Framework::kVllm) {
      candidate = served(c, choice, memory, a.gpuMemoryBytes);
    } else if (!gatherScatter && needsGatherScatter(choice)) {
      ++a.optionsUnmeasured;
      candidate = unmeasuredOption(c, choice, memory, file.path);
    } else {
      candidate = priced(c, choice, memory, file);
    }
    const auto found = shown.find(keyOf(choice));
    if (found == shown.end()) {
      shown.emplace(keyOf(choice), std::move(candidate));
    } else if (c.framework == Framework::kVllm ? faster(candidate, found->second)
                                               : shownBefore(candidate, found->second)) {
      found->second = std::move(candidate);
    }
  }
  return shown;
}

// The ranking (priced layouts, fastest first; vLLM: fewest GPUs per replica, then the most
// sequences) and, apart, the layouts that fit unpriced in layout order; both within --top.
void rankPriced(const AdviseConfig& c, std::map<LayoutKey, Candidate> shown, Advice& a) {
  // unpriced: one row per layout, whatever its micro-batch (a list to read, not a ranking)
  std::map<std::tuple<int, int, int, int>, Candidate> unpriced;
  for (auto& [key, candidate] : shown) {
    if (c.framework == Framework::kVllm || candidate.priced()) {
      a.best.push_back(std::move(candidate));
      continue;
    }
    const auto layout = std::make_tuple(std::get<0>(key), std::get<1>(key), std::get<2>(key), std::get<3>(key));
    const auto found = unpriced.find(layout);
    if (found == unpriced.end()) {
      unpriced.emplace(layout, std::move(candidate));
    } else if (shownBefore(candidate, found->second)) {
      found->second = std::move(candidate);
    }
  }
  for (auto& [layout, candidate] : unpriced) a.unpriced.push_back(std::move(candidate));
  std::sort(a.best.begin(), a.best.end(), [&](const Candidate& x, const Candidate& y) {
    if (c.framework == Framework::kVllm) {
      const int gx = x.choice.layout.tp * x.choice.layout.pp;
      const int gy = y.choice.layout.tp * y.choice.layout.pp;
      return gx != gy ? gx < gy : x.sequences > y.sequences;
    }
    return faster(x, y);
  });
  const auto top = static_cast<std::size_t>(std::max(c.top, 1));
  a.rankedLayouts = a.best.size();
  if (a.best.size() > top) a.best.resize(top);
  a.unpricedLayouts = a.unpriced.size();
  const std::size_t room = a.best.empty() ? top : top - std::min(top, a.best.size());
  if (a.unpriced.size() > room) a.unpriced.resize(room);
}

constexpr std::size_t kReasonsShown = 4;

// Why the unpriced layouts are not priced: each traffic type's reason once, in layout order.
std::vector<std::string> reasonsOf(const std::vector<Candidate>& unpriced) {
  std::vector<std::string> reasons;
  const auto add = [&](std::string reason) {
    if (std::find(reasons.begin(), reasons.end(), reason) == reasons.end()) reasons.push_back(std::move(reason));
  };
  for (const Candidate& k : unpriced) {
    if (!k.prediction) {
      add(k.unpriced);
      continue;
    }
    for (const TrafficResult& t : k.prediction->traffic) {
      if (t.status == "unknown") add(fmt::format("{}: {}", t.traffic.type, t.reason));
    }
  }
  if (reasons.size() > kReasonsShown) {
    const std::size_t more = reasons.size() - kReasonsShown;
    reasons.resize(kReasonsShown);
    reasons.push_back(fmt::format("and {} more reason{}", more, more == 1 ? "" : "s"));
  }
  return reasons;
}

// What to measure so that more of what fits is priced: the ops of the kinds of parallelism the
// unpriced layouts use, and, for a file of one node, any measurement across nodes.
std::vector<std::string> toPriceMore(const Advice& a, const std::vector<Candidate>& unpriced,
                                     const results::ResultsFile& file) {
  const std::set<core::Op> measured = measuredOps(file);
  const auto uses = [&](auto test) { return std::any_of(unpriced.begin(), unpriced.end(), test); };
  std::vector<std::string> out;
  const auto need = [&](PricedOn what, bool used) {
    if (std::string s = used ? unmeasuredNeed(what, measured, file.path) : ""; !s.empty()) out.push_back(std::move(s));
  };
  need(PricedOn::kGatherScatter, a.optionsUnmeasured > 0);
  need(PricedOn::kAllReduce, uses([](const Candidate& k) { return k.choice.layout.tp > 1 || k.choice.layout.dp > 1; }));
  need(PricedOn::kSendRecv, uses([](const Candidate& k) { return k.choice.layout.pp > 1; }));
  need(PricedOn::kAllToAll, uses([](const Candidate& k) { return k.choice.layout.ep > 1; }));
  if (isOneNode(file.topology) && a.gpus > a.gpusPerNode) {
    out.push_back(fmt::format("groups across nodes need curves measured across nodes: {} measured one node, whose "
                              "world scope is the node's inside; run on several nodes, or import a log of several",
                              file.path));
  }
  return out;
}

}  // namespace

std::string nothingPriced(const Advice& a) {
  return fmt::format("no layout priced: none of the {} layout{} that fit could be priced from {}, so none is ranked "
                     "or recommended",
                     a.unpricedLayouts, a.unpricedLayouts == 1 ? "" : "s", a.file);
}

Advice advise(const AdviseConfig& c, const results::ResultsFile& file) {
  Advice a;
  a.file = file.path;
  a.gpus = c.gpus > 0 ? c.gpus : static_cast<int>(file.topology.ranks.size());
  a.gpusPerNode = ranksPerNodeOf(file.topology);
  if (a.gpus < 1 || a.gpusPerNode < 1) throw core::UsageError(file.path + ": no ranks recorded to lay a model out on");
  std::tie(a.gpuMemoryBytes, a.memorySource) = gpuMemoryFor(c, file, a.notes);
  std::map<LayoutKey, Candidate> shown = fittingChoices(c, file, a);
  std::vector<Candidate> allUnpriced;
  for (const auto& [key, k] : shown) {
    if (c.framework != Framework::kVllm && !k.priced()) allUnpriced.push_back(k);
  }
  rankPriced(c, std::move(shown), a);
  a.whyUnpriced = reasonsOf(allUnpriced);
  a.toPriceMore = toPriceMore(a, allUnpriced, file);
  if (a.fitting == 0) a.doesNotFit = doesNotFit(c, a.gpus, a.gpusPerNode, a.gpuMemoryBytes);
  a.storage = storageFeedOf(c, a, file);
  // (a one-node file prices no group beyond its node: toPriceMore says what would)
  if (a.gpus > static_cast<int>(file.topology.ranks.size()) && !isOneNode(file.topology)) {
    a.notes.push_back(fmt::format("{} GPUs asked, the file measured {}: larger groups are priced at the measured "
                                  "groups' busbw",
                                  a.gpus, file.topology.ranks.size()));
  }
  return a;
}

}  // namespace fabricmap::orchestrator
