// `fabricmap predict --json`: the configuration and every prediction (see predict.h).
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/ops.h"
#include "orchestrator/verdicts/memory_model.h"
#include "orchestrator/verdicts/predict.h"

namespace fabricmap::orchestrator {
namespace {

nlohmann::ordered_json orNull(const std::optional<double>& v) {
  return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr);
}

using Json = nlohmann::ordered_json;

Json modelToJson(const PredictConfig& c) {
  const ModelSpec& m = c.model;
  return {{"name", m.name},
          {"params", m.params},
          {"active_params", m.activeParams()},
          {"expert_params", m.expertParams()},
          {"layers", m.layers},
          {"hidden", m.hidden},
          {"heads", m.heads},
          {"ffn", m.ffn},
          {"experts", m.experts},
          {"top_k", m.topK},
          {"source", c.modelSource}};
}

Json configToJson(const PredictConfig& c) {
  return {{"seq", c.seq},
          {"micro_batch", c.microBatch},
          {"global_batch", c.globalBatch},
          {"micro_batches_per_step", microBatchesPerStep(c)},
          {"virtual_stages", c.virtualStages},
          {"tokens_per_step", static_cast<double>(c.globalBatch) * c.seq},
          {"dtype", c.dtype},
          {"grad_dtype", c.gradDtype},
          {"layout", {{"tp", c.layout.tp}, {"pp", c.layout.pp}, {"dp", c.layout.dp}, {"ep", c.layout.ep}}},
          {"gpus", c.layout.worldSize()},
          {"sequence_parallel", c.sequenceParallel},
          {"dp_mode", dpModeName(c.dpMode)},
          {"bucket_bytes", c.bucketBytes},
          {"overlap", c.overlap},
          {"mfu", c.mfu},
          {"peak_tflops", orNull(c.peakTflops)},
          {"tokens", c.tokens},
          {"price_per_gpu_hour", orNull(c.pricePerGpuHour)},
          {"recompute", recomputeName(c.recompute)},
          {"model_states", {{"framework", frameworkName(modelStatesOf(c).framework)},
                            {"zero_stage", modelStatesOf(c).zeroStage}}},
          {"gpu_memory_bytes", orNull(c.gpuMemoryBytes)},
          {"reserve_bytes", c.reserveBytes}};
}

Json memoryToJson(const MemoryEstimate& e) {
  return {{"weights", e.weights},         {"gradients", e.gradients}, {"optimizer", e.optimizer},
          {"activations", e.activations}, {"reserve", e.reserve},     {"total", e.total()}};
}

Json trafficToJson(const TrafficResult& t) {
  Json legs = Json::array();
  double bytesPerStep = 0;
  for (const TrafficLeg& leg : t.traffic.legs) {
    bytesPerStep += static_cast<double>(leg.bytes) * static_cast<double>(t.traffic.messages);
  }
  for (const LegResult& r : t.legs) {
    legs.push_back({{"op", core::traits(r.leg.op).name},
                    {"bytes_per_message", r.leg.bytes},
                    {"busbw_gbs", orNull(r.busbw)},
                    {"seconds", orNull(r.seconds)},
                    {"source", r.source},
                    {"reason", r.reason}});
  }
  return {{"type", t.traffic.type},
          {"status", t.status},
          {"group_size", t.traffic.groupSize},
          {"scope", t.scope},
          {"messages_per_step", t.traffic.messages},
          {"bytes_per_step", bytesPerStep},
          {"overlappable", t.traffic.overlappable},
          {"what", t.traffic.what},
          {"legs", legs},
          {"interference", orNull(t.interference)},
          {"interference_source", t.interferenceSource},
          {"seconds", orNull(t.seconds)},
          {"exposed_seconds", orNull(t.exposedSeconds)},
          {"reason", t.reason}};
}

Json predictionToJson(const Prediction& p) {
  Json f;
  f["file"] = p.file;
  f["ranks_per_node"] = p.ranksPerNode;
  f["file_ranks"] = p.fileRanks;
  f["gpu"] = p.gpu;
  f["peak_tflops"] = p.peakTflops;
  f["peak_source"] = p.peakSource;
  f["traffic"] = Json::array();
  for (const TrafficResult& t : p.traffic) f["traffic"].push_back(trafficToJson(t));
  f["compute_seconds"] = p.computeSeconds;
  f["bubble_seconds"] = p.bubbleSeconds;
  f["comm_seconds"] = orNull(p.commSeconds);
  f["comm_exposed_seconds"] = orNull(p.exposedSeconds);
  f["step_seconds"] = orNull(p.stepSeconds);
  f["gpu_utilization"] = orNull(p.utilization);  // the compute share, under its first name
  f["compute_share"] = orNull(p.utilization);
  f["step_mfu"] = orNull(p.stepMfu);
  f["tokens_per_second"] = orNull(p.tokensPerSecond);
  f["steps"] = p.steps;
  f["days"] = orNull(p.days);
  f["gpu_hours"] = orNull(p.gpuHours);
  f["cost"] = orNull(p.cost);
  f["unknown_reason"] = p.unknownReason;
  f["memory_bytes"] = memoryToJson(p.memory);
  f["memory_model"] = p.memoryModel;
  f["gpu_memory_bytes"] = orNull(p.gpuMemoryBytes);
  f["gpu_memory_source"] = p.gpuMemorySource;
  const std::optional<bool> fits = p.fitsMemory();
  f["fits_memory"] = fits ? Json(*fits) : Json(nullptr);
  f["does_not_fit"] = p.doesNotFit();
  f["notes"] = p.notes;
  return f;
}

}  // namespace

nlohmann::ordered_json predictionsToJson(const PredictConfig& c, const std::vector<Prediction>& predictions) {
  Json j;
  j["model"] = modelToJson(c);
  j["config"] = configToJson(c);
  j["predictions"] = Json::array();
  for (const Prediction& p : predictions) j["predictions"].push_back(predictionToJson(p));
  return j;
}

}  // namespace fabricmap::orchestrator
