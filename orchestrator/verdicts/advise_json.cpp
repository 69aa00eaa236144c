// The frameworks' options for a layout, and `advise --json` (see advise.h).
#include <fmt/format.h>

#include <algorithm>

#include "orchestrator/verdicts/advise.h"

namespace fabricmap::orchestrator {
namespace {

std::string megatronFlags(const AdviseConfig& c, const MemoryChoice& m) {
  std::string flags = fmt::format("--tensor-model-parallel-size {} --pipeline-model-parallel-size {}", m.layout.tp,
                                  m.layout.pp);
  if (m.virtualStages > 1) {
    flags += fmt::format(" --num-layers-per-virtual-pipeline-stage {}",
                         c.base.model.layers / (m.layout.pp * m.virtualStages));
  }
  if (m.layout.ep > 1) flags += fmt::format(" --expert-model-parallel-size {}", m.layout.ep);
  if (m.sequenceParallel) flags += " --sequence-parallel";
  if (m.zeroStage >= 1) flags += " --use-distributed-optimizer";
  if (m.recompute == Recompute::kSelective) flags += " --recompute-granularity selective";
  if (m.recompute == Recompute::kFull) {
    flags += " --recompute-granularity full --recompute-method uniform --recompute-num-layers 1";
  }
  return flags + fmt::format(" --micro-batch-size {} --global-batch-size {} --seq-length {}", m.microBatch,
                             c.base.globalBatch, c.base.seq);
}

// A DeepSpeed configuration fragment; tensor and pipeline parallelism are set where the model is
// built (Megatron-DeepSpeed's --tensor-model-parallel-size, PipelineModule's num_stages).
std::string deepSpeedFlags(const AdviseConfig& c, const MemoryChoice& m) {
  nlohmann::ordered_json j;
  j["train_batch_size"] = c.base.globalBatch;
  j["train_micro_batch_size_per_gpu"] = m.microBatch;
  j["gradient_accumulation_steps"] = m.microBatches;
  j["zero_optimization"] = {{"stage", m.zeroStage}};
  j[c.base.dtype == "fp16" ? "fp16" : "bf16"] = {{"enabled", true}};
  if (m.recompute == Recompute::kFull) j["activation_checkpointing"] = {{"partition_activations", m.layout.tp > 1}};
  return j.dump() + fmt::format(" (tensor parallel {}, pipeline stages {}{})", m.layout.tp, m.layout.pp,
                                m.layout.ep > 1 ? fmt::format(", expert parallel {}", m.layout.ep) : "");
}

nlohmann::ordered_json memoryJson(const MemoryEstimate& e) {
  return {{"weights", e.weights},         {"gradients", e.gradients}, {"optimizer", e.optimizer},
          {"activations", e.activations}, {"reserve", e.reserve},     {"total", e.total()}};
}

// A number, or null when unknown.
nlohmann::ordered_json orNull(const std::optional<double>& v) { return v ? nlohmann::ordered_json(*v) : nullptr; }

// One layout; `rank` its place in the ranking, 0 for one listed unranked (not priced).
nlohmann::ordered_json candidateJson(const Candidate& k, int rank) {
  const MemoryChoice& m = k.choice;
  nlohmann::ordered_json j;
  j["layout"] = {{"tp", m.layout.tp}, {"pp", m.layout.pp}, {"dp", m.layout.dp}, {"ep", m.layout.ep}};
  j["micro_batch"] = m.microBatch;
  j["virtual_stages"] = m.virtualStages;
  j["sequence_parallel"] = m.sequenceParallel;
  j["zero_stage"] = m.zeroStage;
  j["recompute"] = recomputeName(m.recompute);
  j["memory_bytes"] = memoryJson(k.memory);
  const Prediction* p = k.prediction ? &*k.prediction : nullptr;
  j["step_seconds"] = p ? orNull(p->stepSeconds) : nullptr;
  j["rank"] = rank > 0 ? nlohmann::ordered_json(rank) : nullptr;
  j["utilization"] = p ? orNull(p->utilization) : nullptr;  // the compute share, under its first name
  j["compute_share"] = p ? orNull(p->utilization) : nullptr;
  j["step_mfu"] = p ? orNull(p->stepMfu) : nullptr;
  j["tokens_per_second"] = p ? orNull(p->tokensPerSecond) : nullptr;
  j["days"] = p ? orNull(p->days) : nullptr;
  j["gpu_hours"] = p ? orNull(p->gpuHours) : nullptr;
  j["cost"] = p ? orNull(p->cost) : nullptr;
  j["unpriced"] = k.unpriced;
  j["sequences"] = k.sequences;
  j["flags"] = k.flags;
  return j;
}

nlohmann::ordered_json storageJson(const StorageFeed& s) {
  return {{"read_gbps", s.readGBps},
          {"readers", s.readers},
          {"write_gbps", orNull(s.writeGBps)},
          {"loader_gbps", orNull(s.loaderGBps)},
          {"checkpoint_bytes", s.checkpointBytes},
          {"checkpoint_seconds", orNull(s.checkpointSeconds)}};
}

nlohmann::ordered_json adviceJson(const Advice& a) {
  nlohmann::ordered_json layouts = nlohmann::ordered_json::array();
  int rank = 0;
  for (const Candidate& k : a.best) layouts.push_back(candidateJson(k, ++rank));
  for (const Candidate& k : a.unpriced) layouts.push_back(candidateJson(k, 0));
  return {{"file", a.file},
          {"gpus", a.gpus},
          {"gpus_per_node", a.gpusPerNode},
          {"gpu_memory_bytes", a.gpuMemoryBytes},
          {"gpu_memory_source", a.memorySource},
          {"considered", a.considered},
          {"fitting", a.fitting},
          {"options_unmeasured", a.optionsUnmeasured},
          {"ranked", a.rankedLayouts},
          {"unpriced_layouts", a.unpricedLayouts},
          {"nothing_priced", a.best.empty() && a.unpricedLayouts > 0 ? nothingPriced(a) : ""},
          {"why_unpriced", a.whyUnpriced},
          {"to_price_more", a.toPriceMore},
          {"layouts", layouts},
          {"does_not_fit", a.doesNotFit},
          {"storage", a.storage ? storageJson(*a.storage) : nlohmann::ordered_json(nullptr)},
          {"notes", a.notes}};
}

}  // namespace

std::string frameworkFlags(const AdviseConfig& c, const MemoryChoice& m) {
  switch (c.framework) {
    case Framework::kMegatron: return megatronFlags(c, m);
    case Framework::kDeepSpeed: return deepSpeedFlags(c, m);
    case Framework::kVllm: break;
  }
  return fmt::format("--tensor-parallel-size {} --pipeline-parallel-size {} --max-num-seqs {} --max-model-len {}",
                     m.layout.tp, m.layout.pp, m.microBatch, c.base.seq);
}

nlohmann::ordered_json adviceToJson(const AdviseConfig& c, const std::vector<Advice>& advice) {
  nlohmann::ordered_json j;
  j["model"] = {{"name", c.base.model.name},   {"params", c.base.model.params},   {"layers", c.base.model.layers},
                {"hidden", c.base.model.hidden}, {"heads", c.base.model.heads},   {"experts", c.base.model.experts},
                {"top_k", c.base.model.topK},    {"source", c.base.modelSource}};
  j["seq"] = c.base.seq;
  j["global_batch"] = c.base.globalBatch;
  j["framework"] = frameworkName(c.framework);
  j["mfu"] = c.base.mfu;
  j["reserve_bytes"] = c.base.reserveBytes;
  j["tokens"] = c.base.tokens;
  j["price_per_gpu_hour"] = c.base.pricePerGpuHour ? nlohmann::ordered_json(*c.base.pricePerGpuHour) : nullptr;
  j["files"] = nlohmann::ordered_json::array();
  for (const Advice& a : advice) j["files"].push_back(adviceJson(a));
  j["providers"] = nlohmann::ordered_json::array();
  for (const Advice* a : providersRanked(advice)) {
    j["providers"].push_back({{"file", a->file}, {"best", a->best.empty() ? nullptr : candidateJson(a->best.front(), 1)},
                              {"does_not_fit", a->doesNotFit}});
  }
  return j;
}

std::vector<const Advice*> providersRanked(const std::vector<Advice>& advice) {
  std::vector<const Advice*> out;
  for (const Advice& a : advice) out.push_back(&a);
  const auto key = [](const Advice* a) {
    if (a->best.empty() || !a->best.front().priced()) return std::make_pair(2, 0.0);
    const Prediction& p = *a->best.front().prediction;
    if (p.cost) return std::make_pair(0, *p.cost);
    return std::make_pair(1, p.stepSeconds.value_or(1e300) * a->gpus);  // GPU-seconds per step
  };
  std::stable_sort(out.begin(), out.end(), [&](const Advice* x, const Advice* y) { return key(x) < key(y); });
  return out;
}

}  // namespace fabricmap::orchestrator
