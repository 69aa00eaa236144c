// `fabricmap run` options: Boost.Program_options with nccl-tests' short aliases.
#include "orchestrator/run/run_config.h"
#include "orchestrator/run/run_options.h"

#include <algorithm>
#include <boost/program_options.hpp>
#include <charconv>
#include <cmath>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/layout.h"
#include "orchestrator/commands.h"
#include "worker/backends.h"
#include "core/units.h"

namespace fabricmap::orchestrator {
namespace po = boost::program_options;
namespace {

std::vector<std::string> splitList(const std::string& text) {
  std::vector<std::string> items;
  std::string item;
  std::istringstream in(text);
  while (std::getline(in, item, ',')) {
    if (!item.empty()) items.push_back(item);
  }
  return items;
}

template <class T, class Parse, class All>
std::vector<T> parseList(const std::string& text, const char* what, Parse parse, All all) {
  std::vector<T> out;
  for (const std::string& item : splitList(text)) {
    if (item == "all") {
      for (const auto& v : all()) out.push_back(v);
      continue;
    }
    auto v = parse(item);
    if (!v) throw core::UsageError(fmt::format("unknown {} '{}'", what, item));
    out.push_back(*v);
  }
  if (out.empty()) throw core::UsageError(fmt::format("no {} given", what));
  // keep first occurrences only
  std::vector<T> unique;
  for (const T& v : out) {
    if (std::find(unique.begin(), unique.end(), v) == unique.end()) unique.push_back(v);
  }
  return unique;
}

std::vector<core::RedOp> parseRedOps(const std::string& text) {
  return parseList<core::RedOp>(text, "reduction op", core::parseRedOp,
                                [] { return core::allRedOps(); });
}

bool isRedOpList(const std::string& text) {
  const auto items = splitList(text);
  if (items.empty()) return false;
  for (const auto& item : items) {
    if (item != "all" && !core::parseRedOp(item)) return false;
  }
  return true;
}

std::uint64_t parsePositiveInteger(const std::string& text, const char* what) {
  std::uint64_t v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size()) {
    throw core::UsageError(fmt::format("{} must be an integer > 1 (got '{}')", what, text));
  }
  return v;
}

// The training pattern's and the scaling sweep's options (sizes the backend does not set).
void parseTraining(const po::variables_map& vm, const Suite& suite, RunConfig& c) {
  const auto positive = [&](const char* name, int fallback) {
    const int v = vm.count(name) ? vm[name].as<int>() : fallback;
    if (v < 1) throw core::UsageError(fmt::format("--{} must be at least 1 (got {})", name, v));
    return v;
  };
  const bool trainingOption = vm.count("layout") + vm.count("strict-layout") + vm.count("sequence-parallel") > 0;
  if (vm.count("layout")) {
    c.layout = vm["layout"].as<std::string>();
    c.layout = core::formatLayout(core::parseLayout(c.layout));  // normalized; throws on bad input
  }
  if (trainingOption && !c.training) {
    throw core::UsageError("--layout, --strict-layout and --sequence-parallel shape the training pattern: add "
                           "--patterns training");
  }
  c.strictLayout = vm.count("strict-layout") > 0;
  c.microBatch = positive("micro-batch", 1);
  c.seqLen = positive("seq-len", suite.seqLen);
  c.seqLenGiven = vm.count("seq-len") > 0;
  c.hidden = positive("hidden", suite.hidden);
  c.hiddenGiven = vm.count("hidden") > 0;
  c.layers = positive("layers", 2);
  c.topK = positive("top-k", 2);
  c.sequenceParallel = vm.count("sequence-parallel") > 0;
  const std::string dpMode = vm["dp-mode"].as<std::string>();
  if (dpMode != "allreduce" && dpMode != "zero") {
    throw core::UsageError("unknown --dp-mode '" + dpMode + "' (allreduce or zero)");
  }
  c.zero = dpMode == "zero";
  c.bucketBytes = core::parseBytes(vm["bucket-bytes"].as<std::string>(), "--bucket-bytes");
  if (c.bucketBytes < 1024) throw core::UsageError("--bucket-bytes must be at least 1K");
  const auto dtype = core::parseDType(vm["train-dtype"].as<std::string>());
  if (!dtype) throw core::UsageError("unknown --train-dtype '" + vm["train-dtype"].as<std::string>() + "'");
  c.trainDtype = *dtype;
  c.trainIters = positive("train-iters", suite.trainIters);
  c.scalingBytes = core::parseBytes(vm.count("scaling-bytes") ? vm["scaling-bytes"].as<std::string>()
                                                              : std::string(suite.scalingBytes),
                                    "--scaling-bytes");
  c.scalingBytesGiven = vm.count("scaling-bytes") > 0;
  if (c.scalingBytes < 64) throw core::UsageError("--scaling-bytes must be at least 64 bytes");
}

}  // namespace

void refusePlaceholders(const std::vector<std::string>& args) {
  for (const std::string& a : args) {
    for (const char* placeholder : {"%value%", "%canonical_option%", "%option%", "%prefix%", "%original_token%"}) {
      if (a.find(placeholder) != std::string::npos) {
        throw core::UsageError(fmt::format("argument '{}' is not valid (it holds '{}')", a, placeholder));
      }
    }
  }
}

namespace {

// The value of option `name`, or the suite's `fallback`.
std::string optionOr(const po::variables_map& vm, const char* name, const char* fallback) {
  return vm.count(name) ? vm[name].as<std::string>() : std::string(fallback);
}

// The sweep: sizes, step, iterations, check, data types and ops (nccl-tests' options).
void parseSweep(const po::variables_map& vm, const Suite& suite, RunConfig& c) {
  c.minBytes = core::parseBytes(optionOr(vm, "min-bytes", suite.minBytes), "-b/--min-bytes");
  c.maxBytes = core::parseBytes(optionOr(vm, "max-bytes", suite.maxBytes), "-e/--max-bytes");
  c.maxBytesGiven = vm.count("max-bytes") > 0;
  if (vm.count("step-bytes")) {
    if (vm.count("step-factor")) {
      throw core::UsageError("-f/--step-factor and -i/--step-bytes exclude each other: choose one");
    }
    c.stepBytes = core::parseBytes(optionOr(vm, "step-bytes", "0"), "-i/--step-bytes");
    if (c.stepBytes == 0) throw core::UsageError("-i/--step-bytes must be at least 1 element");
  }
  if (vm.count("step-factor")) {
    c.stepFactor = parsePositiveInteger(vm["step-factor"].as<std::string>(), "-f/--step-factor");
  } else {
    c.stepFactor = static_cast<std::uint64_t>(suite.stepFactor);
  }
  c.iters = vm.count("iters") ? vm["iters"].as<int>() : suite.iters;
  c.warmup = vm.count("warmup-iters") ? vm["warmup-iters"].as<int>() : suite.warmup;

  const int check = vm["check"].as<int>();
  if (check != 0 && check != 1) throw core::UsageError("-c/--check must be 0 or 1");
  c.check = check == 1;

  c.dtypes = parseList<core::DType>(vm["dtype"].as<std::string>(), "dtype", core::parseDType, [] {
    std::vector<core::DType> all;
    for (const auto& t : core::allDTypes()) all.push_back(t.type);
    return all;
  });
  c.ops = parseList<core::Op>(vm["ops"].as<std::string>(), "collective", core::parseOp, [] {
    std::vector<core::Op> all;
    for (const auto& t : core::allOps()) all.push_back(t.op);
    return all;
  });
}

// -o and --op; true when -o named the reduction ops, not the output file.
bool parseRedOpsAndOutput(const po::variables_map& vm, RunConfig& c) {
  // -o is nccl-tests' reduction op, and DESIGN's output file: a value that reads as a list of
  // reduction ops is the op, anything else the output path.
  std::string redops = vm.count("op") ? vm["op"].as<std::string>() : "";
  bool redopsFromO = false;
  if (vm.count("output")) {
    c.output = vm["output"].as<std::string>();
    if (c.output.empty()) throw core::UsageError("--output must name a file (without it: results/<UTC time>.h5)");
  }
  if (vm.count("-o")) {
    for (const std::string& v : vm["-o"].as<std::vector<std::string>>()) {
      if (isRedOpList(v)) {
        if (!redops.empty()) throw core::UsageError("reduction op given twice (-o/--op)");
        redops = v;
        redopsFromO = true;
      } else if (v.find_first_of("./") == std::string::npos) {
        // a bare word is more likely a mistyped op than a file name: do not write a file "sun"
        throw core::UsageError(fmt::format(
            "unknown reduction op '{}' for -o (sum, prod, min, max or all); to name the output "
            "file use --output or a path such as {}.h5",
            v, v));
      } else {
        if (!c.output.empty()) throw core::UsageError("output file given twice (-o/--output)");
        c.output = v;
      }
    }
  }
  c.redops = parseRedOps(redops.empty() ? "sum" : redops);
  return redopsFromO;
}

// Placement, scopes and group shapes, the ranks' and GPUs' layout, and the progress display.
void parsePlacementAndScopes(const po::variables_map& vm, RunConfig& c) {
  const bool in = vm.count("in-place") > 0;
  const bool out = vm.count("out-of-place") > 0;
  c.placement = in && !out ? Placement::kInPlace : (out && !in ? Placement::kOutOfPlace : Placement::kBoth);
  if (vm.count("placement")) {
    if (in || out) throw core::UsageError("--placement cannot be combined with --in-place/--out-of-place");
    const std::string p = vm["placement"].as<std::string>();
    if (p == "in-place") c.placement = Placement::kInPlace;
    else if (p == "out-of-place") c.placement = Placement::kOutOfPlace;
    else if (p == "both") c.placement = Placement::kBoth;
    else throw core::UsageError("unknown placement '" + p + "' (out-of-place, in-place or both)");
  }

  c.scopes = parseList<core::Scope>(vm["scopes"].as<std::string>(), "scope", core::parseScope, [] {
    return std::vector<core::Scope>(core::allScopes().begin(), core::allScopes().end());
  });
  c.root = vm["root"].as<int>();
  c.minGroup = vm["min-group"].as<int>();
  if (c.minGroup < 1) throw core::UsageError("--min-group must be at least 1");
  if (vm.count("ranks-per-node")) {
    c.ranksPerNode = vm["ranks-per-node"].as<int>();
    if (c.ranksPerNode < 1) throw core::UsageError("--ranks-per-node must be at least 1");
  }
  if (vm.count("gpus-per-node")) {
    c.gpusPerNode = vm["gpus-per-node"].as<int>();
    if (c.gpusPerNode < 1) throw core::UsageError("--gpus-per-node must be at least 1");
  }
  if (vm.count("progress")) {
    const std::string p = vm["progress"].as<std::string>();
    if (p == "live") c.progress = ProgressMode::kLive;
    else if (p == "lines") c.progress = ProgressMode::kLines;
    else if (p == "off") c.progress = ProgressMode::kOff;
    else if (p == "auto") c.progress = ProgressMode::kAuto;
    else throw core::UsageError("unknown --progress mode '" + p + "' (live, lines, off)");
  }
}

// Noise, the step deadline and CUDA graphs.
void parseRunControl(const po::variables_map& vm, RunConfig& c) {
  c.noiseCv = vm["noise-cv"].as<double>();
  if (!(c.noiseCv > 0) || !std::isfinite(c.noiseCv)) throw core::UsageError("--noise-cv must be a positive number");
  if (vm.count("step-timeout")) {
    c.stepTimeout = vm["step-timeout"].as<double>();
    if (!(c.stepTimeout > 0) || !std::isfinite(c.stepTimeout)) {
      throw core::UsageError("--step-timeout must be a positive number of seconds");
    }
  }
  c.cudaGraph = vm.count("cuda-graph") > 0;
  if (vm.count("cudagraph")) {
    const int launches = vm["cudagraph"].as<int>();
    if (launches < 0) throw core::UsageError("-G/--cudagraph must not be negative");
    c.cudaGraph = c.cudaGraph || launches > 0;
  }
}

// What runs: --patterns and the phase switches (--collectives, --pairwise, --copies, --scaling).
// --storage and its options (which mean nothing without it).
void parseStorage(const po::variables_map& vm, RunConfig& c) {
  const std::string ranks = vm["storage-ranks"].as<std::string>();
  if (ranks != "all" && ranks != "node") {
    throw core::UsageError("unknown --storage-ranks '" + ranks + "' (all or node)");
  }
  c.storageEveryRank = ranks == "all";
  c.storageWrite = vm.count("storage-write") > 0;
  c.storageBytes = core::parseBytes(vm["storage-bytes"].as<std::string>(), "--storage-bytes");
  if (c.storageBytes < 4096) throw core::UsageError("--storage-bytes must be at least 4 KiB");
  if (!vm.count("storage")) {
    if (c.storageWrite || !vm["storage-ranks"].defaulted() || !vm["storage-bytes"].defaulted()) {
      throw core::UsageError("--storage-write, --storage-ranks and --storage-bytes need --storage PATH");
    }
    return;
  }
  c.storagePath = vm["storage"].as<std::string>();
  if (c.storagePath.empty()) throw core::UsageError("--storage needs a directory");
}

void parsePhases(const po::variables_map& vm, RunConfig& c) {
  std::set<std::string> patterns;
  if (vm.count("patterns")) {
    for (const std::string& p : splitList(vm["patterns"].as<std::string>())) {
      if (p != "collectives" && p != "copies" && p != "pairwise" && p != "training") {
        throw core::UsageError("unknown pattern '" + p + "' in --patterns (collectives, copies, pairwise, training)");
      }
      patterns.insert(p);
    }
    if (patterns.empty()) throw core::UsageError("--patterns needs at least one of collectives, copies, pairwise, training");
  }
  const auto asked = [&](const char* phase) { return vm.count(phase) > 0 || patterns.count(phase) > 0; };
  // Choosing collectives (--ops, --scopes) without a phase switch asks for the collective sweeps:
  // only they run, as with --collectives.
  const bool collectivesChosen = !vm["ops"].defaulted() || !vm["scopes"].defaulted();
  const bool switches = !patterns.empty() || vm.count("collectives") + vm.count("pairwise") + vm.count("copies") +
                                                 vm.count("scaling") + vm.count("storage") > 0;
  c.phasesGiven = switches || collectivesChosen;
  c.collectives = !switches || asked("collectives");
  c.pairwise = !c.phasesGiven || asked("pairwise");
  c.copies = asked("copies");
  c.training = asked("training");
  c.scaling = vm.count("scaling") > 0;
  parseStorage(vm, c);
  if (vm.count("accept")) {
    c.accept = vm["accept"].as<std::string>();
    if (c.accept.empty()) throw core::UsageError("--accept needs a profile: a built-in name or a profile file");
  }
  c.allowMissing = vm.count("allow-missing") > 0;
  if (c.allowMissing && c.accept.empty()) throw core::UsageError("--allow-missing goes with --accept PROFILE");
}

// GPU-pair copies, the pairwise streams and the thresholds they are judged by.
void parsePairwise(const po::variables_map& vm, const Suite& suite, RunConfig& c) {
  c.copyBytes = core::parseBytes(optionOr(vm, "copy-bytes", suite.copyBytes), "--copy-bytes");
  c.copyBytesGiven = vm.count("copy-bytes") > 0;
  if (c.copyBytes < 4) throw core::UsageError("--copy-bytes must be at least 4 bytes");
  if (c.copyBytes > kMaxPairBytes * 4) {
    throw core::UsageError(fmt::format("--copy-bytes {} is too large (at most {})", core::formatBytes(c.copyBytes),
                                       core::formatBytes(kMaxPairBytes * 4)));
  }
  c.copyIters = vm.count("copy-iters") ? vm["copy-iters"].as<int>() : suite.copyIters;
  if (c.copyIters < 1) throw core::UsageError("--copy-iters must be at least 1");
  const std::string mode = vm["pairwise-mode"].as<std::string>();
  if (mode == "full") c.pairwiseMode = PairwiseMode::kFull;
  else if (mode == "quick") c.pairwiseMode = PairwiseMode::kQuick;
  else throw core::UsageError("unknown --pairwise-mode '" + mode + "' (full or quick)");
  c.pairwisePeers = vm["pairwise-peers"].as<int>();
  if (c.pairwisePeers < 1) throw core::UsageError("--pairwise-peers must be at least 1");
  c.pairBytes = core::parseBytes(optionOr(vm, "pair-bytes", suite.pairBytes), "--pair-bytes");
  c.pairBytesGiven = vm.count("pair-bytes") > 0;
  if (c.pairBytes == 0) throw core::UsageError("--pair-bytes must be at least 1 byte");
  if (c.pairBytes > kMaxPairBytes) {
    throw core::UsageError(fmt::format("--pair-bytes {} is too large (at most {})",
                                       core::formatBytes(c.pairBytes), core::formatBytes(kMaxPairBytes)));
  }
  c.pairWindow = vm.count("pair-window") ? vm["pair-window"].as<int>() : kPairWindow;
  if (c.pairWindow < 1 || c.pairWindow > 1024) throw core::UsageError("--pair-window must be in 1..1024");
  c.pairIters = vm.count("pair-iters") ? vm["pair-iters"].as<int>() : suite.pairIters;
  if (c.pairIters < 1) throw core::UsageError("--pair-iters must be at least 1");
  const std::string api = vm["ucx-api"].as<std::string>();
  if (api != "tag" && api != "rma") throw core::UsageError("unknown --ucx-api '" + api + "' (tag or rma)");
  c.remoteWrites = api == "rma";
  const std::string memory = vm["pair-memory"].as<std::string>();
  if (memory == "auto") c.pairMemory = PairMemory::kAuto;
  else if (memory == "host") c.pairMemory = PairMemory::kHost;
  else if (memory == "cuda") c.pairMemory = PairMemory::kCuda;
  else throw core::UsageError("unknown --pair-memory '" + memory + "' (auto, host or cuda)");
  if (vm.count("nic-per-rank")) {
    c.nicPerRank = vm["nic-per-rank"].as<std::string>();
    if (c.nicPerRank.empty()) throw core::UsageError("--nic-per-rank needs auto or a list of NICs (mlx5_0:1,...)");
  }
  c.latencyIters = vm.count("latency-iters") ? vm["latency-iters"].as<int>() : suite.latencyIters;
  if (c.latencyIters < 0) throw core::UsageError("--latency-iters must not be negative");
  c.retests = vm["retests"].as<int>();
  if (c.retests < 0 || c.retests > 10) throw core::UsageError("--retests must be in 0..10");
  c.minConfidence = vm["min-confidence"].as<double>();
  if (!(c.minConfidence >= 0.0 && c.minConfidence <= 1.0)) {
    throw core::UsageError(fmt::format("--min-confidence must be in [0, 1] (got {})", c.minConfidence));
  }
  c.slowThreshold = vm["slow-threshold"].as<double>();
  if (!(c.slowThreshold > 0.0 && c.slowThreshold <= 1.0)) {
    throw core::UsageError(fmt::format("--slow-threshold must be in (0, 1] (got {})", c.slowThreshold));
  }
  c.latencyFactor = vm["latency-factor"].as<double>();
  if (!(c.latencyFactor >= 1.0) || !std::isfinite(c.latencyFactor)) {
    throw core::UsageError(fmt::format("--latency-factor must be at least 1 (got {})", c.latencyFactor));
  }
  if (vm.count("line-rate")) {
    c.lineRateGBps = vm["line-rate"].as<double>();
    if (!(c.lineRateGBps > 0) || !std::isfinite(c.lineRateGBps)) {
      throw core::UsageError(fmt::format("--line-rate must be a positive number of GB/s (got {})", c.lineRateGBps));
    }
  }
  c.lineRateFraction = vm["line-rate-fraction"].as<double>();
  if (!(c.lineRateFraction > 0.0 && c.lineRateFraction <= 1.0)) {
    throw core::UsageError(fmt::format("--line-rate-fraction must be in (0, 1] (got {})", c.lineRateFraction));
  }
  c.sysfsRoot = vm["sysfs-root"].as<std::string>();
  if (c.sysfsRoot.empty()) throw core::UsageError("--sysfs-root must name a directory");
  if (vm.count("fabric")) {
    c.fabricFile = vm["fabric"].as<std::string>();
    if (c.fabricFile.empty()) throw core::UsageError("--fabric must name a file");
  }
}

// --resume, and whether any measurement option was given (a resumed run must not change them).
void parseResume(const po::variables_map& vm, bool redopsFromO, ParsedRun& out) {
  // resuming: the measurement options, when given at all, must be the recorded run's
  if (vm.count("resume")) {
    out.resume = vm["resume"].as<std::string>();
    if (out.resume.empty()) throw core::UsageError("--resume needs the results file to finish");
    if (!out.config.output.empty() && out.config.output != out.resume) {
      throw core::UsageError(fmt::format("--resume {} writes to the file it finishes; the output {} "
                                         "is a different file", out.resume, out.config.output));
    }
  }
  out.force = vm.count("force") > 0;
  static const std::set<std::string> kRunTime{"resume", "output", "force", "progress", "step-timeout", "inject-fault", "preflight"};
  for (const auto& [name, value] : vm) {
    if (value.defaulted() || kRunTime.count(name) > 0) continue;
    if (name == "-o" && !redopsFromO) continue;  // -o named the output file
    out.measurementGiven = true;
  }
}

// What no single option can check.
void checkCrossOptions(const RunConfig& c) {
  if (c.minBytes == 0) throw core::UsageError("-b/--min-bytes must be at least 1 element");
  if (c.minBytes > c.maxBytes) {
    throw core::UsageError(fmt::format("-b/--min-bytes ({}) is larger than -e/--max-bytes ({})",
                                       core::formatBytes(c.minBytes), core::formatBytes(c.maxBytes)));
  }
  if (c.stepBytes == 0 && c.stepFactor <= 1) {
    throw core::UsageError(fmt::format("-f/--step-factor must be an integer > 1 (got {})", c.stepFactor));
  }
  if (c.iters < 1) throw core::UsageError("-n/--iters must be at least 1");
  if (c.warmup < 0) throw core::UsageError("-w/--warmup-iters must not be negative");
  if (c.root < 0) throw core::UsageError("-r/--root must not be negative");
  for (core::DType t : c.dtypes) {
    const std::uint64_t ts = core::traits(t).size;
    const auto notMultiple = [&](std::uint64_t bytes, const char* opt) {
      return core::UsageError(fmt::format("{} {} B is not a multiple of the {} element size ({} B)",
                                          opt, bytes, core::traits(t).name, ts));
    };
    if (c.minBytes % ts != 0) throw notMultiple(c.minBytes, "-b/--min-bytes");
    if (c.stepBytes % ts != 0) throw notMultiple(c.stepBytes, "-i/--step-bytes");
  }
}

}  // namespace

ParsedRun parseRunOptions(const std::vector<std::string>& args) {
  refusePlaceholders(args);
  ParsedRun parsed;
  po::variables_map vm;
  try {
    // No positional arguments: a stray word is an error, not silently ignored.
    const po::positional_options_description none;
    po::store(po::command_line_parser(args)
                  .options(describeOptions())
                  .positional(none)
                  .style(po::command_line_style::unix_style)
                  .run(),
              vm);
    po::notify(vm);
  } catch (const po::error& e) {
    throw core::UsageError(std::string(e.what()) + " (see fabricmap run --help)");
  }
  if (vm.count("help")) {
    parsed.help = true;
    return parsed;
  }
  RunConfig& c = parsed.config;
  c.suite = vm["suite"].as<std::string>();
  const Suite& suite = suiteNamed(c.suite);
  c.backend = vm["backend"].as<std::string>();
  if (c.backend != "auto" && worker::findBackend(c.backend) == nullptr) {
    throw core::UsageError(fmt::format("unknown --backend '{}' ({})", c.backend, worker::backendNames(true)));
  }
  parseSweep(vm, suite, c);
  const bool redopsFromO = parseRedOpsAndOutput(vm, c);
  parsePlacementAndScopes(vm, c);
  parseRunControl(vm, c);
  parsePhases(vm, c);
  parseTraining(vm, suite, c);
  parsePairwise(vm, suite, c);
  c.preflight = vm.count("preflight") > 0;
  if (vm.count("inject-fault")) {
    for (const auto& f : vm["inject-fault"].as<std::vector<std::string>>()) {
      c.faults.push_back(parseFault(f));
    }
  }
  parseResume(vm, redopsFromO, parsed);
  checkCrossOptions(c);
  return parsed;
}

namespace {

// --pair-memory against what the backend's pairs can use: its own kind, or GPU memory where it
// also measures from there (ucx in a CUDA build). Sets cudaPairs.
void resolvePairMemory(RunConfig& c, const worker::BackendInfo& info) {
  const PairMemory own = info.memory == worker::MemoryKind::kCuda ? PairMemory::kCuda : PairMemory::kHost;
  const PairMemory wanted = c.pairMemory == PairMemory::kAuto ? own : c.pairMemory;
  c.cudaPairs = wanted == PairMemory::kCuda;
  if (wanted == own || (c.cudaPairs && info.measures.cudaPairs)) return;
  const auto fromGpus = [](const worker::BackendInfo& b) {
    return b.memory == worker::MemoryKind::kCuda || b.measures.cudaPairs;
  };
  if (c.cudaPairs) {
    throw core::UsageError(fmt::format("--pair-memory cuda needs the {} backend (this run uses {}, whose pairs this "
                                       "build keeps in host memory)",
                                       worker::backendNames(false, fromGpus), info.name));
  }
  throw core::UsageError(
      fmt::format("--pair-memory host: the {} backend measures from GPU memory only (host memory: {})", info.name,
                  worker::backendNames(false, [](const worker::BackendInfo& b) {
                    return b.memory == worker::MemoryKind::kHost;
                  })));
}

}  // namespace

void applyBackendDefaults(RunConfig& c, std::string_view backend) {
  const worker::BackendInfo* info = worker::findBackend(backend);
  if (info == nullptr) throw core::UsageError(fmt::format("unknown backend '{}'", backend));
  if (c.cudaGraph && !info->measures.graphs) {
    const auto graphs = [](const worker::BackendInfo& b) { return b.measures.graphs; };
    throw core::UsageError(fmt::format("--cuda-graph needs the {} backend (this run uses {})",
                                       worker::backendNames(false, graphs), backend));
  }
  if (c.remoteWrites && !info->measures.rma) {
    const auto rma = [](const worker::BackendInfo& b) { return b.measures.rma; };
    throw core::UsageError(fmt::format("--ucx-api rma needs the {} backend (this run uses {})",
                                       worker::backendNames(false, rma), backend));
  }
  resolvePairMemory(c, *info);
  if ((c.training || c.scaling) && !info->measures.traffic) {
    const auto traffic = [](const worker::BackendInfo& b) { return b.measures.traffic; };
    throw core::UsageError(fmt::format("{} needs the {} backend (this run uses {}, which has no collectives)",
                                       c.training ? "--patterns training" : "--scaling",
                                       worker::backendNames(false, traffic), backend));
  }
  if (!info->measures.collectives) {
    // a pairs-only backend: the pairwise phase unless phases were chosen; collectives refused
    if (!c.phasesGiven) c.collectives = false;
    if (c.collectives) {
      const auto sweeps = [](const worker::BackendInfo& b) { return b.measures.collectives; };
      throw core::UsageError(fmt::format("--collectives needs the {} backend (this run uses {}, which has none)",
                                         worker::backendNames(false, sweeps), backend));
    }
  }
  c.railsAtLineRate = info->busbwAtLineRate;
  // GPU memory: the suite's GPU sizes, and the GPU-pair copies unless phases were chosen
  if (info->memory != worker::MemoryKind::kCuda) return;
  const Suite& suite = suiteNamed(c.suite);
  if (!c.phasesGiven) c.copies = true;
  if (!c.copyBytesGiven) c.copyBytes = core::parseBytes(suite.gpuCopyBytes, "suite size");
  if (!c.maxBytesGiven) c.maxBytes = core::parseBytes(suite.gpuMaxBytes, "suite size");
  if (!c.pairBytesGiven) c.pairBytes = core::parseBytes(suite.gpuPairBytes, "suite size");
  if (!c.seqLenGiven) c.seqLen = suite.gpuSeqLen;
  if (!c.hiddenGiven) c.hidden = suite.gpuHidden;
  if (!c.scalingBytesGiven) c.scalingBytes = core::parseBytes(suite.gpuScalingBytes, "suite size");
}

MatrixShape matrixShapeOf(const RunConfig& config) {
  return {config.pairwiseMode == PairwiseMode::kQuick, config.pairBytes, config.pairWindow, config.pairIters,
          config.latencyIters};
}

AnalysisConfig analysisConfigOf(const RunConfig& config) {
  AnalysisConfig c{config.slowThreshold, config.latencyFactor};
  c.noiseCv = config.noiseCv;
  c.retests = config.retests;
  c.minConfidence = config.minConfidence;
  c.lineRateGBps = config.lineRateGBps;
  c.lineRateFraction = config.lineRateFraction;
  return c;
}

}  // namespace fabricmap::orchestrator
