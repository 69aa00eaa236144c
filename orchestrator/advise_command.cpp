// `fabricmap advise FILE.h5 [FILE2.h5 ...] --model M [options] [--json]`: which layouts of a model
// fit the measured GPUs and which runs fastest on the measured fabric (orchestrator/verdicts/advise.h).
#include <fmt/format.h>

#include <boost/program_options.hpp>
#include <iostream>
#include <sstream>

#include "core/error.h"
#include "core/units.h"
#include "orchestrator/command_line.h"
#include "orchestrator/commands.h"
#include "orchestrator/predict_options.h"
#include "orchestrator/verdicts/advise.h"

namespace fabricmap::orchestrator {
namespace {

constexpr const char* kAdviseUsage =
    "usage: fabricmap advise FILE.h5 [FILE2.h5 ...] (--model M | --params N --layers L --hidden H)\n"
    "                        [--gpus N] [--framework megatron|deepspeed|vllm] [--gpu-memory 80G] [options] [--json]";

double gib(double bytes) { return bytes / (1ull << 30); }

std::string number(const std::optional<double>& v, const char* format = "{:.3g}") {
  return v ? fmt::format(fmt::runtime(format), *v) : std::string("?");
}

void printHeader(std::ostream& out, const AdviseConfig& c) {
  out << "# advise: " << adviseSubject(c) << "\n";
  out << fmt::format("# memory per GPU: model states as {} keeps them, activations per Korthikanti et al. 2022, "
                     "{:.1f} GiB reserve\n",
                     frameworkName(c.framework), gib(c.base.reserveBytes));
}

std::string choiceText(const MemoryChoice& m) {
  return fmt::format("{:<22} {:>3} {:>2} {:>3} {:>5} {:<9}", core::formatLayout(m.layout), m.microBatch,
                     m.virtualStages, m.sequenceParallel ? "on" : "-", m.zeroStage, recomputeName(m.recompute));
}

// vLLM: the replicas' layouts, fewest GPUs first, with the sequences each holds.
void printServing(std::ostream& out, const AdviseConfig& c, const Advice& a) {
  out << fmt::format("# {:>2} {:<22} {:>9} {:>10}   (KV cache of {}-token sequences beside the weights)\n", "",
                     "layout", "GiB/GPU", "sequences", c.base.seq);
  int rank = 0;
  for (const Candidate& k : a.best) {
    out << fmt::format("  {:>2} {:<22} {:>9.1f} {:>10}\n", ++rank, core::formatLayout(k.choice.layout),
                       gib(k.memory.total()), k.sequences);
  }
  if (!a.best.empty()) out << fmt::format("# vllm for #1: {}\n", a.best.front().flags);
}

// The ranking: priced layouts only, fastest first, with the step MFU and the compute share.
void printRanked(std::ostream& out, const AdviseConfig& c, const Advice& a) {
  out << fmt::format("# ranked by step time: {} priced layout{}{} (MFU%: step MFU, the model FLOPs utilization of "
                     "the whole step = compute% x --mfu {:.2f}, less recomputed FLOPs; compute%: the step's share in "
                     "compute)\n",
                     a.rankedLayouts, a.rankedLayouts == 1 ? "" : "s",
                     a.best.size() < a.rankedLayouts ? fmt::format(", the fastest {} shown", a.best.size()) : "",
                     c.base.mfu);
  out << fmt::format("# {:>2} {:<22} {:>3} {:>2} {:>3} {:>5} {:<9} {:>7} {:>9} {:>6} {:>8} {:>10} {:>8} {:>10}\n", "",
                     "layout", "mb", "v", "sp", "zero", "recompute", "GiB/GPU", "step s", "MFU%", "compute%",
                     "tokens/s", "days", "cost");
  int rank = 0;
  for (const Candidate& k : a.best) {
    const Prediction& p = *k.prediction;
    out << fmt::format("  {:>2} {} {:>7.1f} {:>9} {:>6.1f} {:>8.1f} {:>10} {:>8} {:>10}\n", ++rank,
                       choiceText(k.choice), gib(k.memory.total()), number(p.stepSeconds), *p.stepMfu * 100,
                       *p.utilization * 100, number(p.tokensPerSecond, "{:.0f}"), number(p.days, "{:.1f}"),
                       p.cost ? fmt::format("{:.0f}", *p.cost) : "-");
  }
  out << fmt::format("# {} for #1: {}\n", frameworkName(c.framework), a.best.front().flags);
}

// What fits but is not priced: said plainly when nothing is, listed without a rank, with why and
// what to measure.
void printUnpriced(std::ostream& out, const Advice& a) {
  if (a.best.empty()) {
    out << "# " << nothingPriced(a) << "\n";
  } else {
    out << fmt::format("# {} more layout{} fit but {} not priced, so not ranked\n", a.unpricedLayouts,
                       a.unpricedLayouts == 1 ? "" : "s", a.unpricedLayouts == 1 ? "is" : "are");
  }
  for (const std::string& why : a.whyUnpriced) out << "#   not priced: " << why << "\n";
  if (a.unpriced.empty()) return;
  out << fmt::format("# fits by memory only (unranked, in layout order: not a recommendation){}\n",
                     a.unpriced.size() < a.unpricedLayouts
                         ? fmt::format(", {} of {} shown", a.unpriced.size(), a.unpricedLayouts)
                         : "");
  out << fmt::format("#    {:<22} {:>3} {:>2} {:>3} {:>5} {:<9} {:>7}\n", "layout", "mb", "v", "sp", "zero", "recompute",
                     "GiB/GPU");
  for (const Candidate& k : a.unpriced) {
    out << fmt::format("     {} {:>7.1f}\n", choiceText(k.choice), gib(k.memory.total()));
  }
}

void printAdvice(std::ostream& out, const AdviseConfig& c, const Advice& a) {
  out << fmt::format("#\n# file {}: {} GPUs, {} per node, {:.1f} GiB each ({})\n", a.file, a.gpus, a.gpusPerNode,
                     gib(a.gpuMemoryBytes), a.memorySource);
  out << fmt::format("# {} layouts and memory choices considered, {} fit\n", a.considered, a.fitting);
  for (const std::string& note : a.notes) out << "# note: " << note << "\n";
  if (!a.doesNotFit.empty()) {
    out << "# does not fit: " << a.doesNotFit << "\n";
    return;
  }
  if (c.framework == Framework::kVllm) return printServing(out, c, a);
  if (a.optionsUnmeasured > 0) {
    out << fmt::format("# searched without sequence parallelism and ZeRO (the distributed optimizer): {} of the "
                       "fitting choices need all_gather and reduce_scatter, which the file did not measure\n",
                       a.optionsUnmeasured);
  }
  if (!a.best.empty()) printRanked(out, c, a);
  if (a.unpricedLayouts > 0) printUnpriced(out, a);
  for (const std::string& more : a.toPriceMore) out << "# to price more: " << more << "\n";
  if (a.storage) {
    for (const std::string& sentence : storageSentences(c, *a.storage)) out << "# storage: " << sentence << "\n";
  }
}

void printProviders(std::ostream& out, const AdviseConfig& c, const std::vector<Advice>& advice) {
  out << fmt::format("#\n# best layout per file, {} first\n", c.base.pricePerGpuHour ? "cheapest" : "fewest GPU-hours");
  for (const Advice* a : providersRanked(advice)) {
    if (a->best.empty()) {
      out << fmt::format("  {:<40} {}\n", a->file, a->doesNotFit.empty() ? "no priced layout" : "does not fit");
      continue;
    }
    const Candidate& k = a->best.front();
    const Prediction& p = *k.prediction;
    out << fmt::format("  {:<40} {:<22} step {} s, {} days, {} GPU-hours{}\n", a->file,
                       core::formatLayout(k.choice.layout), number(p.stepSeconds), number(p.days, "{:.1f}"),
                       number(p.gpuHours, "{:.0f}"), p.cost ? fmt::format(", cost {:.0f}", *p.cost) : "");
  }
}

}  // namespace

void addAdviseOptions(boost::program_options::options_description& opts) {
  namespace po = boost::program_options;
  addModelOptions(opts);
  addGpuMemoryOptions(opts);
  // clang-format off
  opts.add_options()
    ("framework", po::value<std::string>()->default_value("megatron"),
     "megatron (distributed optimizer, sequence parallelism, selective/full recomputation), deepspeed (ZeRO "
     "0-3, full recomputation) or vllm (serving: weights and KV cache)")
    ("gpus", po::value<int>(), "lay the model out on this many GPUs (default: every rank the file measured)")
    ("top", po::value<int>()->default_value(10), "layouts shown per file")
    ("bytes-per-token", po::value<double>()->default_value(4), "tokenized data read per token (int32 ids: 4, uint16: 2), "
                                                               "against the file's storage feed");
  // clang-format on
}

AdviseConfig adviseConfigFrom(const boost::program_options::variables_map& vm) {
  AdviseConfig c;
  c.base = modelConfigFrom(vm);
  c.framework = parseFramework(vm["framework"].as<std::string>());
  if (vm.count("gpus")) {
    c.gpus = vm["gpus"].as<int>();
    if (c.gpus < 1) throw core::UsageError("--gpus must be at least 1");
  }
  readGpuMemoryOptions(vm, c.base);
  c.top = vm["top"].as<int>();
  c.bytesPerToken = vm["bytes-per-token"].as<double>();
  if (!(c.bytesPerToken > 0)) throw core::UsageError("--bytes-per-token must be positive");
  if (c.top < 1) throw core::UsageError("--top must be at least 1");
  return c;
}

int adviseCommand(const std::vector<std::string>& args) {
  namespace po = boost::program_options;
  po::options_description opts("fabricmap advise options");
  opts.add_options()("help,h", "show this help")("json", "print JSON (documented in README.md)");
  addAdviseOptions(opts);
  opts.add_options()("file", po::value<std::vector<std::string>>(), "results files");
  po::positional_options_description positional;
  positional.add("file", -1);
  const po::variables_map vm = parseCommandLine(args, opts, positional, kAdviseUsage);
  if (vm.count("help")) {
    std::cout << kAdviseUsage << "\n\n" << opts;
    return 0;
  }
  if (!vm.count("file")) throw core::UsageError(fmt::format("no results file given ({})", kAdviseUsage));
  const AdviseConfig config = adviseConfigFrom(vm);
  std::vector<Advice> advice;
  for (const std::string& path : vm["file"].as<std::vector<std::string>>()) {
    advice.push_back(advise(config, results::readResults(path)));
  }
  std::ostringstream out;
  if (vm.count("json")) {
    out << adviceToJson(config, advice).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
  } else {
    printHeader(out, config);
    for (const Advice& a : advice) printAdvice(out, config, a);
    if (advice.size() > 1) printProviders(out, config, advice);
  }
  std::cout << out.str();
  return 0;
}

}  // namespace fabricmap::orchestrator
