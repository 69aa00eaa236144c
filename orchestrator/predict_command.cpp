// `fabricmap predict FILE.h5 [FILE2.h5 ...] --model M --tp T --pp P --dp D [--json]`: a training
// step's communication, time, utilization and cost from the bandwidth each file measured; several
// files (providers) side by side.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <cmath>
#include <iostream>
#include <sstream>

#include "core/error.h"
#include "core/units.h"
#include "orchestrator/commands.h"
#include "orchestrator/command_line.h"
#include "orchestrator/verdicts/memory_model.h"
#include "orchestrator/verdicts/predict.h"
#include "orchestrator/predict_options.h"
#include "results/h5_reader.h"

namespace fabricmap::orchestrator {
namespace {

constexpr const char* kPredictUsage =
    "usage: fabricmap predict FILE.h5 [FILE2.h5 ...] (--model M | --params N --layers L --hidden H)\n"
    "                         [--tp T --pp P --dp D --ep E | --layout tp=T,pp=P,dp=D,ep=E] [options] [--json]";

std::string presetNames() {
  std::vector<std::string> names;
  for (const ModelPreset& p : modelPresets()) names.push_back(p.model.name);
  return fmt::format("{}", fmt::join(names, ", "));
}

std::string number(double v) { return std::fabs(v) >= 1e4 ? fmt::format("{:.0f}", v) : fmt::format("{:.4g}", v); }
std::string number(const std::optional<double>& v) { return v ? number(*v) : "unknown"; }

std::string bytesOf(double b) {
  return b < 9.2e18 ? core::formatBytes(static_cast<std::uint64_t>(std::llround(b))) : fmt::format("{:.3g} B", b);
}

std::string opsOf(const Traffic& t) {
  std::vector<std::string_view> names;
  for (const TrafficLeg& leg : t.legs) names.push_back(core::traits(leg.op).name);
  return names.empty() ? "-" : fmt::format("{}", fmt::join(names, "+"));
}

// a figure per leg, "a / b" for a pair of ops
template <typename F>
std::string perLeg(const TrafficResult& t, F figure) {
  std::vector<std::string> figures;
  for (const LegResult& leg : t.legs) figures.push_back(figure(leg));
  return figures.empty() ? "-" : fmt::format("{}", fmt::join(figures, " / "));
}

void printHeader(std::ostream& out, const PredictConfig& c) {
  const ModelSpec& m = c.model;
  out << fmt::format(
      "# fabricmap predict: {}, {} parameters ({} layers, hidden {}{}{}), {}, sequence {}\n", m.name, core::formatCount(m.params),
      m.layers, m.hidden, m.heads > 0 ? fmt::format(", {} heads", m.heads) : "",
      m.moe() ? fmt::format(", {} experts top-{}, {} active", m.experts, m.topK, core::formatCount(m.activeParams())) : "", c.dtype,
      c.seq);
  out << fmt::format("# model figures: {}\n", c.modelSource);
  out << fmt::format(
      "# layout {}: {} GPUs; micro-batch {}, global batch {} = {} micro-batches per data-parallel rank, "
      "{} tokens per step{}\n",
      core::formatLayout(c.layout), c.layout.worldSize(), c.microBatch, c.globalBatch, microBatchesPerStep(c),
      core::formatCount(static_cast<double>(c.globalBatch) * c.seq), c.sequenceParallel ? ", sequence parallel" : "");
  out << fmt::format("# gradients: {} of {} in {} buckets, {:.0f}% of it hidden behind compute (--overlap)\n",
                     c.dpMode == DpMode::kZero    ? "reduce_scatter + all_gather (ZeRO)"
                     : c.dpMode == DpMode::kZero3 ? "reduce_scatter + 2 x all_gather (ZeRO-3)"
                                                  : "all_reduce", c.gradDtype,
                     core::formatBytes(c.bucketBytes), c.overlap * 100);
}

double gib(double bytes) { return bytes / (1ull << 30); }

// The memory check, first thing under the file: a layout that does not fit says so before any
// figure of it is read.
void printMemory(std::ostream& out, const Prediction& p) {
  const MemoryEstimate& m = p.memory;
  const std::string parts =
      fmt::format("weights {:.1f} + gradients {:.1f} + optimizer {:.1f} + activations {:.1f} + reserve {:.1f} GiB",
                  gib(m.weights), gib(m.gradients), gib(m.optimizer), gib(m.activations), gib(m.reserve));
  const std::optional<bool> fits = p.fitsMemory();
  if (!fits) {
    out << fmt::format("# memory per GPU: {:.1f} GiB needed, not checked: the GPU's memory is unknown (a host-memory "
                       "run, or a log whose GPU names do not tell it; give --gpu-memory 80G)\n",
                       gib(m.total()));
  } else if (*fits) {
    out << fmt::format("# memory per GPU: {:.1f} GiB needed of {:.1f} GiB ({}): fits\n", gib(m.total()),
                       gib(*p.gpuMemoryBytes), p.gpuMemorySource);
  } else {
    out << fmt::format("# {}: the step, days and cost below are of a layout that cannot run\n", p.doesNotFit());
    out << "#   less memory: --recompute selective|full, --sequence-parallel, --dp-mode zero, more --tp or --pp; "
           "fabricmap advise searches them\n";
  }
  out << fmt::format("#   {} ({})\n", parts, p.memoryModel);
}

// The step's headline: the step MFU and the compute share, each named for what it is.
void printUtilization(std::ostream& out, const PredictConfig& c, const Prediction& p) {
  const double recomputed = recomputeFactor(c.model, c.seq, c.recompute);
  out << fmt::format("#   step MFU         {:>11.1f} %   model FLOPs utilization of the whole step: compute share "
                     "{:.1f} % x --mfu {:.2f}{}\n",
                     *p.stepMfu * 100, *p.utilization * 100, c.mfu,
                     recomputed != 1 ? fmt::format(" / {:.3g} (recomputed FLOPs are not model FLOPs)", recomputed) : "");
  out << fmt::format("#   compute share    {:>11.1f} %   of the step spent in the model's compute (the rest: {}exposed "
                     "communication); not an MFU\n",
                     *p.utilization * 100, c.layout.pp > 1 ? "pipeline bubble, " : "");
}

void printOne(std::ostream& out, const PredictConfig& c, const Prediction& p) {
  out << fmt::format("#\n# file {}: {} ranks, {} per node; peak {} TFLOP/s ({}), MFU of the compute alone {:.2f}\n",
                     p.file, p.fileRanks, p.ranksPerNode, number(p.peakTflops), p.peakSource, c.mfu);
  printMemory(out, p);
  out << "#\n";
  out << fmt::format("# {:<7} {:<26} {:>5} {:>6} {:>21} {:>10} {:>11} {:>15} {:>11} {:>11}\n", "traffic", "op", "group",
                     "scope", "bytes/message", "msgs/step", "bytes/step", "busbw (GB/s)", "time (s)", "exposed (s)");
  for (const TrafficResult& t : p.traffic) {
    if (t.status == "none") {
      out << fmt::format("  {:<7} none: {}\n", t.traffic.type, t.reason);
      continue;
    }
    double perStep = 0;
    for (const TrafficLeg& leg : t.traffic.legs)
      perStep += static_cast<double>(leg.bytes) * static_cast<double>(t.traffic.messages);
    out << fmt::format("  {:<7} {:<26} {:>5} {:>6} {:>21} {:>10} {:>11} {:>15} {:>11} {:>11}\n", t.traffic.type,
                       opsOf(t.traffic), t.traffic.groupSize, t.scope,
                       perLeg(t, [](const LegResult& l) { return core::formatBytes(l.leg.bytes); }), t.traffic.messages,
                       bytesOf(perStep),
                       perLeg(t, [](const LegResult& l) { return l.busbw ? fmt::format("{:.2f}", *l.busbw) : "?"; }),
                       number(t.seconds), number(t.exposedSeconds));
  }
  out << "#\n# how each figure was obtained:\n";
  for (const TrafficResult& t : p.traffic) {
    if (t.status == "none") continue;
    out << fmt::format("#   {}: {}\n", t.traffic.type, t.traffic.what);
    for (const LegResult& leg : t.legs) {
      out << fmt::format("#     {} busbw: {}\n", core::traits(leg.leg.op).name,
                         leg.busbw ? leg.source : "unknown: " + leg.reason);
    }
    if (t.interference) out << fmt::format("#     interference {}\n", t.interferenceSource);
  }
  out << "#\n# summary\n";
  const double recomputed = recomputeFactor(c.model, c.seq, c.recompute);
  out << fmt::format(
      "#   compute          {:>12} s   6 x {} params x {} tokens{} / ({} GPUs x {} TFLOP/s x MFU {:.2f})\n",
      number(p.computeSeconds), core::formatCount(c.model.activeParams()), core::formatCount(static_cast<double>(c.globalBatch) * c.seq),
      recomputed != 1 ? fmt::format(" x {:.3g} ({} recomputation)", recomputed, recomputeName(c.recompute)) : "",
      c.layout.worldSize(), number(p.peakTflops), c.mfu);
  if (c.layout.pp > 1) {
    out << fmt::format("#   pipeline bubble  {:>12} s   compute x (pp - 1) / (micro-batches{}) = {} / ({}{}) (1F1B)\n",
                       number(p.bubbleSeconds), c.virtualStages > 1 ? " x virtual stages" : "", c.layout.pp - 1,
                       microBatchesPerStep(c), c.virtualStages > 1 ? fmt::format(" x {}", c.virtualStages) : "");
  }
  if (!p.stepSeconds) {
    out << fmt::format("#   step time             unknown   {}\n", p.unknownReason);
  } else {
    std::vector<std::string> parts;
    for (const TrafficResult& t : p.traffic) {
      if (t.status != "ok") continue;
      parts.push_back(
          fmt::format("{} {}{}", t.traffic.type, number(t.seconds),
                      t.traffic.overlappable && c.overlap > 0 ? fmt::format(" x (1 - {:.2f})", c.overlap) : ""));
    }
    out << fmt::format("#   communication    {:>12} s   exposed {} s{}{}\n", number(p.commSeconds),
                       number(p.exposedSeconds), parts.empty() ? "" : ": ", fmt::join(parts, " + "));
    out << fmt::format("#   step time        {:>12} s   compute + {}exposed communication\n", number(p.stepSeconds),
                       c.layout.pp > 1 ? "pipeline bubble + " : "");
    printUtilization(out, c, p);
    out << fmt::format("#   throughput       {:>12} tokens/s\n", number(p.tokensPerSecond));
    out << fmt::format(
        "#   to train {} tokens: {} steps, {} days, {} GPU-hours{}{}\n", core::formatCount(c.tokens), number(p.steps), number(p.days),
        number(p.gpuHours),
        p.cost ? fmt::format(", cost {} at {}/GPU-hour", number(p.cost), number(*c.pricePerGpuHour)) : "",
        p.fitsMemory() == false ? " (NOT ACHIEVABLE: the layout does not fit the GPU's memory)" : "");
  }
  for (const std::string& note : p.notes) out << "# note: " << note << "\n";
}

// Several files: a column per file, a row per figure; sources and reasons after the table.
using Rows = std::vector<std::pair<std::string, std::vector<std::string>>>;

// predict's side-by-side rows: a label and one cell per file.
Rows sideBySideRows(const PredictConfig& c, const std::vector<Prediction>& ps) {
  Rows rows;
  const auto row = [&](std::string label, auto figure) {
    std::vector<std::string> cells;
    for (const Prediction& p : ps) cells.push_back(figure(p));
    rows.emplace_back(std::move(label), std::move(cells));
  };
  row("ranks per node", [](const Prediction& p) { return fmt::format("{}", p.ranksPerNode); });
  row("peak TFLOP/s", [](const Prediction& p) { return number(p.peakTflops); });
  for (std::size_t i = 0; i < ps.front().traffic.size(); ++i) {
    const TrafficResult& first = ps.front().traffic[i];
    const std::string type = first.traffic.type;
    if (first.status == "none") {
      row(type, [](const Prediction&) { return std::string("none"); });
      continue;
    }
    row(fmt::format("{} {} ({} x {})", type, opsOf(first.traffic), first.traffic.messages,
                    perLeg(first, [](const LegResult& l) { return core::formatBytes(l.leg.bytes); })),
        [](const Prediction&) { return std::string(); });
    row("  scope", [i](const Prediction& p) { return p.traffic[i].scope; });
    row("  busbw GB/s", [i](const Prediction& p) {
      return perLeg(p.traffic[i], [](const LegResult& l) { return l.busbw ? fmt::format("{:.2f}", *l.busbw) : "?"; });
    });
    row("  time s", [i](const Prediction& p) { return number(p.traffic[i].seconds); });
  }
  row("compute s", [](const Prediction& p) { return number(p.computeSeconds); });
  if (c.layout.pp > 1) row("pipeline bubble s", [](const Prediction& p) { return number(p.bubbleSeconds); });
  row("communication exposed s", [](const Prediction& p) { return number(p.exposedSeconds); });
  row("step time s", [](const Prediction& p) { return number(p.stepSeconds); });
  row("step MFU %", [](const Prediction& p) {
    return p.stepMfu ? fmt::format("{:.1f}", *p.stepMfu * 100) : std::string("unknown");
  });
  row("compute share of step %", [](const Prediction& p) {
    return p.utilization ? fmt::format("{:.1f}", *p.utilization * 100) : std::string("unknown");
  });
  row("tokens/s", [](const Prediction& p) { return number(p.tokensPerSecond); });
  // a layout that does not fit has no achievable days or cost: its cells say so
  const auto achievable = [](const Prediction& p, const std::optional<double>& v) {
    return number(v) + (p.fitsMemory() == false ? " (does not fit)" : "");
  };
  row(fmt::format("days for {} tokens", core::formatCount(c.tokens)),
      [&](const Prediction& p) { return achievable(p, p.days); });
  row("GPU-hours", [&](const Prediction& p) { return achievable(p, p.gpuHours); });
  if (c.pricePerGpuHour) row("cost", [&](const Prediction& p) { return achievable(p, p.cost); });
  row("memory per GPU GiB", [](const Prediction& p) { return fmt::format("{:.1f}", gib(p.memory.total())); });
  row("fits GPU memory", [](const Prediction& p) {
    const std::optional<bool> fits = p.fitsMemory();
    return !fits ? std::string("not checked") : *fits ? fmt::format("yes, of {:.1f} GiB", gib(*p.gpuMemoryBytes))
                                                      : fmt::format("NO, of {:.1f} GiB", gib(*p.gpuMemoryBytes));
  });

  return rows;
}

// How each file's figures were obtained, below the table.
void printSources(std::ostream& out, const std::vector<Prediction>& ps) {
  out << "#\n# how each figure was obtained:\n";
  for (const Prediction& p : ps) {
    out << fmt::format("#   {}: peak {} TFLOP/s ({})\n", p.file, number(p.peakTflops), p.peakSource);
    if (!p.doesNotFit().empty()) out << fmt::format("#     {}\n", p.doesNotFit());
    out << fmt::format("#     memory per GPU: {} ({})\n",
                       p.gpuMemoryBytes ? "of " + p.gpuMemorySource : std::string("not checked, the GPU's memory unknown"),
                       p.memoryModel);
    for (const TrafficResult& t : p.traffic) {
      if (t.status == "none") continue;
      for (const LegResult& leg : t.legs) {
        out << fmt::format("#     {} {}: {}\n", t.traffic.type, core::traits(leg.leg.op).name,
                           leg.busbw ? leg.source : "unknown: " + leg.reason);
      }
      if (t.interference) out << fmt::format("#     {} interference {}\n", t.traffic.type, t.interferenceSource);
    }
    if (!p.unknownReason.empty()) out << fmt::format("#     {}\n", p.unknownReason);
    for (const std::string& note : p.notes) out << "#     note: " << note << "\n";
  }
}

void printSideBySide(std::ostream& out, const PredictConfig& c, const std::vector<Prediction>& ps) {
  const Rows rows = sideBySideRows(c, ps);
  std::size_t labelWidth = 0;
  for (const auto& [label, cells] : rows) labelWidth = std::max(labelWidth, label.size());
  std::vector<std::size_t> widths;
  for (std::size_t f = 0; f < ps.size(); ++f) {
    std::size_t w = ps[f].file.size();
    for (const auto& [label, cells] : rows) w = std::max(w, cells[f].size());
    widths.push_back(w);
  }
  out << fmt::format("#\n# {:<{}}", "", labelWidth);
  for (std::size_t f = 0; f < ps.size(); ++f) out << fmt::format("  {:>{}}", ps[f].file, widths[f]);
  out << "\n";
  for (const auto& [label, cells] : rows) {
    out << fmt::format("  {:<{}}", label, labelWidth);
    for (std::size_t f = 0; f < ps.size(); ++f) out << fmt::format("  {:>{}}", cells[f], widths[f]);
    out << "\n";
  }
  printSources(out, ps);
}

}  // namespace

void addModelOptions(boost::program_options::options_description& opts) {
  namespace po = boost::program_options;
  // clang-format off
  opts.add_options()
    ("model", po::value<std::string>(),
     "model preset: llama-7b, llama-13b, llama-70b, gpt3-175b, llama-405b, mixtral-8x7b")
    ("params", po::value<std::string>(), "custom model: parameters (7B, 6.7e9)")
    ("layers", po::value<int>(), "custom model: transformer layers")
    ("hidden", po::value<int>(), "custom model: hidden size")
    ("heads", po::value<int>(), "custom model: attention heads (checked against --tp)")
    ("ffn", po::value<int>(), "custom MoE model: each expert's FFN size (SwiGLU: 3 x hidden x ffn parameters)")
    ("experts", po::value<int>(), "custom MoE model: experts per layer (every layer MoE)")
    ("top-k", po::value<int>(), "custom MoE model: experts per token")
    ("seq", po::value<int>(), "sequence length (default: the preset's, else 4096)")
    ("global-batch", po::value<int>(), "sequences per step (default: the preset's, else 1024)")
    ("dtype", po::value<std::string>()->default_value("bf16"), "activations and parameters: bf16, fp16, fp32")
    ("grad-dtype", po::value<std::string>(), "gradients as reduced (default --dtype; Megatron-LM reduces bf16 "
                                              "training's gradients in fp32 unless --grad-reduce-in-bf16)")
    ("bucket-bytes", po::value<std::string>()->default_value("25M"), "gradient bucket size (K/M/G = 1024^n)")
    ("overlap", po::value<double>()->default_value(0.0), "share of DP communication hidden behind compute, 0..1")
    ("mfu", po::value<double>()->default_value(0.4), "FLOPs utilization of the compute alone (recomputed FLOPs "
                                                      "included), 0..1; the pipeline bubble and exposed communication "
                                                      "are added to it, and the step MFU is reported")
    ("peak-tflops", po::value<double>(), "peak dense TFLOP/s per GPU (default: the GPU model recorded in the file)")
    ("price-per-gpu-hour", po::value<double>(), "price of one GPU-hour: the training cost is reported")
    ("tokens", po::value<std::string>()->default_value("1T"), "tokens to train (1T, 300B, 2e12)");
  // clang-format on
}

void addGpuMemoryOptions(boost::program_options::options_description& opts) {
  namespace po = boost::program_options;
  // clang-format off
  opts.add_options()
    ("gpu-memory", po::value<std::string>(), "memory per GPU (80G; default: the smallest NVML total in the file, or "
                                             "what an imported log's GPU names tell)")
    ("reserve", po::value<std::string>()->default_value("4G"), "memory per GPU kept for CUDA, NCCL and the allocator");
  // clang-format on
}

void readGpuMemoryOptions(const boost::program_options::variables_map& vm, PredictConfig& c) {
  if (vm.count("gpu-memory")) {
    c.gpuMemoryBytes = static_cast<double>(core::parseBytes(vm["gpu-memory"].as<std::string>(), "--gpu-memory"));
    if (*c.gpuMemoryBytes <= 0) throw core::UsageError("--gpu-memory must be positive");
  }
  if (vm.count("reserve")) c.reserveBytes = static_cast<double>(core::parseBytes(vm["reserve"].as<std::string>(), "--reserve"));
}

void addPredictOptions(boost::program_options::options_description& opts) {
  namespace po = boost::program_options;
  addModelOptions(opts);
  addGpuMemoryOptions(opts);
  // clang-format off
  opts.add_options()
    ("micro-batch", po::value<int>(), "sequences per micro-batch (default 1)")
    ("tp", po::value<int>(), "tensor-parallel size (default 1)")
    ("pp", po::value<int>(), "pipeline-parallel size (default 1)")
    ("dp", po::value<int>(), "data-parallel size (default 1)")
    ("ep", po::value<int>(), "expert-parallel size, dividing dp (default 1)")
    ("layout", po::value<std::string>(), "all four at once: tp=T,pp=P,dp=D[,ep=E]")
    ("sequence-parallel", "Megatron sequence parallelism: TP all_gather + reduce_scatter instead of all_reduce")
    ("dp-mode", po::value<std::string>()->default_value("allreduce"),
     "allreduce (DDP), zero (distributed optimizer, ZeRO-1/2: reduce_scatter + all_gather) or zero3 "
     "(parameters all-gathered again for the backward pass)")
    ("virtual-stages", po::value<int>()->default_value(1), "interleaved 1F1B: model chunks per pipeline stage (v); "
                                                           "the bubble shrinks v times, PP messages grow v times")
    ("recompute", po::value<std::string>()->default_value("none"),
     "activation recomputation: none, selective (the attention's softmax and dropout; what FlashAttention-style "
     "kernels keep) or full (each layer's forward again: compute x 4/3); checked against the GPU memory");
  // clang-format on
}

bool predictionRequested(const boost::program_options::variables_map& vm) {
  return vm.count("model") || vm.count("params") || vm.count("layers") || vm.count("hidden");
}

PredictConfig modelConfigFrom(const boost::program_options::variables_map& vm) {
  PredictConfig c;
  const bool explicitModel = vm.count("params") || vm.count("layers") || vm.count("hidden");
  if (vm.count("model")) {
    if (explicitModel) throw core::UsageError("give --model or --params/--layers/--hidden, not both");
    const std::string name = vm["model"].as<std::string>();
    const auto preset = findPreset(name);
    if (!preset) throw core::UsageError(fmt::format("unknown model '{}' (presets: {})", name, presetNames()));
    for (const char* arch : {"heads", "ffn", "experts", "top-k"}) {
      if (vm.count(arch))
        throw core::UsageError(fmt::format("--{} describes a custom model; {} is a preset", arch, name));
    }
    c.model = preset->model;
    c.modelSource = std::string(preset->source);
    c.seq = preset->seq;
    c.globalBatch = preset->globalBatch;
  } else {
    if (!vm.count("params") || !vm.count("layers") || !vm.count("hidden")) {
      throw core::UsageError(
          fmt::format("no model: give --model ({}) or --params, --layers and --hidden", presetNames()));
    }
    c.model.name = "custom";
    c.modelSource = "--params, --layers, --hidden";
    c.model.params = parseCount(vm["params"].as<std::string>(), "--params");
    c.model.layers = vm["layers"].as<int>();
    c.model.hidden = vm["hidden"].as<int>();
    if (vm.count("heads")) c.model.heads = vm["heads"].as<int>();
    if (vm.count("ffn")) c.model.ffn = vm["ffn"].as<int>();
    if (vm.count("experts")) c.model.experts = vm["experts"].as<int>();
    if (vm.count("top-k")) c.model.topK = vm["top-k"].as<int>();
    if (vm.count("heads") && c.model.heads < 1) throw core::UsageError("--heads must be positive");
    if (vm.count("ffn") && c.model.ffn < 1) throw core::UsageError("--ffn must be positive");
  }
  if (vm.count("seq")) c.seq = vm["seq"].as<int>();
  if (vm.count("global-batch")) c.globalBatch = vm["global-batch"].as<int>();
  c.dtype = vm["dtype"].as<std::string>();
  c.gradDtype = vm.count("grad-dtype") ? vm["grad-dtype"].as<std::string>() : c.dtype;
  c.bucketBytes = core::parseBytes(vm["bucket-bytes"].as<std::string>(), "--bucket-bytes");
  c.overlap = vm["overlap"].as<double>();
  c.mfu = vm["mfu"].as<double>();
  if (vm.count("peak-tflops")) c.peakTflops = vm["peak-tflops"].as<double>();
  c.tokens = parseCount(vm["tokens"].as<std::string>(), "--tokens");
  if (vm.count("price-per-gpu-hour")) c.pricePerGpuHour = vm["price-per-gpu-hour"].as<double>();
  validate(c);
  return c;
}

PredictConfig predictConfigFrom(const boost::program_options::variables_map& vm) {
  PredictConfig c = modelConfigFrom(vm);
  if (vm.count("micro-batch")) c.microBatch = vm["micro-batch"].as<int>();

  const bool dims = vm.count("tp") || vm.count("pp") || vm.count("dp") || vm.count("ep");
  if (vm.count("layout")) {
    if (dims) throw core::UsageError("give --layout or --tp/--pp/--dp/--ep, not both");
    c.layout = core::parseLayout(vm["layout"].as<std::string>());
  } else {
    if (vm.count("tp")) c.layout.tp = vm["tp"].as<int>();
    if (vm.count("pp")) c.layout.pp = vm["pp"].as<int>();
    if (vm.count("dp")) c.layout.dp = vm["dp"].as<int>();
    if (vm.count("ep")) c.layout.ep = vm["ep"].as<int>();
  }
  c.sequenceParallel = vm.count("sequence-parallel") > 0;
  const std::string mode = vm["dp-mode"].as<std::string>();
  if (mode == "allreduce")
    c.dpMode = DpMode::kAllReduce;
  else if (mode == "zero")
    c.dpMode = DpMode::kZero;
  else if (mode == "zero3")
    c.dpMode = DpMode::kZero3;
  else
    throw core::UsageError(fmt::format("unknown --dp-mode '{}' (allreduce, zero or zero3)", mode));
  c.virtualStages = vm["virtual-stages"].as<int>();
  c.recompute = parseRecompute(vm["recompute"].as<std::string>());
  readGpuMemoryOptions(vm, c);
  validate(c);
  return c;
}

int predictCommand(const std::vector<std::string>& args) {
  namespace po = boost::program_options;
  po::options_description opts("fabricmap predict options");
  opts.add_options()("help,h", "show this help")("json", "print JSON (documented in README.md)");
  addPredictOptions(opts);
  opts.add_options()("file", po::value<std::vector<std::string>>(), "results files");
  po::positional_options_description positional;
  positional.add("file", -1);
  const po::variables_map vm = parseCommandLine(args, opts, positional, kPredictUsage);
  if (vm.count("help")) {
    std::cout << kPredictUsage << "\n\n" << opts;
    return 0;
  }
  if (!vm.count("file")) throw core::UsageError(fmt::format("no results file given ({})", kPredictUsage));
  const PredictConfig config = predictConfigFrom(vm);
  std::vector<Prediction> predictions;
  for (const std::string& path : vm["file"].as<std::vector<std::string>>()) {
    predictions.push_back(predict(config, results::readResults(path)));
  }
  std::ostringstream out;
  if (vm.count("json")) {
    out << predictionsToJson(config, predictions).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
  } else {
    printHeader(out, config);
    if (predictions.size() == 1)
      printOne(out, config, predictions.front());
    else
      printSideBySide(out, config, predictions);
  }
  std::cout << out.str();
  return 0;
}

}  // namespace fabricmap::orchestrator
