// A run's configuration as JSON (the results file's provenance) and the measurement options two
// configurations differ in (see run_config.h).
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/layout.h"
#include "core/units.h"
#include "orchestrator/run/run_config.h"

namespace fabricmap::orchestrator {

namespace {

nlohmann::ordered_json toJson(const RunConfig& c) {
  nlohmann::ordered_json j;
  j["backend"] = c.backend;
  j["suite"] = c.suite;
  j["min_bytes"] = c.minBytes;
  j["max_bytes"] = c.maxBytes;
  j["step_factor"] = c.stepFactor;
  j["step_bytes"] = c.stepBytes;
  j["iters"] = c.iters;
  j["warmup_iters"] = c.warmup;
  j["check"] = c.check;
  j["cuda_graph"] = c.cudaGraph;
  j["ucx_api"] = c.remoteWrites ? "rma" : "tag";
  j["pair_memory"] = c.pairMemory == PairMemory::kCuda ? "cuda" : c.pairMemory == PairMemory::kHost ? "host" : "auto";
  j["cuda_pairs"] = c.cudaPairs;
  j["nic_per_rank"] = c.nicPerRank;
  for (core::Op op : c.ops) j["ops"].push_back(core::traits(op).name);
  for (core::DType t : c.dtypes) j["dtypes"].push_back(core::traits(t).name);
  for (core::RedOp r : c.redops) j["redops"].push_back(core::name(r));
  j["placement"] = c.placement == Placement::kBoth      ? "both"
                   : c.placement == Placement::kInPlace ? "in-place"
                                                        : "out-of-place";
  for (core::Scope s : c.scopes) j["scopes"].push_back(core::name(s));
  j["root"] = c.root;
  j["min_group"] = c.minGroup;
  j["ranks_per_node"] = c.ranksPerNode;
  j["gpus_per_node"] = c.gpusPerNode;
  j["collectives"] = c.collectives;
  j["copies"] = c.copies;
  j["copy_bytes"] = c.copyBytes;
  j["copy_iters"] = c.copyIters;
  j["copy_warmup_iters"] = c.copyWarmup;
  j["pairwise"] = c.pairwise;
  j["pairwise_mode"] = c.pairwiseMode == PairwiseMode::kFull ? "full" : "quick";
  j["pairwise_peers"] = c.pairwisePeers;
  j["pair_bytes"] = c.pairBytes;
  j["pair_window"] = c.pairWindow;
  j["pair_iters"] = c.pairIters;
  j["latency_iters"] = c.latencyIters;
  j["retests"] = c.retests;
  j["slow_threshold"] = c.slowThreshold;
  j["latency_factor"] = c.latencyFactor;
  // the pattern keys only when asked for: a file recorded before they existed resumes unchanged
  if (c.training) {
    j["training"] = true;
    j["layout"] = c.layout;
    j["strict_layout"] = c.strictLayout;
    j["micro_batch"] = c.microBatch;
    j["seq_len"] = c.seqLen;
    j["hidden"] = c.hidden;
    j["layers"] = c.layers;
    j["top_k"] = c.topK;
    j["sequence_parallel"] = c.sequenceParallel;
    j["dp_mode"] = c.zero ? "zero" : "allreduce";
    j["bucket_bytes"] = c.bucketBytes;
    j["train_dtype"] = core::traits(c.trainDtype).name;
    j["train_iters"] = c.trainIters;
    j["train_warmup_iters"] = c.trainWarmup;
  }
  if (c.scaling) {
    j["scaling"] = true;
    j["scaling_bytes"] = c.scalingBytes;
  }
  if (!c.storagePath.empty()) {
    j["storage"] = c.storagePath;
    j["storage_write"] = c.storageWrite;
    j["storage_ranks"] = c.storageEveryRank ? "all" : "node";
    j["storage_bytes"] = c.storageBytes;
  }
  j["step_timeout"] = c.stepTimeout;
  j["noise_cv"] = c.noiseCv;
  j["min_confidence"] = c.minConfidence;
  // the inventory's keys only when set: a file recorded before they existed resumes unchanged
  if (c.lineRateGBps > 0) j["line_rate"] = c.lineRateGBps;
  if (c.lineRateFraction != 0.8) j["line_rate_fraction"] = c.lineRateFraction;
  if (c.sysfsRoot != "/sys") j["sysfs_root"] = c.sysfsRoot;
  if (!c.fabricFile.empty()) j["fabric"] = c.fabricFile;
  if (!c.accept.empty()) {
    j["accept"] = c.accept;
    j["allow_missing"] = c.allowMissing;
  }
  // a file measured with injected faults says so
  for (const core::Fault& f : c.faults) {
    std::string text = faultKindName(f.kind);
    if (f.rank >= 0) text += fmt::format(":rank={}", f.rank);
    if (f.op) text += fmt::format(":op={}", core::traits(*f.op).name);
    if (f.step >= 0) text += fmt::format(":step={}", f.step);
    j["inject_faults"].push_back(text);
  }
  return j;
}

std::string text(const nlohmann::ordered_json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

std::string toJsonString(const RunConfig& c) {
  return text(toJson(c));
}

std::vector<std::string> measurementDifferences(const RunConfig& a, const RunConfig& b) {
  nlohmann::ordered_json ja = toJson(a);
  nlohmann::ordered_json jb = toJson(b);
  std::vector<std::string> out;
  for (const char* runTime : {"step_timeout", "inject_faults", "sysfs_root", "fabric"}) {
    ja.erase(runTime);
    jb.erase(runTime);
  }
  for (const auto& [key, value] : ja.items()) {
    const auto other = jb.find(key);
    const std::string theirs = other == jb.end() ? "(none)" : text(*other);
    if (other == jb.end() || *other != value) out.push_back(fmt::format("{}: {} vs {}", key, text(value), theirs));
  }
  for (const auto& [key, value] : jb.items()) {
    if (!ja.contains(key)) out.push_back(fmt::format("{}: (none) vs {}", key, text(value)));
  }
  return out;
}

}  // namespace fabricmap::orchestrator
