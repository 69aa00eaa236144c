// Training-step prediction (see predict.h).
#include "orchestrator/verdicts/predict.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "core/dtype.h"
#include "core/error.h"
#include "core/stats.h"
#include "core/units.h"
#include "orchestrator/verdicts/memory_model.h"
#include "orchestrator/verdicts/scope_model.h"
#include "topologies/specs.h"

namespace fabricmap::orchestrator {
namespace {

using U64 = std::uint64_t;

// One table of presets. Parameter counts are exact where the weights are public (Llama 2 and 3.1,
// Mixtral: the sum of their tensors, which the architecture reproduces) and the paper's figure
// for GPT-3. Sequence length and global batch are the published pretraining ones (Llama 2: 4M-token
// batches of 4096; GPT-3: 1536 x 2048 = 3.2M; Llama 3.1 405B: 16M tokens at 8192); Mixtral's batch
// is not published and uses Llama 2's.
const std::vector<ModelPreset>& presetTable() {
  // clang-format off
  static const std::vector<ModelPreset> table = {
      // name, params, layers, hidden, heads, ffn, experts, top-k; seq, global batch
      {{"llama-7b", 6'738'415'616.0, 32, 4096, 32, 11008, 1, 1}, 4096, 1024,
       "Llama 2 7B (Touvron et al. 2023; 4M-token batches)"},
      {{"llama-13b", 13'015'864'320.0, 40, 5120, 40, 13824, 1, 1}, 4096, 1024,
       "Llama 2 13B (Touvron et al. 2023; 4M-token batches)"},
      {{"llama-70b", 68'976'648'192.0, 80, 8192, 64, 28672, 1, 1}, 4096, 1024,
       "Llama 2 70B (Touvron et al. 2023; 4M-token batches)"},
      {{"gpt3-175b", 175.0e9, 96, 12288, 96, 49152, 1, 1}, 2048, 1536,
       "GPT-3 175B (Brown et al. 2020; 3.2M-token batches)"},
      {{"llama-405b", 405'853'388'800.0, 126, 16384, 128, 53248, 1, 1}, 8192, 2048,
       "Llama 3.1 405B (Llama 3 paper 2024; 16M-token batches)"},
      {{"mixtral-8x7b", 46'702'792'704.0, 32, 4096, 32, 14336, 8, 2}, 4096, 1024,
       "Mixtral 8x7B (Jiang et al. 2024; 12.9B active; batch not published: 4M tokens assumed)"},
  };
  // clang-format on
  return table;
}

// Peak dense (no sparsity) 16-bit tensor-core TFLOP/s per GPU model as topologies/specs.h names
// it, from the vendor's datasheets (bf16; fp16 on Volta, which has no bf16).
const std::map<std::string, double, std::less<>>& peakTable() {
  // clang-format off
  static const std::map<std::string, double, std::less<>> table = {
      {"V100 PCIe", 112},      {"V100S PCIe", 130},     {"V100 SXM3", 125},     {"V100 SXM2", 125},
      {"A100 PCIe 80GB", 312}, {"A100 PCIe 40GB", 312}, {"A100 SXM 80GB", 312}, {"A100 SXM 40GB", 312},
      {"A800 SXM", 312},       {"A30", 165},            {"A40", 149.7},         {"A10", 125},
      {"H100 PCIe", 756},      {"H100 NVL", 835},       {"H100 SXM", 989},      {"H800 SXM", 989},
      {"H20", 148},            {"H200 NVL", 835},       {"H200 SXM", 989},      {"GH200 144GB", 989},
      {"GH200 96GB", 989},     {"B200", 2250},          {"GB200", 2500},        {"L40S", 362},
      {"L40", 181},            {"L4", 121},
  };
  // clang-format on
  return table;
}

}  // namespace

double ModelSpec::expertParams() const {
  return moe() ? static_cast<double>(layers) * experts * 3.0 * hidden * ffn : 0.0;
}

double ModelSpec::activeParams() const { return params - expertParams() * (1.0 - static_cast<double>(topK) / experts); }

const std::vector<ModelPreset>& modelPresets() { return presetTable(); }

std::optional<ModelPreset> findPreset(std::string_view name) {
  for (const ModelPreset& p : presetTable()) {
    if (p.model.name == name) return p;
  }
  return std::nullopt;
}

int dtypeBytes(std::string_view dtype) {
  const auto t = core::parseDType(dtype);
  if (!t || (*t != core::DType::kBfloat16 && *t != core::DType::kHalf && *t != core::DType::kFloat)) {
    throw core::UsageError(fmt::format("unknown training dtype '{}' (bf16, fp16 or fp32)", dtype));
  }
  return static_cast<int>(core::traits(*t).size);
}

namespace {
// The nccl-tests name of a training dtype, as results files record it ("bfloat16").
std::string ncclDtypeName(std::string_view dtype) { return std::string(core::traits(*core::parseDType(dtype)).name); }
}  // namespace

double parseCount(std::string_view text, std::string_view what) {
  const auto bad = [&] {
    return core::UsageError(
        fmt::format("invalid {} '{}': expected a positive count such as 7B, 300B, 1T or 1.5e12", what, text));
  };
  if (text.empty()) throw bad();
  double scale = 1;
  std::string_view number = text;
  switch (std::toupper(static_cast<unsigned char>(text.back()))) {
    case 'K': scale = 1e3; break;
    case 'M': scale = 1e6; break;
    case 'B':
    case 'G': scale = 1e9; break;
    case 'T': scale = 1e12; break;
    default: break;
  }
  if (scale != 1) number.remove_suffix(1);
  double value = 0;
  const auto [ptr, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
  if (ec != std::errc() || ptr != number.data() + number.size() || !std::isfinite(value) || value <= 0) {
    throw bad();
  }
  return value * scale;
}

std::string_view dpModeName(DpMode mode) {
  switch (mode) {
    case DpMode::kZero: return "zero";
    case DpMode::kZero3: return "zero3";
    case DpMode::kAllReduce: break;
  }
  return "allreduce";
}

int microBatchesPerStep(const PredictConfig& c) { return c.globalBatch / (c.microBatch * c.layout.dp); }

ModelStates modelStatesOf(const PredictConfig& c) {
  if (c.modelStates) return *c.modelStates;
  switch (c.dpMode) {
    case DpMode::kZero: return {Framework::kMegatron, 1};
    case DpMode::kZero3: return {Framework::kDeepSpeed, 3};
    case DpMode::kAllReduce: break;
  }
  return {Framework::kMegatron, 0};
}

namespace {

// The gradient exchange a ZeRO stage makes (stage 1 and 2 alike: reduce_scatter, then all_gather).
DpMode dpModeOfStage(int stage) {
  return stage >= 3 ? DpMode::kZero3 : stage >= 1 ? DpMode::kZero : DpMode::kAllReduce;
}

// The memory check's inputs: sizes that are sizes, model states that exchange what dpMode prices.
void validateMemory(const PredictConfig& c) {
  const auto fail = [](const std::string& m) { throw core::UsageError(m); };
  if (!(std::isfinite(c.reserveBytes) && c.reserveBytes >= 0)) fail("--reserve must not be negative");
  if (c.gpuMemoryBytes && !(std::isfinite(*c.gpuMemoryBytes) && *c.gpuMemoryBytes > 0)) {
    fail("--gpu-memory must be positive");
  }
  if (c.modelStates && dpModeOfStage(c.modelStates->zeroStage) != c.dpMode) {
    fail(fmt::format("ZeRO stage {} exchanges gradients as dp-mode {}, not {}", c.modelStates->zeroStage,
                     dpModeName(dpModeOfStage(c.modelStates->zeroStage)), dpModeName(c.dpMode)));
  }
}

}  // namespace

void validate(const PredictConfig& c) {
  const auto fail = [](const std::string& m) { throw core::UsageError(m); };
  const ModelSpec& m = c.model;
  if (!(std::isfinite(m.params) && m.params > 0)) fail("--params must be positive");
  if (m.layers < 1) fail("--layers must be at least 1");
  if (m.hidden < 1) fail("--hidden must be at least 1");
  if (m.heads < 0) fail("--heads must be positive");
  if (m.experts < 1) fail("--experts must be at least 1");
  if (m.topK < 1 || m.topK > m.experts) fail(fmt::format("--top-k must be between 1 and the {} experts", m.experts));
  if (m.moe() && m.ffn < 1)
    fail("an MoE model needs --ffn (each expert's FFN size) to tell expert from dense parameters");
  if (m.moe() && m.expertParams() >= m.params) {
    fail(fmt::format("{} experts of FFN size {} over {} layers hold {} parameters, not fewer than the model's {}",
                     m.experts, m.ffn, m.layers, core::formatCount(m.expertParams()), core::formatCount(m.params)));
  }
  if (c.seq < 1) fail("--seq must be at least 1");
  if (c.microBatch < 1) fail("--micro-batch must be at least 1");
  if (c.globalBatch < 1) fail("--global-batch must be at least 1");
  // message sizes are counted in 64 bits
  if (static_cast<double>(c.microBatch) * c.seq * m.hidden * 4 * m.topK > 1e18) {
    fail("micro-batch x sequence x hidden is too large to count in bytes");
  }
  dtypeBytes(c.dtype);
  dtypeBytes(c.gradDtype);
  const core::Layout& l = c.layout;
  if (l.tp < 1 || l.pp < 1 || l.dp < 1 || l.ep < 1) fail("--tp, --pp, --dp and --ep must be at least 1");
  constexpr long long kMaxGpus = 1 << 22;
  if (static_cast<long long>(l.tp) * l.pp * l.dp > kMaxGpus) {
    fail(fmt::format("tp x pp x dp = {} GPUs is more than {} this predicts for",
                     static_cast<long long>(l.tp) * l.pp * l.dp, kMaxGpus));
  }
  if (const std::string why = core::layoutProblem(l, l.worldSize()); !why.empty()) fail(why);
  if (c.globalBatch % (static_cast<long long>(c.microBatch) * l.dp) != 0) {
    fail(
        fmt::format("global batch {} is not a multiple of micro-batch x dp = {} x {} = {} (each data-parallel "
                    "rank runs a whole number of micro-batches per step)",
                    c.globalBatch, c.microBatch, l.dp, static_cast<long long>(c.microBatch) * l.dp));
  }
  if (m.layers % l.pp != 0) fail(fmt::format("pp={} does not divide the {} layers into equal stages", l.pp, m.layers));
  if (c.virtualStages < 1) fail("--virtual-stages must be at least 1");
  if (c.virtualStages > 1) {
    if (l.pp == 1) fail("--virtual-stages interleaves pipeline stages: it needs pp > 1");
    if (m.layers % (l.pp * c.virtualStages) != 0) {
      fail(fmt::format("pp x virtual stages = {} x {} does not divide the {} layers into equal chunks", l.pp,
                       c.virtualStages, m.layers));
    }
    if (c.globalBatch % (static_cast<long long>(c.microBatch) * l.dp) == 0 && microBatchesPerStep(c) % l.pp != 0) {
      fail(fmt::format("the interleaved schedule runs micro-batches in groups of pp={}: {} micro-batches per step is "
                       "not a multiple",
                       l.pp, microBatchesPerStep(c)));
    }
  }
  if (m.heads > 0 && m.heads % l.tp != 0) {
    fail(fmt::format("tp={} does not divide the {} attention heads", l.tp, m.heads));
  }
  if (l.ep > 1 && !m.moe()) fail(fmt::format("ep={} needs an MoE model ({} has no experts)", l.ep, m.name));
  if (m.moe() && m.experts % l.ep != 0) fail(fmt::format("ep={} does not divide the {} experts", l.ep, m.experts));
  if (c.sequenceParallel && c.seq % l.tp != 0) {
    fail(fmt::format("--sequence-parallel splits the sequence over tp={}: {} is not a multiple", l.tp, c.seq));
  }
  if (c.bucketBytes < 1) fail("--bucket-bytes must be positive");
  if (!(c.overlap >= 0 && c.overlap <= 1)) fail("--overlap must be between 0 and 1");
  if (!(c.mfu > 0 && c.mfu <= 1)) fail("--mfu must be above 0 and at most 1");
  if (c.peakTflops && !(std::isfinite(*c.peakTflops) && *c.peakTflops > 0)) fail("--peak-tflops must be positive");
  if (!(std::isfinite(c.tokens) && c.tokens > 0)) fail("--tokens must be positive");
  if (c.pricePerGpuHour && !(std::isfinite(*c.pricePerGpuHour) && *c.pricePerGpuHour >= 0)) {
    fail("--price-per-gpu-hour must not be negative");
  }
  validateMemory(c);
}

std::set<core::Op> measuredOps(const results::ResultsFile& file) {
  std::set<core::Op> ops;
  for (const core::CollectiveRecord& r : file.collectives) {
    if (r.bytes == 0 || (r.checked && r.wrong > 0) || !(std::isfinite(r.busbwMedian) && r.busbwMedian > 0)) continue;
    if (const auto op = core::parseOp(r.op)) ops.insert(*op);
  }
  return ops;
}

namespace {

struct PricedOnRow {
  PricedOn what;
  std::string_view feature;  // what needs the ops, as the sentence starts
  std::vector<core::Op> ops;
};
const std::vector<PricedOnRow>& pricedOnTable() {
  static const std::vector<PricedOnRow> table = {
      {PricedOn::kAllReduce, "tensor parallelism without sequence parallelism and data parallelism (DDP) need",
       {core::Op::kAllReduce}},
      {PricedOn::kGatherScatter, "sequence parallelism and ZeRO (any stage, Megatron-LM's distributed optimizer) need",
       {core::Op::kAllGather, core::Op::kReduceScatter}},
      {PricedOn::kSendRecv, "pipeline parallelism needs", {core::Op::kSendRecv}},
      {PricedOn::kAllToAll, "expert parallelism needs", {core::Op::kAllToAll}},
  };
  return table;
}

}  // namespace

std::string unmeasuredNeed(PricedOn what, const std::set<core::Op>& measured, std::string_view file) {
  for (const PricedOnRow& row : pricedOnTable()) {
    if (row.what != what) continue;
    std::vector<std::string> names;
    std::vector<std::string> binaries;
    for (const core::Op op : row.ops) {
      names.emplace_back(core::traits(op).name);
      binaries.push_back(names.back() + "_perf");
    }
    const bool lacking = std::any_of(row.ops.begin(), row.ops.end(), [&](core::Op op) { return !measured.count(op); });
    if (!lacking) return {};
    return fmt::format("{} {} curves, which {} did not measure: run with --ops {} or import those nccl-tests logs ({})",
                       row.feature, fmt::join(names, " and "), file, fmt::join(names, ","), fmt::join(binaries, ", "));
  }
  return {};
}

std::optional<bool> Prediction::fitsMemory() const {
  return gpuMemoryBytes ? std::optional<bool>(memory.total() <= *gpuMemoryBytes) : std::nullopt;
}

std::string Prediction::doesNotFit() const {
  if (fitsMemory().value_or(true)) return {};
  constexpr double kGiB = 1ull << 30;
  return fmt::format("DOES NOT FIT: needs {:.1f} GiB per GPU of {:.1f} GiB ({})", memory.total() / kGiB,
                     *gpuMemoryBytes / kGiB, gpuMemorySource);
}

std::optional<Curve> curveOf(const std::vector<core::CollectiveRecord>& rows, std::string_view scope, core::Op op,
                             std::string_view dtype) {
  const std::string_view opName = core::traits(op).name;
  std::vector<const core::CollectiveRecord*> usable;
  std::map<std::string, int> perDtype;
  for (const core::CollectiveRecord& r : rows) {
    if (r.scope != scope || r.op != opName || r.bytes == 0) continue;
    if (r.checked && r.wrong > 0) continue;
    if (!(std::isfinite(r.busbwMedian) && r.busbwMedian > 0)) continue;
    usable.push_back(&r);
    ++perDtype[r.dtype];
  }
  if (usable.empty()) return std::nullopt;
  std::string chosen(dtype);
  if (!perDtype.count(chosen)) {
    chosen = std::max_element(perDtype.begin(), perDtype.end(), [](const auto& a, const auto& b) {
               return a.second < b.second;
             })->first;
  }
  const bool anyOutOfPlace = std::any_of(
      usable.begin(), usable.end(), [&](const core::CollectiveRecord* r) { return r->dtype == chosen && !r->inPlace; });
  Curve curve;
  curve.scope = std::string(scope);
  curve.op = op;
  curve.dtype = chosen;
  curve.inPlace = !anyOutOfPlace;
  std::map<U64, std::vector<double>> bySize;
  std::set<int> groups;
  for (const core::CollectiveRecord* r : usable) {
    if (r->dtype != chosen || r->inPlace != curve.inPlace) continue;
    bySize[r->bytes].push_back(r->busbwMedian);
    groups.insert(r->group);
    curve.nranks = std::max(curve.nranks, r->nranks);
  }
  curve.groups = static_cast<int>(groups.size());
  for (const auto& [size, values] : bySize) {
    curve.sizes.push_back(size);
    curve.busbw.push_back(core::median(values));
  }
  return curve;
}

CurvePoint busbwAt(const Curve& curve, std::uint64_t bytes) {
  CurvePoint p;
  const std::vector<U64>& s = curve.sizes;
  if (s.empty()) {
    p.reason = "no measured sizes";
    return p;
  }
  const std::string at = core::formatBytes(bytes);
  const U64 lo = s.front();
  const U64 hi = s.back();
  if (bytes < lo || bytes > hi) {
    const bool below = bytes < lo;
    const U64 end = below ? lo : hi;
    const bool near = below ? bytes * 2 >= lo : bytes <= hi * 2;
    if (!near) {
      p.reason = fmt::format("message {} is {} the {} measured size {} by more than 2x (not extrapolated)", at,
                             below ? "below" : "beyond", below ? "smallest" : "largest", core::formatBytes(end));
      return p;
    }
    p.busbw = below ? curve.busbw.front() : curve.busbw.back();
    p.how = fmt::format("clamped to the {} measured size {} for {} (within 2x)", below ? "smallest" : "largest",
                        core::formatBytes(end), at);
    return p;
  }
  const std::size_t upper = static_cast<std::size_t>(std::lower_bound(s.begin(), s.end(), bytes) - s.begin());
  if (s[upper] == bytes) {
    p.busbw = curve.busbw[upper];
    p.how = "measured at " + at;
    return p;
  }
  const std::size_t lower = upper - 1;
  // log-log: busbw follows a power law between neighbouring sizes (straight on nccl-tests' log
  // axes, and exact where busbw is size / (latency-free) time at a constant rate)
  const double x0 = std::log(static_cast<double>(s[lower]));
  const double x1 = std::log(static_cast<double>(s[upper]));
  const double t = (std::log(static_cast<double>(bytes)) - x0) / (x1 - x0);
  p.busbw = std::exp(std::log(curve.busbw[lower]) + t * (std::log(curve.busbw[upper]) - std::log(curve.busbw[lower])));
  p.how = fmt::format("interpolated (log-log) at {} between {} and {}", at, core::formatBytes(s[lower]),
                      core::formatBytes(s[upper]));
  return p;
}

std::optional<PeakFigure> peakTflopsOf(std::string_view gpuName) {
  const auto spec = topologies::gpuSpecForName(gpuName);
  if (!spec) return std::nullopt;
  const auto it = peakTable().find(spec->model);
  if (it == peakTable().end()) return std::nullopt;
  return PeakFigure{it->second, std::string(spec->model)};
}

int ranksPerNodeOf(const core::Topology& topology) {
  if (topology.emulated && topology.ranksPerNode > 0) return topology.ranksPerNode;
  std::map<int, int> perNode;
  for (const core::RankRecord& r : topology.ranks) ++perNode[r.node];
  int smallest = 0;
  for (const auto& [node, count] : perNode) smallest = smallest == 0 ? count : std::min(smallest, count);
  return smallest;
}

namespace {

std::string describeCurve(const Curve& curve) {
  return fmt::format("{} {} ({}{}), {} size{} {}..{}, median of {} group{} of {} ranks", curve.scope,
                     core::traits(curve.op).name, curve.dtype, curve.inPlace ? ", in-place" : "", curve.sizes.size(),
                     curve.sizes.size() == 1 ? "" : "s", core::formatBytes(curve.sizes.front()),
                     core::formatBytes(curve.sizes.back()), curve.groups, curve.groups == 1 ? "" : "s", curve.nranks);
}

// Why a scope/op has no curve in the file, in the file's terms.
std::string whyNotMeasured(const results::ResultsFile& file, const std::string& scope, core::Op op) {
  const std::string what = fmt::format("{} {} not measured in {}", scope, core::traits(op).name, file.path);
  if (const std::string_view answering = answeringScope(file, scope); answering != scope) {
    std::set<std::string> ops;
    for (const core::CollectiveRecord& r : file.collectives) {
      if (r.scope == answering) ops.insert(r.op);
    }
    return fmt::format("{} ({}; it measured: {})", what, kIntraFromWorld, fmt::join(ops, ", "));
  }
  for (const core::ScopeRecord& s : file.scopes) {
    if (s.scope != scope) continue;
    if (s.status == "waived") return fmt::format("{} (scope {} waived: {})", what, scope, s.reason);
    std::set<std::string> ops;
    for (const core::CollectiveRecord& r : file.collectives) {
      if (r.scope == scope) ops.insert(r.op);
    }
    if (ops.empty()) return what + fmt::format(" (no usable {} rows)", scope);
    return fmt::format("{} (ops with rows in {}: {})", what, scope, fmt::join(ops, ", "));
  }
  std::vector<std::string> scopes;
  for (const core::ScopeRecord& s : file.scopes) scopes.push_back(s.scope);
  if (scopes.empty()) return what + " (the run had no scopes)";
  return fmt::format("{} (the run had scopes: {})", what, fmt::join(scopes, ", "));
}

// The interference of a traffic type measured concurrently with the others (/patterns/training):
// the median over its concurrent rows.
void applyInterference(const results::ResultsFile& file, TrafficResult& t) {
  const std::string kind = t.traffic.type == "edp" ? "dp" : t.traffic.type;
  std::vector<double> ratios;
  for (const core::TrainingRecord& r : file.training) {
    if (r.mode == "concurrent" && r.traffic == kind && std::isfinite(r.interference) && r.interference > 0) {
      ratios.push_back(r.interference);
    }
  }
  if (ratios.empty()) return;
  t.interference = core::median(ratios);
  t.interferenceSource = fmt::format("x{:.3g}: concurrent {} traffic of /patterns/training{} ({} row{}), {}",
                                     *t.interference, kind, file.layout.empty() ? "" : " with layout " + file.layout,
                                     ratios.size(), ratios.size() == 1 ? "" : "s", file.path);
}

}  // namespace

namespace {

// The GPU's peak: --peak-tflops, else the slowest recorded GPU model's.
void setPeak(const PredictConfig& c, const results::ResultsFile& file, Prediction& p) {
  if (c.peakTflops) {
    p.peakTflops = *c.peakTflops;
    p.peakSource = "--peak-tflops";
  } else {
    std::set<std::string> names;
    for (const core::RankRecord& r : file.topology.ranks) {
      if (!r.gpuName.empty()) names.insert(r.gpuName);
    }
    if (names.empty()) {
      throw core::UsageError(
          fmt::format("{} records no GPU (a host-memory run?): give the GPU's peak with --peak-tflops", file.path));
    }
    std::optional<PeakFigure> lowest;
    for (const std::string& name : names) {
      const auto peak = peakTflopsOf(name);
      if (!peak) {
        throw core::UsageError(
            fmt::format("{}: no peak TFLOP/s known for GPU '{}': give it with --peak-tflops", file.path, name));
      }
      if (!lowest || peak->tflops < lowest->tflops) lowest = peak;
    }
    p.peakTflops = lowest->tflops;
    p.gpu = lowest->model;
    p.peakSource = fmt::format("{} dense 16-bit tensor peak (GPU recorded in the file)", lowest->model);
    if (names.size() > 1)
      p.notes.push_back(fmt::format("the file records {} GPU models; the slowest peak is used", names.size()));
  }

}

// One leg of a traffic type priced from the file's busbw curve of its op, scope and type.
LegResult priceLeg(const PredictConfig& c, const results::ResultsFile& file, const TrafficResult& t,
                   const TrafficLeg& leg) {
  LegResult r;
  r.leg = leg;
  // reduced gradients are in the gradient type; everything else in the training type
  const bool gradient = t.traffic.overlappable && leg.op != core::Op::kAllGather;
  const std::string_view scope = answeringScope(file, t.scope);
  const auto curve = curveOf(file.collectives, scope, leg.op, ncclDtypeName(gradient ? c.gradDtype : c.dtype));
  if (!curve) {
    r.reason = whyNotMeasured(file, t.scope, leg.op);
    return r;
  }
  const CurvePoint point = busbwAt(*curve, leg.bytes);
  if (!point.busbw) {
    r.reason = fmt::format("{}: {}", describeCurve(*curve), point.reason);
    return r;
  }
  r.busbw = point.busbw;
  r.seconds = static_cast<double>(t.traffic.messages) * static_cast<double>(leg.bytes) *
              core::traits(leg.op).busbwFactor(t.traffic.groupSize) / (*point.busbw * 1e9);
  r.source = fmt::format("{}{}, {}{}; {}", describeCurve(*curve),
                         scope != t.scope ? fmt::format(" ({})", kIntraFromWorld) : "", point.how,
                         curve->nranks != t.traffic.groupSize
                             ? fmt::format(" (measured on {}-rank groups, used for {}-rank groups)", curve->nranks,
                                           t.traffic.groupSize)
                             : "",
                         file.path);
  return r;
}

// The step time and what follows from it (throughput, days, GPU hours, cost), when every traffic
// type could be priced; otherwise why not.
void setStepTime(const PredictConfig& c, const std::vector<std::string>& unknown, Prediction& p) {
  const int gpus = c.layout.worldSize();
  const double tokensPerStep = static_cast<double>(c.globalBatch) * c.seq;
  if (unknown.empty()) {
    double comm = 0;
    double exposed = 0;
    for (const TrafficResult& t : p.traffic) {
      comm += t.seconds.value_or(0);
      exposed += t.exposedSeconds.value_or(0);
    }
    p.commSeconds = comm;
    p.exposedSeconds = exposed;
    p.stepSeconds = p.computeSeconds + p.bubbleSeconds + exposed;
    p.utilization = p.computeSeconds / *p.stepSeconds;
    // recomputed activations are FLOPs the GPU runs, not model FLOPs (Chowdhery et al. 2022's MFU)
    p.stepMfu = *p.utilization * c.mfu / recomputeFactor(c.model, c.seq, c.recompute);
    p.tokensPerSecond = tokensPerStep / *p.stepSeconds;
    p.days = p.steps * *p.stepSeconds / 86400.0;
    p.gpuHours = p.steps * *p.stepSeconds * gpus / 3600.0;
    if (c.pricePerGpuHour) p.cost = *p.gpuHours * *c.pricePerGpuHour;
  } else {
    p.unknownReason = fmt::format("step time unknown: {}", fmt::join(unknown, "; "));
  }
}

}  // namespace

namespace {

// One traffic type priced leg by leg. A file measured on one node says nothing of the network: its
// world scope is the node's inside (scope_model.h), so groups that span nodes stay unknown on it
// rather than priced at NVLink's rate.
TrafficResult priceTraffic(const PredictConfig& c, const results::ResultsFile& file, Traffic traffic,
                           int ranksPerNode) {
  TrafficResult t;
  t.traffic = std::move(traffic);
  if (!t.traffic.none.empty()) {
    t.status = "none";
    t.reason = t.traffic.none;
    return t;
  }
  t.scope = scopeFor(groupsFor(c.layout, t.traffic.type), ranksPerNode);
  if (t.scope != "intra" && isOneNode(file.topology)) {
    t.status = "unknown";
    t.reason = fmt::format("its groups span nodes, and {} measured one node, whose world scope is the node's inside: "
                           "measure across nodes, or import a log of several nodes",
                           file.path);
    return t;
  }
  double seconds = 0;
  for (const TrafficLeg& leg : t.traffic.legs) {
    LegResult r = priceLeg(c, file, t, leg);
    if (r.seconds) seconds += *r.seconds;
    if (!r.reason.empty() && t.reason.empty()) t.reason = r.reason;
    t.legs.push_back(std::move(r));
  }
  if (!t.reason.empty()) {
    t.status = "unknown";
    return t;
  }
  t.status = "ok";
  applyInterference(file, t);
  t.seconds = seconds * t.interference.value_or(1.0);
  t.exposedSeconds = *t.seconds * (t.traffic.overlappable ? 1.0 - c.overlap : 1.0);
  return t;
}

// The layout's memory per GPU, checked against the GPU's where it is known.
void checkMemory(const PredictConfig& c, const results::ResultsFile& file, Prediction& p) {
  p.memory = memoryPerGpu(c);
  p.memoryModel = memoryModelText(c);
  const GpuMemoryChoice gpu = chooseGpuMemory(c.gpuMemoryBytes, "--gpu-memory", file);
  p.gpuMemoryBytes = gpu.bytes;
  p.gpuMemorySource = gpu.source;
  if (!gpu.contradiction.empty()) p.notes.push_back(gpu.contradiction);
}

// What this file cannot price, in words a planner can act on: the ops a kind of parallelism the
// layout uses needs, and always those of sequence parallelism and ZeRO, the first memory savers.
void noteUnmeasured(const PredictConfig& c, const results::ResultsFile& file, Prediction& p) {
  const std::set<core::Op> measured = measuredOps(file);
  const core::Layout& l = c.layout;
  const bool allReduce = (l.tp > 1 && !c.sequenceParallel) || (l.dp > 1 && c.dpMode == DpMode::kAllReduce);
  const std::vector<std::pair<PricedOn, bool>> used = {{PricedOn::kAllReduce, allReduce},
                                                       {PricedOn::kGatherScatter, true},
                                                       {PricedOn::kSendRecv, l.pp > 1},
                                                       {PricedOn::kAllToAll, l.ep > 1}};
  for (const auto& [what, uses] : used) {
    if (!uses) continue;
    if (std::string need = unmeasuredNeed(what, measured, file.path); !need.empty()) p.notes.push_back(std::move(need));
  }
}

}  // namespace

Prediction predictStep(const PredictConfig& c, const results::ResultsFile& file) {
  Prediction p;
  p.file = file.path;
  p.fileRanks = static_cast<int>(file.topology.ranks.size());
  p.ranksPerNode = ranksPerNodeOf(file.topology);
  if (p.ranksPerNode < 1)
    throw core::UsageError(file.path + ": no rank topology recorded, so groups cannot be placed on nodes");
  const int gpus = c.layout.worldSize();

  setPeak(c, file, p);
  std::vector<std::string> unknown;
  for (Traffic& traffic : trafficOf(c)) {
    TrafficResult t = priceTraffic(c, file, std::move(traffic), p.ranksPerNode);
    if (t.status == "unknown") unknown.push_back(fmt::format("{}: {}", t.traffic.type, t.reason));
    p.traffic.push_back(std::move(t));
  }

  const double tokensPerStep = static_cast<double>(c.globalBatch) * c.seq;
  p.computeSeconds = 6.0 * c.model.activeParams() * tokensPerStep * recomputeFactor(c.model, c.seq, c.recompute) /
                     (gpus * p.peakTflops * 1e12 * c.mfu);
  // 1F1B (Narayanan et al., SC'21): each stage idles (pp - 1) micro-batch slots of its m per step,
  // 1/v of that with v interleaved model chunks per stage
  p.bubbleSeconds = p.computeSeconds * (c.layout.pp - 1) /
                    (static_cast<double>(microBatchesPerStep(c)) * static_cast<double>(c.virtualStages));
  p.steps = c.tokens / tokensPerStep;
  if (c.model.moe()) {
    p.notes.push_back(fmt::format("compute counts the {} active parameters of {} (top-{} of {} experts)",
                                  core::formatCount(c.model.activeParams()), core::formatCount(c.model.params), c.model.topK,
                                  c.model.experts));
  }
  if (gpus > p.fileRanks && p.fileRanks > 0) {
    p.notes.push_back(
        fmt::format("the job has {} GPUs, the file measured {} ranks: groups larger than measured are priced "
                    "at the busbw of the measured groups",
                    gpus, p.fileRanks));
  }
  noteUnmeasured(c, file, p);
  setStepTime(c, unknown, p);
  checkMemory(c, file, p);
  return p;
}

Prediction predict(const PredictConfig& c, const results::ResultsFile& file) {
  Prediction p = predictStep(c, file);
  std::vector<std::string> unknown;
  bool anyKnown = false;
  for (const TrafficResult& t : p.traffic) {
    anyKnown = anyKnown || t.status == "ok";
    if (t.status == "unknown") unknown.push_back(fmt::format("{}: {}", t.traffic.type, t.reason));
  }
  if (!anyKnown && !unknown.empty()) {
    throw core::UsageError(fmt::format("{}: nothing of this layout's traffic can be predicted from it: {}", file.path,
                                       fmt::join(unknown, "; ")));
  }
  return p;
}

}  // namespace fabricmap::orchestrator
