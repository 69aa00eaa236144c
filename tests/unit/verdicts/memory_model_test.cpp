// The memory model against published figures (tests/data/memory/published.tsv: the ZeRO paper's
// model states, Megatron-LM's bytes per parameter, Korthikanti et al.'s activations) and what the
// frameworks allow.
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.h"
#include "orchestrator/verdicts/memory_model.h"

namespace fabricmap::orchestrator {
namespace {

struct Published {
  std::string name;
  Framework framework = Framework::kMegatron;
  ModelSpec model;
  int seq = 0;
  MemoryChoice choice;
  std::string what;
  double figure = 0;
  double tolerance = 0;
  std::string source;
};

Recompute recomputeOf(const std::string& text) {
  if (text == "selective") return Recompute::kSelective;
  if (text == "full") return Recompute::kFull;
  return Recompute::kNone;
}

std::vector<Published> readPublished() {
  std::ifstream in(std::string(FABRICMAP_TEST_DATA) + "/memory/published.tsv");
  std::vector<Published> rows;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> f;
    std::stringstream cells(line);
    for (std::string cell; std::getline(cells, cell, '\t');) f.push_back(cell);
    if (f.size() != 18) ADD_FAILURE() << "published.tsv: 18 columns wanted: " << line;
    if (f.size() != 18) continue;
    Published p;
    p.name = f[0];
    p.framework = parseFramework(f[1]);
    p.model = {.name = f[0], .params = std::stod(f[2]), .layers = std::stoi(f[3]), .hidden = std::stoi(f[4]),
               .heads = std::stoi(f[5])};
    p.seq = std::stoi(f[6]);
    p.choice.microBatch = std::stoi(f[7]);
    p.choice.layout = {.tp = std::stoi(f[8]), .pp = std::stoi(f[9]), .dp = std::stoi(f[10])};
    p.choice.zeroStage = std::stoi(f[11]);
    p.choice.sequenceParallel = f[12] == "1";
    p.choice.recompute = recomputeOf(f[13]);
    p.choice.microBatches = 64;
    p.what = f[14];
    p.figure = std::stod(f[15]);
    p.tolerance = std::stod(f[16]);
    p.source = f[17];
    rows.push_back(p);
  }
  return rows;
}

// What the model says for a row's `what`.
double modelled(const Published& p) {
  const MemoryEstimate e = memoryPerGpu(p.framework, p.model, p.seq, p.choice, 0);
  const double states = e.weights + e.gradients + e.optimizer;
  if (p.what == "model_states_gb") return states / 1e9;
  if (p.what == "bytes_per_param") return states / (p.model.params / (p.choice.layout.tp * p.choice.layout.pp));
  if (p.what == "activation_layer_gb") return activationBytesPerLayer(p.model, p.seq, p.choice) / 1e9;
  if (p.what == "activation_reduction") {
    MemoryChoice baseline = p.choice;
    baseline.sequenceParallel = false;
    baseline.recompute = Recompute::kNone;
    return activationBytesPerLayer(p.model, p.seq, baseline) / activationBytesPerLayer(p.model, p.seq, p.choice);
  }
  ADD_FAILURE() << p.name << ": unknown figure " << p.what;
  return 0;
}

TEST(MemoryModel, ReproducesThePublishedFigures) {
  const std::vector<Published> rows = readPublished();
  ASSERT_GE(rows.size(), 18u);
  for (const Published& p : rows) {
    const double ours = modelled(p);
    const double off = ours / p.figure - 1;
    EXPECT_LE(std::fabs(off), p.tolerance) << p.name << ": " << ours << " against " << p.figure << " published ("
                                           << p.source << "), " << off * 100 << "% off";
    if (std::fabs(off) > 0.10) {
      std::cout << "  not within 10%: " << p.name << " " << ours << " vs " << p.figure << " (" << off * 100
                << "%): " << p.source << "\n";
    }
  }
}

// Korthikanti et al.'s Figure 1: on 80 GB GPUs the 175B model (t 8, p 8) needs recomputation
// without sequence parallelism, and fits with sequence parallelism and selective recomputation.
TEST(MemoryModel, GptThreeFitsOnEightyGigabytesOnlyWithSequenceParallelismAndSelectiveRecomputation) {
  const ModelSpec gpt3{.name = "gpt3-175b", .params = 175e9, .layers = 96, .hidden = 12288, .heads = 96};
  MemoryChoice c{.layout = {.tp = 8, .pp = 8, .dp = 8}, .microBatch = 1, .microBatches = 64};
  const double reserve = 3e9;
  const double eighty = 80e9;
  EXPECT_GT(memoryPerGpu(Framework::kMegatron, gpt3, 2048, c, reserve).total(), eighty);
  c.sequenceParallel = true;
  c.recompute = Recompute::kSelective;
  const MemoryEstimate fits = memoryPerGpu(Framework::kMegatron, gpt3, 2048, c, reserve);
  EXPECT_LT(fits.total(), eighty);
  // the first stage keeps 96 / 8 layers for 8 micro-batches: 96 layers' worth
  EXPECT_NEAR(fits.activations, 96 * 34.0 * 2048 * 12288 / 8, 1);
  EXPECT_NEAR(fits.weights + fits.gradients + fits.optimizer, 18 * 175e9 / 64, 1e3);
}

// The pipeline's first stage holds fewer micro-batches when the step has fewer, and more layers'
// worth with interleaving: L (1 + (p - 1) / (p v)).
TEST(MemoryModel, PipelineInFlightMicroBatches) {
  const ModelSpec m{.name = "m", .params = 1e9, .layers = 32, .hidden = 4096, .heads = 32};
  MemoryChoice c{.layout = {.tp = 1, .pp = 4, .dp = 1}, .microBatch = 1, .microBatches = 16};
  const double perLayer = activationBytesPerLayer(m, 2048, c);
  EXPECT_NEAR(memoryPerGpu(Framework::kMegatron, m, 2048, c, 0).activations, 32 * perLayer, 1);
  c.microBatches = 2;
  EXPECT_NEAR(memoryPerGpu(Framework::kMegatron, m, 2048, c, 0).activations, 8 * 2 * perLayer, 1);
  c.microBatches = 16;
  c.virtualStages = 2;
  EXPECT_NEAR(memoryPerGpu(Framework::kMegatron, m, 2048, c, 0).activations, 32 * (1 + 3.0 / 8) * perLayer, 1);
}

// Experts: their weights split over ep as well, their optimizer states over dp / ep.
TEST(MemoryModel, ExpertsSplitOverExpertParallelism) {
  const ModelSpec mixtral{.name = "mixtral", .params = 46.7e9, .layers = 32, .hidden = 4096, .heads = 32,
                          .ffn = 14336, .experts = 8, .topK = 2};
  MemoryChoice c{.layout = {.tp = 1, .pp = 1, .dp = 8, .ep = 8}, .zeroStage = 1};
  const MemoryEstimate e = memoryPerGpu(Framework::kDeepSpeed, mixtral, 4096, c, 0);
  const double experts = mixtral.expertParams();
  const double dense = mixtral.params - experts;
  EXPECT_NEAR(e.weights, 2 * (dense + experts / 8), 1e3);
  EXPECT_NEAR(e.optimizer, 12 * dense / 8 + 12 * experts / 8 / 1, 1e3);  // experts' dp group: 8 / 8 = 1
  // top-2 routing keeps twice the MLP's activations
  MemoryChoice dense2 = c;
  ModelSpec one = mixtral;
  one.experts = 1;
  one.topK = 1;
  EXPECT_GT(activationBytesPerLayer(mixtral, 4096, c), activationBytesPerLayer(one, 4096, dense2));
}

// vLLM: weights and the KV cache only.
TEST(MemoryModel, InferenceHoldsWeightsAndTheKvCache) {
  const ModelSpec llama{.name = "llama-70b", .params = 69e9, .layers = 80, .hidden = 8192, .heads = 64};
  const MemoryChoice c{.layout = {.tp = 8, .pp = 1, .dp = 1}, .microBatch = 4};
  const MemoryEstimate e = memoryPerGpu(Framework::kVllm, llama, 4096, c, 0);
  EXPECT_NEAR(e.weights, 2 * 69e9 / 8, 1e3);
  EXPECT_EQ(e.gradients, 0);
  EXPECT_EQ(e.optimizer, 0);
  EXPECT_NEAR(e.activations, 2.0 * 2 * 80 * 4096 * 4 * 8192 / 8, 1);
}

TEST(MemoryModel, WhatEachFrameworkOffers) {
  MemoryChoice c{.layout = {.tp = 1, .pp = 1, .dp = 8}};
  c.sequenceParallel = true;
  EXPECT_EQ(choiceProblem(Framework::kMegatron, c), "sequence parallelism needs tensor parallelism");
  c.sequenceParallel = false;
  c.zeroStage = 2;
  EXPECT_NE(choiceProblem(Framework::kMegatron, c), "");
  EXPECT_EQ(choiceProblem(Framework::kDeepSpeed, c), "");
  c.layout.pp = 2;
  EXPECT_NE(choiceProblem(Framework::kDeepSpeed, c), "");
  c.zeroStage = 1;
  EXPECT_EQ(choiceProblem(Framework::kDeepSpeed, c), "");
  EXPECT_NE(choiceProblem(Framework::kVllm, c), "");
  EXPECT_EQ(parseFramework("deepspeed"), Framework::kDeepSpeed);
  EXPECT_THROW(parseFramework("jax"), core::UsageError);
  EXPECT_EQ(recomputeName(Recompute::kSelective), "selective");
  EXPECT_EQ(parseRecompute("full"), Recompute::kFull);
  EXPECT_THROW(parseRecompute("some"), core::UsageError);
}

// A prediction's layout is counted as the memory choice its options make: Megatron-LM's states
// (the distributed optimizer for dp-mode zero), DeepSpeed's ZeRO-3 for zero3, its recomputation.
TEST(MemoryModel, APredictionsLayoutAsAMemoryChoice) {
  PredictConfig c;
  c.model = {.name = "m", .params = 8e9, .layers = 32, .hidden = 4096, .heads = 32};
  c.seq = 2048;
  c.globalBatch = 64;
  c.layout = {.tp = 2, .pp = 2, .dp = 4};
  c.microBatch = 2;
  c.recompute = Recompute::kSelective;
  c.reserveBytes = 1e9;
  const MemoryChoice m = memoryChoiceOf(c);
  EXPECT_EQ(m.microBatches, 8);  // 64 / (2 x 4)
  EXPECT_EQ(m.zeroStage, 0);
  EXPECT_EQ(m.recompute, Recompute::kSelective);
  // 8e9 / (2 x 2) = 2e9 parameters per GPU x (2 + 4 + 12) B
  const MemoryEstimate plain = memoryPerGpu(c);
  EXPECT_NEAR(plain.weights + plain.gradients + plain.optimizer, 2e9 * 18, 1);
  EXPECT_EQ(plain.reserve, 1e9);
  c.dpMode = DpMode::kZero;  // the distributed optimizer: 2 + 4 + 12/4
  const MemoryEstimate sharded = memoryPerGpu(c);
  EXPECT_NEAR(sharded.weights + sharded.gradients + sharded.optimizer, 2e9 * 9, 1);
  EXPECT_NE(memoryModelText(c).find("distributed optimizer"), std::string::npos) << memoryModelText(c);
  c.dpMode = DpMode::kZero3;  // DeepSpeed ZeRO-3: 16/4
  const MemoryEstimate zero3 = memoryPerGpu(c);
  EXPECT_NEAR(zero3.weights + zero3.gradients + zero3.optimizer, 2e9 * 4, 1);
  EXPECT_NE(memoryModelText(c).find("DeepSpeed ZeRO-3"), std::string::npos) << memoryModelText(c);
  // advise's own choice wins over what the dp-mode implies (DeepSpeed ZeRO-2: 2 + 14/4)
  c.dpMode = DpMode::kZero;
  c.modelStates = ModelStates{Framework::kDeepSpeed, 2};
  const MemoryEstimate zero2 = memoryPerGpu(c);
  EXPECT_NEAR(zero2.weights + zero2.gradients + zero2.optimizer, 2e9 * 5.5, 1);
  EXPECT_EQ(zero2.activations, plain.activations);
}

results::ResultsFile rankedGpus(const std::vector<std::uint64_t>& memory, const std::string& name) {
  results::ResultsFile f;
  f.path = "f.h5";
  for (std::size_t r = 0; r < memory.size(); ++r) {
    core::RankRecord rank;
    rank.rank = static_cast<int>(r);
    rank.gpuName = name;
    rank.gpuMemoryBytes = memory[r];
    f.topology.ranks.push_back(rank);
  }
  return f;
}

// The GPU memory a file records: NVML's inventory first, else the ranks' figures (an imported
// log's come from its GPU names, and say so); nothing for a host-memory run.
TEST(MemoryModel, GpuMemoryAsTheFileRecordsIt) {
  constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;
  results::ResultsFile f = rankedGpus({80 * kGiB, 40 * kGiB, 0, 80 * kGiB}, "A100-SXM4-40GB");
  auto memory = gpuMemoryOf(f);
  ASSERT_TRUE(memory);
  EXPECT_EQ(memory->bytes, 40.0 * kGiB);  // the smallest, the unknown one left out
  EXPECT_NE(memory->source.find("3 rank(s)' GPUs in the file (NVML total)"), std::string::npos) << memory->source;
  f.imported.emplace_back();
  memory = gpuMemoryOf(f);
  EXPECT_NE(memory->source.find("from the imported log's GPU name (A100-SXM4-40GB)"), std::string::npos)
      << memory->source;
  core::GpuInventoryRecord g;
  g.memoryBytes = 79 * kGiB;
  f.topology.inventory.gpus = {g, g};
  memory = gpuMemoryOf(f);
  EXPECT_EQ(memory->bytes, 79.0 * kGiB);
  EXPECT_NE(memory->source.find("2 GPU(s) in the file (NVML total)"), std::string::npos) << memory->source;
  EXPECT_FALSE(gpuMemoryOf(rankedGpus({0, 0}, "")));
}

// A declared GPU memory is used as asked; one that contradicts the file's is said (an A100-40GB
// log judged as 96 GiB GPUs would fit layouts that cannot run on it).
TEST(MemoryModel, ADeclaredMemoryThatContradictsTheFileIsSaid) {
  constexpr double kGiB = 1024.0 * 1024 * 1024;
  const results::ResultsFile f = rankedGpus({40ull << 30, 40ull << 30}, "A100-SXM4-40GB");
  GpuMemoryChoice c = chooseGpuMemory(96 * kGiB, "--gpu-memory", f);
  EXPECT_EQ(c.bytes, 96 * kGiB);
  EXPECT_EQ(c.source, "--gpu-memory");
  EXPECT_NE(c.contradiction.find("--gpu-memory declares 96.0 GiB per GPU, but"), std::string::npos) << c.contradiction;
  EXPECT_NE(c.contradiction.find("records 40.0 GiB"), std::string::npos) << c.contradiction;
  EXPECT_TRUE(chooseGpuMemory(41 * kGiB, "providers.txt:2", f).contradiction.empty());  // within 5 %
  c = chooseGpuMemory(std::nullopt, "--gpu-memory", f);
  EXPECT_EQ(c.bytes, 40 * kGiB);
  EXPECT_TRUE(c.contradiction.empty());
  EXPECT_FALSE(chooseGpuMemory(std::nullopt, "--gpu-memory", rankedGpus({0}, "")).bytes);
  EXPECT_TRUE(chooseGpuMemory(80 * kGiB, "--gpu-memory", rankedGpus({0}, "")).contradiction.empty());
}

}  // namespace
}  // namespace fabricmap::orchestrator
