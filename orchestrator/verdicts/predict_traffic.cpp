// The traffic one training step makes, and the groups it runs in (see predict.h).
#include <fmt/format.h>

#include <cmath>
#include <set>

#include "core/units.h"
#include "orchestrator/verdicts/predict.h"

namespace fabricmap::orchestrator {
namespace {

using U64 = std::uint64_t;

// Equal buckets of at most `bucket` bytes: frameworks fill buckets of about that size, so one
// figure per message describes them all (a last small bucket would be the only one priced at a
// small-message rate, which DDP's bucket sizing avoids in practice).
struct Buckets {
  U64 count = 0;
  U64 bytes = 0;
};
Buckets bucketsOf(double totalBytes, U64 bucket) {
  if (totalBytes < 1) return {};
  const double count = std::ceil(totalBytes / static_cast<double>(bucket));
  return {static_cast<U64>(count), static_cast<U64>(std::llround(totalBytes / count))};
}

// What every traffic type of one training step is sized from.
struct StepShape {
  explicit StepShape(const PredictConfig& c)
      : bytes(static_cast<U64>(dtypeBytes(c.dtype))), gradBytes(dtypeBytes(c.gradDtype)),
        micro(static_cast<U64>(microBatchesPerStep(c))), stageLayers(static_cast<U64>(c.model.layers / c.layout.pp)),
        activation(static_cast<U64>(c.microBatch) * static_cast<U64>(c.seq) * static_cast<U64>(c.model.hidden) * bytes),
        shard(c.sequenceParallel ? static_cast<U64>(c.layout.tp) : 1) {}
  U64 bytes;          // of a parameter or activation element
  double gradBytes;   // of a gradient element
  U64 micro;          // micro-batches per step and pipeline
  U64 stageLayers;    // layers per pipeline stage
  // one micro-batch's activations b x s x h; with sequence parallelism each TP rank holds 1/tp
  // of the sequence between the TP regions (what crosses a pipeline boundary or enters the router)
  U64 activation;
  U64 shard;
};

Traffic tensorTraffic(const PredictConfig& c, const StepShape& s) {
  Traffic tp{"tp", c.layout.tp, 0, {}, false, "", ""};
  if (c.layout.tp == 1) {
    tp.none = "tp=1: no tensor parallelism";
    return tp;
  }
  tp.messages = 4 * s.stageLayers * s.micro;
  tp.legs = c.sequenceParallel
                ? std::vector<TrafficLeg>{{core::Op::kAllGather, s.activation}, {core::Op::kReduceScatter, s.activation}}
                : std::vector<TrafficLeg>{{core::Op::kAllReduce, s.activation}};
  tp.what = fmt::format("4 {} per layer (2 forward, 2 backward) x {} layers per stage x {} micro-batches",
                        c.sequenceParallel ? "all_gather + reduce_scatter pairs" : "all_reduces", s.stageLayers,
                        s.micro);
  return tp;
}

Traffic pipelineTraffic(const PredictConfig& c, const StepShape& s) {
  Traffic pp{"pp", c.layout.pp, 0, {}, false, "", ""};
  if (c.layout.pp == 1) {
    pp.none = "pp=1: one pipeline stage";
    return pp;
  }
  // interleaved: every micro-batch crosses each stage boundary once per model chunk
  const U64 chunks = static_cast<U64>(c.virtualStages);
  pp.messages = 2 * s.micro * chunks;
  pp.legs = {{core::Op::kSendRecv, s.activation / s.shard}};
  pp.what = fmt::format(
      "activations forward and their gradients backward between adjacent stages, 2 x {} micro-batches{}{}", s.micro,
      chunks > 1 ? fmt::format(" x {} virtual stages", chunks) : "",
      c.sequenceParallel && c.layout.tp > 1 ? " (1/tp of the sequence per rank)" : "");
  return pp;
}

// Gradients in buckets over a group of `groupSize` ranks that each hold `paramsPerRank`
// parameters; `none`: why there is no such traffic.
Traffic gradientTraffic(const PredictConfig& c, const StepShape& s, std::string type, int groupSize,
                        double paramsPerRank, std::string none) {
  Traffic t{std::move(type), groupSize, 0, {}, true, "", ""};
  if (!none.empty() || paramsPerRank <= 0) {
    t.none = none.empty() ? "no parameters to reduce" : none;
    return t;
  }
  const Buckets b = bucketsOf(paramsPerRank * s.gradBytes, c.bucketBytes);
  t.messages = b.count;
  if (c.dpMode != DpMode::kAllReduce) {
    // distributed optimizer: gradients reduce-scattered, updated parameters all-gathered back;
    // ZeRO-3 gathers them once more, for the backward pass
    const U64 paramBucket =
        static_cast<U64>(std::llround(static_cast<double>(b.bytes) * static_cast<double>(s.bytes) / s.gradBytes));
    t.legs = {{core::Op::kReduceScatter, b.bytes}, {core::Op::kAllGather, paramBucket}};
    if (c.dpMode == DpMode::kZero3) t.legs.push_back({core::Op::kAllGather, paramBucket});
  } else {
    t.legs = {{core::Op::kAllReduce, b.bytes}};
  }
  t.what = fmt::format("{} parameters per rank x {} B {} gradients in {} equal buckets of at most {}{}",
                       core::formatCount(paramsPerRank), s.gradBytes, c.gradDtype, b.count,
                       core::formatBytes(c.bucketBytes),
                       c.dpMode == DpMode::kZero    ? fmt::format(", parameters all-gathered in {}", c.dtype)
                       : c.dpMode == DpMode::kZero3 ? fmt::format(", parameters all-gathered in {} twice (ZeRO-3)", c.dtype)
                                                    : "");
  return t;
}

Traffic expertTraffic(const PredictConfig& c, const StepShape& s) {
  const ModelSpec& m = c.model;
  Traffic ep{"ep", c.layout.ep, 0, {}, false, "", ""};
  if (!m.moe()) {
    ep.none = "dense model: no experts";
    return ep;
  }
  if (c.layout.ep == 1) {
    ep.none = "ep=1: every rank holds every expert, no token exchange";
    return ep;
  }
  // each rank dispatches its tokens (top-k copies) to the experts' ranks and gets them back
  const U64 tokens = static_cast<U64>(c.microBatch) * static_cast<U64>(c.seq) / s.shard;
  ep.messages = 4 * s.stageLayers * s.micro;
  ep.legs = {{core::Op::kAllToAll, tokens * static_cast<U64>(m.hidden) * s.bytes * static_cast<U64>(m.topK)}};
  ep.what = fmt::format(
      "{} tokens x top-{} per rank; dispatch and combine, forward and backward: 4 per MoE layer x "
      "{} layers per stage x {} micro-batches",
      tokens, m.topK, s.stageLayers, s.micro);
  return ep;
}

}  // namespace

std::vector<Traffic> trafficOf(const PredictConfig& c) {
  const core::Layout& l = c.layout;
  const ModelSpec& m = c.model;
  const StepShape shape(c);
  std::vector<Traffic> out{tensorTraffic(c, shape), pipelineTraffic(c, shape)};
  // Gradients: the dense part over the whole DP group, the experts' over the ranks of the DP
  // group that hold the same experts (dp/ep of them). Experts are split by TP as the dense
  // layers are (Megatron-LM's default expert tensor parallel size).
  const double modelShards = static_cast<double>(l.tp) * l.pp;
  out.push_back(gradientTraffic(c, shape, "dp", l.dp, (m.params - m.expertParams()) / modelShards,
                                l.dp == 1 ? "dp=1: no data parallelism" : ""));
  const int expertDp = l.dp / l.ep;
  out.push_back(gradientTraffic(
      c, shape, "edp", expertDp, m.expertParams() / (modelShards * l.ep),
      !m.moe()        ? "dense model: no experts"
      : expertDp == 1 ? fmt::format("dp/ep = {}/{} = 1: each expert's gradients live on one rank", l.dp, l.ep)
                      : ""));
  out.push_back(expertTraffic(c, shape));
  return out;
}

std::vector<std::vector<int>> groupsFor(const core::Layout& layout, std::string_view type) {
  using core::Parallelism;
  if (type == "tp") return core::groupsOf(layout, Parallelism::kTensor);
  if (type == "pp") return core::groupsOf(layout, Parallelism::kPipeline);
  if (type == "dp") return core::groupsOf(layout, Parallelism::kData);
  if (type == "ep") return core::groupsOf(layout, Parallelism::kExpert);
  // expert data parallel: member i of a DP group (its dp index) sits at place i % ep of its
  // expert group, so the ranks with the same place hold the same experts
  std::vector<std::vector<int>> out;
  for (const std::vector<int>& group : core::groupsOf(layout, Parallelism::kData)) {
    for (int e = 0; e < layout.ep; ++e) {
      std::vector<int> members;
      for (std::size_t i = static_cast<std::size_t>(e); i < group.size(); i += static_cast<std::size_t>(layout.ep)) {
        members.push_back(group[i]);
      }
      out.push_back(std::move(members));
    }
  }
  return out;
}

std::string scopeFor(const std::vector<std::vector<int>>& groups, int ranksPerNode) {
  bool allInNode = true;
  bool allSpread = true;
  for (const std::vector<int>& group : groups) {
    std::set<int> nodes;
    for (const int r : group) nodes.insert(r / ranksPerNode);
    allInNode = allInNode && nodes.size() == 1;
    allSpread = allSpread && nodes.size() == group.size();
  }
  return allInNode ? "intra" : allSpread ? "inter" : "world";
}

}  // namespace fabricmap::orchestrator
