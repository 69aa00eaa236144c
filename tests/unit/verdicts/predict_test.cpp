// Training-step prediction: byte counts per traffic type against hand-computed values, the scope
// a layout's groups need, curve interpolation, the step arithmetic, unknowns with their reason and
// bad input.
#include "orchestrator/verdicts/predict.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "core/error.h"
#include "orchestrator/commands.h"
#include "orchestrator/verdicts/scope_model.h"

namespace fabricmap::orchestrator {
namespace {

using core::Op;

PredictConfig presetConfig(const std::string& name, const std::string& layout) {
  const auto preset = findPreset(name);
  EXPECT_TRUE(preset.has_value()) << name;
  PredictConfig c;
  c.model = preset->model;
  c.seq = preset->seq;
  c.globalBatch = preset->globalBatch;
  c.layout = core::parseLayout(layout);
  c.peakTflops = 989;
  validate(c);
  return c;
}

const Traffic& trafficNamed(const std::vector<Traffic>& all, const std::string& type) {
  for (const Traffic& t : all) {
    if (t.type == type) return t;
  }
  throw std::runtime_error("no traffic " + type);
}

core::CollectiveRecord row(const std::string& scope, Op op, int group, int nranks, std::uint64_t bytes, double busbw,
                           const std::string& dtype = "float", bool inPlace = false) {
  core::CollectiveRecord r;
  r.scope = scope;
  r.op = std::string(core::traits(op).name);
  r.group = group;
  r.nranks = nranks;
  r.bytes = bytes;
  r.busbwMedian = busbw;
  r.busbw = busbw;
  r.dtype = dtype;
  r.inPlace = inPlace;
  r.checked = true;
  return r;
}

// `ranks` ranks on nodes of `perNode`, every GPU named `gpu`.
results::ResultsFile fileWith(int ranks, int perNode, const std::string& gpu = "") {
  results::ResultsFile f;
  f.path = "test.h5";
  for (int r = 0; r < ranks; ++r) {
    core::RankRecord rec;
    rec.rank = r;
    rec.node = r / perNode;
    rec.localRank = r % perNode;
    rec.gpuName = gpu;
    f.topology.ranks.push_back(rec);
  }
  f.scopes = {{"world", 1, "", "active", ""},
              {"intra", ranks / perNode, "", "active", ""},
              {"inter", perNode, "", "active", ""}};
  return f;
}

TEST(PredictBytes, Llama7bTensorTwoDataFour) {
  const PredictConfig c = presetConfig("llama-7b", "tp=2,pp=1,dp=4");
  // micro-batches per step: global 1024 / (micro 1 x dp 4) = 256
  EXPECT_EQ(microBatchesPerStep(c), 256);
  const std::vector<Traffic> t = trafficOf(c);
  ASSERT_EQ(t.size(), 5u);
  // TP: b x s x h x 2 B = 1 x 4096 x 4096 x 2 = 33,554,432 B per all_reduce;
  //     4 per layer x 32 layers x 256 micro-batches = 32,768 per step
  const Traffic& tp = trafficNamed(t, "tp");
  EXPECT_EQ(tp.groupSize, 2);
  ASSERT_EQ(tp.legs.size(), 1u);
  EXPECT_EQ(tp.legs[0].op, Op::kAllReduce);
  EXPECT_EQ(tp.legs[0].bytes, 33'554'432u);
  EXPECT_EQ(tp.messages, 32'768u);
  EXPECT_FALSE(tp.overlappable);
  EXPECT_FALSE(trafficNamed(t, "pp").none.empty());  // pp=1
  // DP: 6,738,415,616 params / (tp 2 x pp 1) = 3,369,207,808 x 2 B = 6,738,415,616 B;
  //     / 25 MiB (26,214,400) = 257.05 -> 258 equal buckets of 6,738,415,616 / 258 = 26,117,889.98 -> 26,117,890 B
  const Traffic& dp = trafficNamed(t, "dp");
  EXPECT_EQ(dp.groupSize, 4);
  EXPECT_EQ(dp.messages, 258u);
  ASSERT_EQ(dp.legs.size(), 1u);
  EXPECT_EQ(dp.legs[0].op, Op::kAllReduce);
  EXPECT_EQ(dp.legs[0].bytes, 26'117'890u);
  EXPECT_TRUE(dp.overlappable);
  EXPECT_FALSE(trafficNamed(t, "ep").none.empty());   // dense
  EXPECT_FALSE(trafficNamed(t, "edp").none.empty());  // dense
}

TEST(PredictBytes, Llama70bTensorEightPipelineFourDataTwo) {
  PredictConfig c = presetConfig("llama-70b", "tp=8,pp=4,dp=2");
  // micro-batches: 1024 / (1 x 2) = 512; layers per stage: 80 / 4 = 20
  const std::vector<Traffic> t = trafficOf(c);
  // TP: 1 x 4096 x 8192 x 2 = 67,108,864 B; 4 x 20 x 512 = 40,960 per step
  EXPECT_EQ(trafficNamed(t, "tp").legs[0].bytes, 67'108'864u);
  EXPECT_EQ(trafficNamed(t, "tp").messages, 40'960u);
  // PP: the same activation, forward and backward per micro-batch: 2 x 512 = 1,024
  const Traffic& pp = trafficNamed(t, "pp");
  EXPECT_EQ(pp.groupSize, 4);
  EXPECT_EQ(pp.legs[0].op, Op::kSendRecv);
  EXPECT_EQ(pp.legs[0].bytes, 67'108'864u);
  EXPECT_EQ(pp.messages, 1'024u);
  // DP: 68,976,648,192 / 32 = 2,155,520,256 params x 2 B = 4,311,040,512 B; / 26,214,400 = 164.45
  //     -> 165 buckets of 26,127,518.25 -> 26,127,518 B
  EXPECT_EQ(trafficNamed(t, "dp").messages, 165u);
  EXPECT_EQ(trafficNamed(t, "dp").legs[0].bytes, 26'127'518u);

  // sequence parallel: TP as all_gather + reduce_scatter pairs of the same size and count; a
  // pipeline boundary carries 1/tp of the sequence per rank: 67,108,864 / 8 = 8,388,608 B
  c.sequenceParallel = true;
  const std::vector<Traffic> sp = trafficOf(c);
  const Traffic& tp = trafficNamed(sp, "tp");
  ASSERT_EQ(tp.legs.size(), 2u);
  EXPECT_EQ(tp.legs[0].op, Op::kAllGather);
  EXPECT_EQ(tp.legs[1].op, Op::kReduceScatter);
  EXPECT_EQ(tp.legs[0].bytes, 67'108'864u);
  EXPECT_EQ(tp.legs[1].bytes, 67'108'864u);
  EXPECT_EQ(tp.messages, 40'960u);
  EXPECT_EQ(trafficNamed(sp, "pp").legs[0].bytes, 8'388'608u);

  // ZeRO with fp32 gradients: 2,155,520,256 x 4 B = 8,622,081,024 B / 26,214,400 = 328.9 -> 329
  //   buckets of 26,206,933.20 -> 26,206,933 B reduce-scattered; parameters (bf16) all-gathered
  //   at half that: 13,103,466.5 -> 13,103,467 B
  c.dpMode = DpMode::kZero;
  c.gradDtype = "fp32";
  const Traffic dp = trafficNamed(trafficOf(c), "dp");
  EXPECT_EQ(dp.messages, 329u);
  ASSERT_EQ(dp.legs.size(), 2u);
  EXPECT_EQ(dp.legs[0].op, Op::kReduceScatter);
  EXPECT_EQ(dp.legs[0].bytes, 26'206'933u);
  EXPECT_EQ(dp.legs[1].op, Op::kAllGather);
  EXPECT_EQ(dp.legs[1].bytes, 13'103'467u);
}

TEST(PredictBytes, MixtralExpertParallel) {
  PredictConfig c = presetConfig("mixtral-8x7b", "tp=2,pp=1,dp=8,ep=4");
  c.sequenceParallel = true;
  validate(c);
  // experts: 32 layers x 8 experts x 3 x 4096 x 14336 = 45,097,156,608; dense: 46,702,792,704 - that
  //   = 1,605,636,096; active: dense + 2/8 of the experts = 12,879,925,248 (Mistral's 12.9B)
  EXPECT_DOUBLE_EQ(c.model.expertParams(), 45'097'156'608.0);
  EXPECT_DOUBLE_EQ(c.model.activeParams(), 12'879'925'248.0);
  // micro-batches: 1024 / (1 x 8) = 128
  const std::vector<Traffic> t = trafficOf(c);
  EXPECT_EQ(trafficNamed(t, "tp").messages, 4u * 32 * 128);
  // DP (dense part): 1,605,636,096 / 2 x 2 B = 1,605,636,096 B / 26,214,400 = 61.25 -> 62 buckets of
  //   25,897,356.39 -> 25,897,356 B, over all 8 DP ranks
  const Traffic& dp = trafficNamed(t, "dp");
  EXPECT_EQ(dp.groupSize, 8);
  EXPECT_EQ(dp.messages, 62u);
  EXPECT_EQ(dp.legs[0].bytes, 25'897'356u);
  // expert DP: 45,097,156,608 / (tp 2 x pp 1 x ep 4) = 5,637,144,576 x 2 B = 11,274,289,152 B;
  //   / 26,214,400 = 430.08 -> 431 buckets of 26,158,443.51 -> 26,158,444 B, over dp/ep = 2 ranks
  const Traffic& edp = trafficNamed(t, "edp");
  EXPECT_EQ(edp.groupSize, 2);
  EXPECT_EQ(edp.messages, 431u);
  EXPECT_EQ(edp.legs[0].bytes, 26'158'444u);
  // EP: tokens per rank 1 x 4096 / tp 2 (sequence parallel) = 2048; x 4096 x 2 B x top-2 =
  //   33,554,432 B per alltoall; dispatch + combine, forward + backward: 4 x 32 x 128 = 16,384
  const Traffic& ep = trafficNamed(t, "ep");
  EXPECT_EQ(ep.groupSize, 4);
  EXPECT_EQ(ep.legs[0].op, Op::kAllToAll);
  EXPECT_EQ(ep.legs[0].bytes, 33'554'432u);
  EXPECT_EQ(ep.messages, 16'384u);
  // expert DP groups: the DP group {0,2,4,...,14} split by place in its expert groups of 4
  const auto groups = groupsFor(c.layout, "edp");
  EXPECT_EQ(groups.size(), 8u);
  EXPECT_EQ(groups[0], (std::vector<int>{0, 8}));
  EXPECT_EQ(groups[1], (std::vector<int>{2, 10}));
  EXPECT_EQ(groupsFor(c.layout, "ep")[0], (std::vector<int>{0, 2, 4, 6}));
}

TEST(PredictScope, GroupsPlacedOnNodes) {
  // 8 GPUs per node: TP of 8 fills a node; DP of tp=8 jumps a node per rank; DP of tp=2 has four
  // ranks on each of two nodes
  const core::Layout a = core::parseLayout("tp=8,pp=4,dp=2");
  EXPECT_EQ(scopeFor(groupsFor(a, "tp"), 8), "intra");
  EXPECT_EQ(scopeFor(groupsFor(a, "pp"), 8), "inter");
  EXPECT_EQ(scopeFor(groupsFor(a, "dp"), 8), "inter");
  const core::Layout b = core::parseLayout("tp=2,dp=8");
  EXPECT_EQ(scopeFor(groupsFor(b, "tp"), 8), "intra");
  EXPECT_EQ(scopeFor(groupsFor(b, "dp"), 8), "world");
  // one node holds the whole job: everything intra
  EXPECT_EQ(scopeFor(groupsFor(core::parseLayout("tp=2,dp=4"), "dp"), 8), "intra");
  // a TP group straddling two nodes (tp=4 on 2-GPU nodes) is neither
  EXPECT_EQ(scopeFor(groupsFor(core::parseLayout("tp=4,dp=2"), "tp"), 2), "world");
}

TEST(PredictCurve, MedianOverGroupsOfTheRightRows) {
  std::vector<core::CollectiveRecord> rows = {
      row("intra", Op::kAllReduce, 0, 2, 1024, 10),
      row("intra", Op::kAllReduce, 1, 2, 1024, 30),
      row("intra", Op::kAllReduce, 2, 2, 1024, 20),
      row("intra", Op::kAllReduce, 0, 2, 4096, 40),
      row("intra", Op::kAllReduce, 0, 2, 1024, 99, "float", true),  // in-place: out-of-place preferred
      row("inter", Op::kAllReduce, 0, 2, 1024, 77),                 // another scope
      row("intra", Op::kAllGather, 0, 2, 1024, 66),                 // another op
  };
  core::CollectiveRecord wrong = row("intra", Op::kAllReduce, 3, 2, 4096, 1000);
  wrong.wrong = 5;  // wrong results are never a bandwidth
  rows.push_back(wrong);
  const auto curve = curveOf(rows, "intra", Op::kAllReduce, "bfloat16");
  ASSERT_TRUE(curve);
  EXPECT_EQ(curve->sizes, (std::vector<std::uint64_t>{1024, 4096}));
  EXPECT_EQ(curve->busbw, (std::vector<double>{20, 40}));
  EXPECT_EQ(curve->groups, 3);
  EXPECT_EQ(curve->dtype, "float");  // bfloat16 not measured: the type measured
  EXPECT_FALSE(curve->inPlace);
  // the training type wins where it was measured
  rows.push_back(row("intra", Op::kAllReduce, 0, 2, 2048, 5, "bfloat16"));
  EXPECT_EQ(curveOf(rows, "intra", Op::kAllReduce, "bfloat16")->sizes, (std::vector<std::uint64_t>{2048}));
  EXPECT_FALSE(curveOf(rows, "world", Op::kAllReduce, "float"));
}

TEST(PredictCurve, LogLogInterpolationAndClampWithinTwice) {
  Curve c;
  c.scope = "intra";
  c.sizes = {1u << 20, 4u << 20, 16u << 20};
  c.busbw = {10, 40, 80};
  // 2 MiB is halfway between 1 and 4 MiB in log size: 10 x (40/10)^0.5 = 20
  EXPECT_NEAR(*busbwAt(c, 2u << 20).busbw, 20.0, 1e-9);
  // 8 MiB: 40 x (80/40)^0.5 = 56.57
  EXPECT_NEAR(*busbwAt(c, 8u << 20).busbw, 40.0 * std::sqrt(2.0), 1e-9);
  EXPECT_EQ(busbwAt(c, 8u << 20).how, "interpolated (log-log) at 8 MiB between 4 MiB and 16 MiB");
  EXPECT_EQ(*busbwAt(c, 4u << 20).busbw, 40.0);
  EXPECT_EQ(busbwAt(c, 4u << 20).how, "measured at 4 MiB");
  // within 2x of an end: that end's figure, said so
  EXPECT_EQ(*busbwAt(c, 512u << 10).busbw, 10.0);
  EXPECT_NE(busbwAt(c, 512u << 10).how.find("clamped to the smallest measured size 1 MiB"), std::string::npos);
  EXPECT_EQ(*busbwAt(c, 32u << 20).busbw, 80.0);
  EXPECT_NE(busbwAt(c, 32u << 20).how.find("clamped to the largest measured size 16 MiB"), std::string::npos);
  // further out: no figure, and why
  const CurvePoint far = busbwAt(c, (32u << 20) + 1);
  EXPECT_FALSE(far.busbw);
  EXPECT_NE(far.reason.find("beyond the largest measured size 16 MiB by more than 2x"), std::string::npos);
  EXPECT_FALSE(busbwAt(c, (512u << 10) - 1).busbw);
}

// A custom model small enough to price by hand: 1e9 parameters, 2 layers, hidden 1024, sequence
// 1024, global batch 8, tp=2 x dp=2 on nodes of 2 GPUs, 100 TFLOP/s at MFU 0.5.
PredictConfig smallConfig() {
  PredictConfig c;
  c.model.name = "custom";
  c.model.params = 1e9;
  c.model.layers = 2;
  c.model.hidden = 1024;
  c.seq = 1024;
  c.globalBatch = 8;
  c.layout = core::parseLayout("tp=2,dp=2");
  c.peakTflops = 100;
  c.mfu = 0.5;
  c.overlap = 0.5;
  c.tokens = 1e9;
  c.pricePerGpuHour = 2;
  validate(c);
  return c;
}

results::ResultsFile smallFile() {
  results::ResultsFile f = fileWith(4, 2);
  f.collectives = {row("intra", Op::kAllReduce, 0, 2, 2u << 20, 10), row("intra", Op::kAllReduce, 1, 2, 2u << 20, 10),
                   row("inter", Op::kAllReduce, 0, 2, 16u << 20, 5), row("inter", Op::kAllReduce, 0, 2, 64u << 20, 5)};
  return f;
}

TEST(PredictArithmetic, StepUtilizationAndCost) {
  const PredictConfig c = smallConfig();
  const Prediction p = predict(c, smallFile());
  ASSERT_EQ(p.traffic.size(), 5u);
  // TP (intra, groups {0,1} {2,3}): 1 x 1024 x 1024 x 2 B = 2 MiB; 4 x 2 layers x 4 micro-batches
  //   = 32 messages; all_reduce bus factor on 2 ranks 2(n-1)/n = 1; at 10 GB/s:
  //   32 x 2,097,152 / 10e9 = 0.0067108864 s
  const TrafficResult& tp = p.traffic[0];
  EXPECT_EQ(tp.status, "ok");
  EXPECT_EQ(tp.scope, "intra");
  EXPECT_NEAR(*tp.seconds, 0.0067108864, 1e-12);
  EXPECT_NE(
      tp.legs[0].source.find(
          "intra all_reduce (float), 1 size 2 MiB..2 MiB, median of 2 groups of 2 ranks, measured at 2 MiB; test.h5"),
      std::string::npos)
      << tp.legs[0].source;
  // DP (inter, groups {0,2} {1,3}): 1e9 / 2 x 2 B = 1e9 B in ceil(1e9 / 26,214,400) = 39 buckets
  //   of 25,641,026 B at 5 GB/s (flat between 16 and 64 MiB): 39 x 25,641,026 / 5e9 = 0.2000000028 s
  const TrafficResult& dp = p.traffic[2];
  EXPECT_EQ(dp.scope, "inter");
  EXPECT_EQ(dp.traffic.messages, 39u);
  EXPECT_NEAR(*dp.seconds, 0.2000000028, 1e-12);
  EXPECT_NEAR(*dp.exposedSeconds, 0.1000000014, 1e-12);  // overlap 0.5
  // compute: 6 x 1e9 x 8,192 tokens / (4 GPUs x 100e12 x 0.5) = 0.24576 s
  EXPECT_NEAR(p.computeSeconds, 0.24576, 1e-12);
  const double step = 0.24576 + 0.0067108864 + 0.1000000014;
  EXPECT_NEAR(*p.commSeconds, 0.0067108864 + 0.2000000028, 1e-12);
  EXPECT_NEAR(*p.stepSeconds, step, 1e-12);
  EXPECT_NEAR(*p.utilization, 0.24576 / step, 1e-12);
  EXPECT_NEAR(*p.tokensPerSecond, 8192 / step, 1e-6);
  // 1e9 tokens = 122,070.3125 steps
  EXPECT_DOUBLE_EQ(p.steps, 1e9 / 8192);
  EXPECT_NEAR(*p.days, 1e9 / 8192 * step / 86400, 1e-9);
  EXPECT_NEAR(*p.gpuHours, 1e9 / 8192 * step * 4 / 3600, 1e-6);
  EXPECT_NEAR(*p.cost, 2 * *p.gpuHours, 1e-6);
  EXPECT_TRUE(p.unknownReason.empty());

  const auto j = predictionsToJson(c, {p});
  EXPECT_EQ(j["config"]["layout"]["tp"], 2);
  EXPECT_EQ(j["predictions"][0]["traffic"][0]["type"], "tp");
  EXPECT_EQ(j["predictions"][0]["traffic"][0]["legs"][0]["bytes_per_message"], 2u << 20);
  EXPECT_EQ(j["predictions"][0]["traffic"][1]["status"], "none");
  EXPECT_TRUE(j["predictions"][0]["traffic"][1]["seconds"].is_null());
  EXPECT_DOUBLE_EQ(j["predictions"][0]["step_seconds"].get<double>(), *p.stepSeconds);
}

// pp=2 (groups {0,1} {2,3}, inside the nodes), dp=2 across them: the 1F1B bubble joins the step;
// interleaving v chunks per stage cuts it v times and sends v times the PP messages.
TEST(PredictArithmetic, PipelineBubbleAndInterleaving) {
  PredictConfig c = smallConfig();
  c.layout = core::parseLayout("pp=2,dp=2");
  validate(c);
  results::ResultsFile f = smallFile();
  f.collectives.push_back(row("intra", Op::kSendRecv, 0, 2, 2u << 20, 10));
  Prediction p = predict(c, f);
  // compute 0.24576 s (as above); micro-batches 8 / (1 x 2) = 4; bubble 0.24576 x (2 - 1) / 4
  EXPECT_NEAR(p.computeSeconds, 0.24576, 1e-12);
  EXPECT_NEAR(p.bubbleSeconds, 0.06144, 1e-12);
  // PP: 2 x 4 messages of 1 x 1024 x 1024 x 2 B at 10 GB/s = 8 x 2,097,152 / 10e9
  const TrafficResult& pp = p.traffic[1];
  ASSERT_EQ(pp.status, "ok") << pp.reason;
  EXPECT_EQ(pp.traffic.messages, 8u);
  EXPECT_NEAR(*pp.seconds, 0.0016777216, 1e-12);
  // DP: 1e9 / 2 stages x 2 B in 39 buckets at 5 GB/s = 0.2000000028 s, half of it hidden
  ASSERT_TRUE(p.stepSeconds) << p.unknownReason;
  EXPECT_NEAR(*p.stepSeconds, 0.24576 + 0.06144 + 0.0016777216 + 0.1000000014, 1e-12);
  EXPECT_NEAR(*p.utilization, 0.24576 / *p.stepSeconds, 1e-12);
  const auto j = predictionsToJson(c, {p});
  EXPECT_DOUBLE_EQ(j["predictions"][0]["bubble_seconds"].get<double>(), p.bubbleSeconds);
  EXPECT_EQ(j["config"]["virtual_stages"], 1);

  c.model.layers = 4;  // 2 stages x 2 chunks
  c.virtualStages = 2;
  validate(c);
  p = predict(c, f);
  EXPECT_NEAR(p.bubbleSeconds, 0.24576 / 8, 1e-12);
  EXPECT_EQ(p.traffic[1].traffic.messages, 16u);
  EXPECT_NEAR(*p.traffic[1].seconds, 2 * 0.0016777216, 1e-12);

  // no pipeline, no bubble
  EXPECT_EQ(predict(smallConfig(), smallFile()).bubbleSeconds, 0.0);
}

TEST(PredictArithmetic, ConcurrentInterferenceMultipliesAndSaysSo) {
  results::ResultsFile f = smallFile();
  core::TrainingRecord isolated;
  isolated.mode = "isolated";
  isolated.traffic = "tp";
  core::TrainingRecord concurrent;
  concurrent.mode = "concurrent";
  concurrent.traffic = "tp";
  concurrent.interference = 1.5;
  f.training = {isolated, concurrent};
  f.layout = "tp=2,pp=1,dp=2,ep=1";
  const Prediction p = predict(smallConfig(), f);
  EXPECT_EQ(*p.traffic[0].interference, 1.5);
  EXPECT_NEAR(*p.traffic[0].seconds, 1.5 * 0.0067108864, 1e-12);
  EXPECT_NE(p.traffic[0].interferenceSource.find("x1.5: concurrent tp traffic of /patterns/training with layout tp=2"),
            std::string::npos);
  EXPECT_FALSE(p.traffic[2].interference);  // no dp rows
}

TEST(PredictUnknown, MissingScopeOrSizeIsUnknownWithTheReason) {
  results::ResultsFile f = smallFile();
  f.scopes[2] = {"inter", 0, "", "waived", "one node: no inter-node scope"};
  f.collectives.resize(2);  // intra only
  const Prediction p = predict(smallConfig(), f);
  EXPECT_EQ(p.traffic[0].status, "ok");
  EXPECT_EQ(p.traffic[2].status, "unknown");
  EXPECT_NE(p.traffic[2].reason.find("inter all_reduce not measured in test.h5 (scope inter waived: one node"),
            std::string::npos)
      << p.traffic[2].reason;
  EXPECT_FALSE(p.stepSeconds);
  EXPECT_FALSE(p.days);
  EXPECT_FALSE(p.cost);
  EXPECT_NE(p.unknownReason.find("step time unknown: dp: inter all_reduce not measured"), std::string::npos);
  EXPECT_NEAR(p.computeSeconds, 0.24576, 1e-12);  // compute needs no measurement

  // a message far beyond the measured sizes: hidden 4096 makes TP messages 8 MiB, 4x the 2 MiB measured
  PredictConfig big = smallConfig();
  big.model.hidden = 4096;
  const Prediction q = predict(big, smallFile());
  EXPECT_EQ(q.traffic[0].status, "unknown");
  EXPECT_NE(q.traffic[0].reason.find("message 8 MiB is beyond the largest measured size 2 MiB by more than 2x"),
            std::string::npos)
      << q.traffic[0].reason;
  EXPECT_EQ(q.traffic[2].status, "ok");

  // nothing predictable at all: exit 2, with every reason
  try {
    predict(big, f);
    FAIL() << "expected UsageError";
  } catch (const core::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("nothing of this layout's traffic can be predicted"), std::string::npos);
  }
  // a single GPU needs no measurement at all
  PredictConfig one = smallConfig();
  one.layout = core::parseLayout("tp=1");
  one.globalBatch = 8;
  EXPECT_TRUE(predict(one, f).stepSeconds);
}

// A provider's nccl-tests log of one 8-GPU server, imported: world all_reduce rows only, GPU memory
// from the GPU names (40 GiB), no NVML inventory.
results::ResultsFile oneNodeLog() {
  results::ResultsFile f = fileWith(8, 8, "NVIDIA A100-SXM4-40GB");
  f.scopes = {{"world", 1, "", "active", ""}};
  for (core::RankRecord& r : f.topology.ranks) r.gpuMemoryBytes = std::uint64_t{40} << 30;
  f.imported.emplace_back();
  for (std::uint64_t bytes = 1 << 20; bytes <= (std::uint64_t{1} << 30); bytes *= 2) {
    f.collectives.push_back(row("world", Op::kAllReduce, 0, 8, bytes, 150));
  }
  return f;
}

PredictConfig llamaOnOneNode(const std::string& layout) {
  PredictConfig c = presetConfig("llama-7b", layout);
  c.globalBatch = 64;
  validate(c);
  return c;
}

// One node's world rows are its inside: tensor parallelism inside it is priced on them, groups that
// span nodes are not (they would cross a network the file never measured). The same rows on two
// nodes are a network's, and price a group across them.
TEST(PredictOneNode, WorldAnswersInsideTheNodeNeverAcrossNodes) {
  const results::ResultsFile f = oneNodeLog();
  const Prediction inside = predict(llamaOnOneNode("tp=8"), f);
  ASSERT_EQ(inside.traffic[0].status, "ok") << inside.traffic[0].reason;
  EXPECT_EQ(inside.traffic[0].scope, "intra");
  EXPECT_NE(inside.traffic[0].legs[0].source.find(kIntraFromWorld), std::string::npos)
      << inside.traffic[0].legs[0].source;
  const Prediction across = predict(llamaOnOneNode("tp=8,dp=2"), f);
  EXPECT_EQ(across.traffic[2].status, "unknown");
  EXPECT_NE(across.traffic[2].reason.find("its groups span nodes, and test.h5 measured one node"), std::string::npos)
      << across.traffic[2].reason;
  EXPECT_FALSE(across.stepSeconds);
  // sendrecv of the inside: named as the node's world, which measured all_reduce only
  const Prediction piped = predict(llamaOnOneNode("tp=4,pp=2"), f);
  EXPECT_NE(piped.traffic[1].reason.find("intra sendrecv not measured in test.h5 (one node: its world scope is the "
                                         "node's inside; it measured: all_reduce)"),
            std::string::npos)
      << piped.traffic[1].reason;

  results::ResultsFile two = f;
  for (core::RankRecord& r : two.topology.ranks) r.node = r.rank / 4;
  const Prediction network = predict(llamaOnOneNode("dp=8"), two);
  EXPECT_EQ(network.traffic[2].status, "ok") << network.traffic[2].reason;
  EXPECT_EQ(network.traffic[2].scope, "world");
  EXPECT_EQ(predict(llamaOnOneNode("dp=8"), f).traffic[2].scope, "intra");
}

// The layout's memory is checked against the GPU's whenever the GPU's is known: a layout that does
// not fit is predicted all the same (its communication is worth reading) and flagged, in words and
// in JSON; without a known GPU memory it is said to be unchecked.
TEST(PredictMemory, ALayoutThatDoesNotFitIsFlagged) {
  const results::ResultsFile f = oneNodeLog();
  const PredictConfig pure = presetConfig("gpt3-175b", "dp=8");
  const Prediction p = predict(pure, f);
  ASSERT_TRUE(p.stepSeconds) << p.unknownReason;
  ASSERT_TRUE(p.gpuMemoryBytes);
  EXPECT_EQ(*p.gpuMemoryBytes, 40.0 * (1 << 30));
  EXPECT_EQ(p.fitsMemory(), false);
  EXPECT_GT(p.memory.total(), 175e9 * 18);  // every parameter's states on each GPU
  EXPECT_EQ(p.doesNotFit().rfind("DOES NOT FIT: needs ", 0), 0u) << p.doesNotFit();
  EXPECT_NE(p.doesNotFit().find(" GiB per GPU of 40.0 GiB (the smallest of 8 rank(s)' GPUs, from the imported log's "
                                "GPU name"),
            std::string::npos)
      << p.doesNotFit();
  auto j = predictionsToJson(pure, {p})["predictions"][0];
  EXPECT_EQ(j["fits_memory"], false);
  EXPECT_EQ(j["does_not_fit"], p.doesNotFit());
  EXPECT_DOUBLE_EQ(j["memory_bytes"]["total"].get<double>(), p.memory.total());
  EXPECT_TRUE(j["days"].is_number());  // kept, flagged by fits_memory

  PredictConfig small = llamaOnOneNode("tp=8");
  const Prediction fits = predict(small, f);
  EXPECT_EQ(fits.fitsMemory(), true);
  EXPECT_EQ(fits.doesNotFit(), "");
  EXPECT_EQ(predictionsToJson(small, {fits})["predictions"][0]["fits_memory"], true);
  small.gpuMemoryBytes = 16.0 * (1 << 30);  // --gpu-memory over the file's
  const Prediction declared = predict(small, f);
  EXPECT_EQ(declared.fitsMemory(), false);
  EXPECT_EQ(declared.gpuMemorySource, "--gpu-memory");

  // a host-memory run records no GPU memory: computed, not checked
  const Prediction host = predict(smallConfig(), smallFile());
  EXPECT_GT(host.memory.total(), 0);
  EXPECT_FALSE(host.fitsMemory());
  EXPECT_EQ(host.doesNotFit(), "");
  EXPECT_TRUE(predictionsToJson(smallConfig(), {host})["predictions"][0]["fits_memory"].is_null());
}

// Recomputation trades compute for memory; the step MFU counts model FLOPs only, so recomputed
// ones lower it, while the compute share (the old "GPU utilization") counts them as busy time.
TEST(PredictRecompute, FullRecomputationCostsComputeSavesActivationsAndIsNoModelFlops) {
  const results::ResultsFile f = oneNodeLog();
  PredictConfig c = llamaOnOneNode("tp=8");
  const Prediction kept = predict(c, f);
  EXPECT_NEAR(*kept.stepMfu, *kept.utilization * 0.4, 1e-12);
  c.recompute = Recompute::kFull;
  const Prediction full = predict(c, f);
  EXPECT_NEAR(full.computeSeconds, kept.computeSeconds * 4 / 3, 1e-9);
  // only each layer's input kept, 2 B x s x h per layer, 32 layers, one micro-batch in flight
  EXPECT_NEAR(full.memory.activations, 2.0 * 4096 * 4096 * 32, 1);
  EXPECT_LT(full.memory.total(), kept.memory.total());
  EXPECT_NEAR(*full.stepMfu, *full.utilization * 0.4 * 3 / 4, 1e-12);
  const auto j = predictionsToJson(c, {full});
  EXPECT_EQ(j["config"]["recompute"], "full");
  const auto& pj = j["predictions"][0];
  EXPECT_DOUBLE_EQ(pj["compute_share"].get<double>(), *full.utilization);
  EXPECT_DOUBLE_EQ(pj["gpu_utilization"].get<double>(), *full.utilization);
  EXPECT_DOUBLE_EQ(pj["step_mfu"].get<double>(), *full.stepMfu);
}

// A file without all_gather and reduce_scatter says what a sequence-parallel or ZeRO figure needs,
// and a pipeline without sendrecv what it needs; a file that has them says nothing of them.
TEST(PredictNotes, WhatTheFileLacksAndHowToMeasureIt) {
  results::ResultsFile f = oneNodeLog();
  const auto noted = [](const Prediction& p, const std::string& text) {
    return std::any_of(p.notes.begin(), p.notes.end(), [&](const std::string& n) { return n.find(text) != n.npos; });
  };
  const Prediction plain = predict(llamaOnOneNode("tp=8"), f);
  EXPECT_TRUE(noted(plain, "sequence parallelism and ZeRO (any stage, Megatron-LM's distributed optimizer) need "
                           "all_gather and reduce_scatter curves, which test.h5 did not measure: run with --ops "
                           "all_gather,reduce_scatter or import those nccl-tests logs"));
  EXPECT_FALSE(noted(plain, "sendrecv"));
  EXPECT_TRUE(noted(predict(llamaOnOneNode("tp=4,pp=2"), f), "pipeline parallelism needs sendrecv curves"));
  for (Op op : {Op::kAllGather, Op::kReduceScatter}) {
    f.collectives.push_back(row("world", op, 0, 8, 1 << 20, 100));
  }
  EXPECT_FALSE(noted(predict(llamaOnOneNode("tp=8"), f), "all_gather"));
  EXPECT_EQ(unmeasuredNeed(PricedOn::kAllToAll, {Op::kAllToAll}, "x.h5"), "");
  EXPECT_NE(unmeasuredNeed(PricedOn::kGatherScatter, {Op::kAllGather}, "x.h5").find("--ops all_gather,reduce_scatter"),
            std::string::npos);
  EXPECT_EQ(measuredOps(f), (std::set<Op>{Op::kAllReduce, Op::kAllGather, Op::kReduceScatter}));
}

// What predict refuses (nothing of the layout's traffic measured) predictStep returns with reasons.
TEST(PredictUnknown, PredictStepKeepsWhatPredictRefuses) {
  const results::ResultsFile f = oneNodeLog();
  const PredictConfig piped = llamaOnOneNode("pp=2,dp=4");  // sendrecv and dp across... inside one node
  const PredictConfig across = llamaOnOneNode("pp=8,dp=2");  // 16 GPUs: pp inside, dp across nodes
  EXPECT_THROW(predict(across, f), core::UsageError);
  const Prediction p = predictStep(across, f);
  EXPECT_FALSE(p.stepSeconds);
  EXPECT_EQ(p.traffic[1].status, "unknown");
  EXPECT_EQ(p.traffic[2].status, "unknown");
  EXPECT_NE(p.unknownReason.find("pp: intra sendrecv not measured"), std::string::npos) << p.unknownReason;
  EXPECT_EQ(predict(piped, f).traffic[2].status, "ok");
}

TEST(PredictPeak, FromTheRecordedGpuOrGiven) {
  EXPECT_EQ(peakTflopsOf("NVIDIA H100 80GB HBM3")->tflops, 989);
  EXPECT_EQ(peakTflopsOf("NVIDIA H100 80GB HBM3")->model, "H100 SXM");
  EXPECT_EQ(peakTflopsOf("NVIDIA A100-SXM4-80GB")->tflops, 312);
  EXPECT_EQ(peakTflopsOf("NVIDIA H200")->tflops, 989);
  EXPECT_EQ(peakTflopsOf("NVIDIA B200")->tflops, 2250);
  EXPECT_FALSE(peakTflopsOf("NVIDIA GeForce RTX 4090"));  // no datacenter figure in the table
  EXPECT_FALSE(peakTflopsOf(""));

  PredictConfig c = smallConfig();
  c.peakTflops.reset();
  results::ResultsFile h100 = smallFile();
  for (core::RankRecord& r : h100.topology.ranks) r.gpuName = "NVIDIA H100 80GB HBM3";
  const Prediction p = predict(c, h100);
  EXPECT_EQ(p.peakTflops, 989);
  EXPECT_EQ(p.gpu, "H100 SXM");
  // host-memory run, or a GPU without a figure, and no --peak-tflops: exit 2 with the way out
  for (const std::string gpu : {"", "NVIDIA Mystery 9000"}) {
    results::ResultsFile f = smallFile();
    for (core::RankRecord& r : f.topology.ranks) r.gpuName = gpu;
    try {
      predict(c, f);
      FAIL() << "expected UsageError for '" << gpu << "'";
    } catch (const core::UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("--peak-tflops"), std::string::npos) << e.what();
    }
  }
}

TEST(PredictBadInput, ValidateNamesTheProblem) {
  const auto problem = [](auto edit) {
    PredictConfig c = smallConfig();
    edit(c);
    try {
      validate(c);
    } catch (const core::UsageError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(problem([](PredictConfig& c) {
              c.globalBatch = 7;
            }).find("global batch 7 is not a multiple of micro-batch x dp = 1 x 2"),
            std::string::npos);
  EXPECT_NE(
      problem([](PredictConfig& c) { c.layout = core::parseLayout("dp=2,ep=4"); }).find("ep=4 does not divide dp=2"),
      std::string::npos);
  EXPECT_NE(problem([](PredictConfig& c) { c.layout = core::parseLayout("dp=2,ep=2"); }).find("needs an MoE model"),
            std::string::npos);
  EXPECT_NE(problem([](PredictConfig& c) {
              c.layout = core::parseLayout("pp=3");
              c.globalBatch = 3;
            }).find("pp=3 does not divide the 2 layers"),
            std::string::npos);
  EXPECT_NE(problem([](PredictConfig& c) { c.model.heads = 3; }).find("tp=2 does not divide the 3 attention heads"),
            std::string::npos);
  EXPECT_NE(problem([](PredictConfig& c) { c.model.params = 0; }), "");
  EXPECT_NE(problem([](PredictConfig& c) { c.model.params = -5; }), "");
  EXPECT_NE(problem([](PredictConfig& c) { c.model.hidden = 0; }), "");
  EXPECT_NE(problem([](PredictConfig& c) { c.seq = 0; }), "");
  EXPECT_NE(problem([](PredictConfig& c) { c.microBatch = -1; }), "");
  EXPECT_NE(problem([](PredictConfig& c) { c.layout.tp = 0; }), "");
  EXPECT_NE(problem([](PredictConfig& c) { c.bucketBytes = 0; }), "");
  EXPECT_NE(problem([](PredictConfig& c) { c.mfu = 0; }), "");
  EXPECT_NE(problem([](PredictConfig& c) { c.mfu = 1.5; }), "");
  EXPECT_NE(problem([](PredictConfig& c) { c.overlap = -0.1; }), "");
  EXPECT_NE(problem([](PredictConfig& c) { c.peakTflops = 0; }), "");
  EXPECT_NE(problem([](PredictConfig& c) { c.tokens = 0; }), "");
  EXPECT_NE(problem([](PredictConfig& c) { c.pricePerGpuHour = -1; }), "");
  EXPECT_NE(problem([](PredictConfig& c) { c.dtype = "int8"; }).find("unknown training dtype 'int8'"),
            std::string::npos);
  EXPECT_NE(problem([](PredictConfig& c) {
              c.sequenceParallel = true;
              c.seq = 1023;
            }).find("sequence"),
            std::string::npos);
  EXPECT_NE(problem([](PredictConfig& c) {
              c.model.experts = 8;
              c.model.topK = 2;
            }).find("needs --ffn"),
            std::string::npos);
  EXPECT_NE(problem([](PredictConfig& c) { c.virtualStages = 2; }).find("needs pp > 1"), std::string::npos);
  EXPECT_NE(problem([](PredictConfig& c) {
              c.layout = core::parseLayout("pp=2,dp=2");
              c.virtualStages = 2;
            }).find("pp x virtual stages = 2 x 2 does not divide the 2 layers"),
            std::string::npos);
  EXPECT_NE(problem([](PredictConfig& c) {
              c.layout = core::parseLayout("pp=2,dp=2");
              c.model.layers = 4;
              c.virtualStages = 2;
              c.globalBatch = 6;
            }).find("groups of pp=2: 3 micro-batches"),
            std::string::npos);
  EXPECT_NE(problem([](PredictConfig& c) { c.virtualStages = 0; }), "");
  EXPECT_NE(problem([](PredictConfig& c) { c.reserveBytes = -1; }), "");
  EXPECT_NE(problem([](PredictConfig& c) { c.gpuMemoryBytes = 0; }), "");
  EXPECT_NE(problem([](PredictConfig& c) {
              c.modelStates = ModelStates{Framework::kMegatron, 1};
            }).find("ZeRO stage 1 exchanges gradients as dp-mode zero, not allreduce"),
            std::string::npos);
  EXPECT_EQ(problem([](PredictConfig& c) {
              c.modelStates = ModelStates{Framework::kDeepSpeed, 2};
              c.dpMode = DpMode::kZero;
            }),
            "");
  EXPECT_EQ(problem([](PredictConfig&) {}), "");

  EXPECT_DOUBLE_EQ(parseCount("1T", "--tokens"), 1e12);
  EXPECT_DOUBLE_EQ(parseCount("300B", "--tokens"), 3e11);
  EXPECT_DOUBLE_EQ(parseCount("1.5e12", "--tokens"), 1.5e12);
  EXPECT_DOUBLE_EQ(parseCount("7b", "--params"), 7e9);
  for (const char* bad : {"", "T", "-1T", "0", "1X", "abc", "1TT", "nan", "inf"}) {
    EXPECT_THROW(parseCount(bad, "--tokens"), core::UsageError) << bad;
  }
}

TEST(PredictBadInput, CommandRefusesBeforeReading) {
  const auto message = [](std::vector<std::string> args) {
    try {
      predictCommand(args);
    } catch (const core::UsageError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message({"x.h5", "--model", "llama-8b"}).find("unknown model 'llama-8b' (presets: llama-7b"),
            std::string::npos);
  EXPECT_NE(message({"x.h5", "--tp", "2"}).find("no model"), std::string::npos);
  EXPECT_NE(message({"--model", "llama-7b"}).find("no results file"), std::string::npos);
  EXPECT_NE(message({"x.h5", "--model", "llama-7b", "--layout", "tp=2", "--tp", "2"}).find("not both"),
            std::string::npos);
  EXPECT_NE(message({"x.h5", "--model", "llama-7b", "--params", "7B"}).find("not both"), std::string::npos);
  EXPECT_NE(message({"x.h5", "--model", "llama-7b", "--dp", "3"}).find("global batch 1024 is not a multiple"),
            std::string::npos);
  EXPECT_NE(message({"x.h5", "--model", "llama-7b", "--dp-mode", "fsdp"}).find("unknown --dp-mode"), std::string::npos);
  EXPECT_NE(message({"x.h5", "--model", "llama-7b", "--tokens", "lots"}).find("invalid --tokens"), std::string::npos);
  EXPECT_NE(message({"x.h5", "--model", "llama-7b", "--tp", "x"}).find("usage: fabricmap predict"), std::string::npos);
  // a file that is not there: the reader's message, exit 2
  EXPECT_NE(message({"/nonexistent/absent.h5", "--model", "llama-7b", "--peak-tflops", "989"}), "no error");
}

}  // namespace
}  // namespace fabricmap::orchestrator
