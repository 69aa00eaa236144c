// `fabricmap run` options: Boost.Program_options with nccl-tests' short aliases.
#include "orchestrator/run/run_config.h"

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

struct Suite {
  const char* name;
  const char* minBytes;
  const char* maxBytes;
  int stepFactor;
  int iters;
  int warmup;
  // A pair stream moves 64 of these per window (osu_bw's): 16 MiB (quick) and 64 MiB (full) in
  // flight, past host-memory MPI's plateau; the pairwise phase takes as long as it did with the
  // earlier 8 MiB windows of 4 MiB and 16 MiB messages (measured, 4 ranks on host memory).
  const char* pairBytes;
  int pairIters;
  int latencyIters;
  // On GPUs (the nccl backend) sizes must be far larger to reach NVLink's plateau (REFERENCE.md:
  // busbw plateaus only at GiB messages on NVSwitch systems).
  const char* gpuMaxBytes;
  // 64 per window: 256 MiB (quick) and 1 GiB (full) in flight, the volume per stream of the
  // earlier single 256 MiB and 1 GiB messages
  const char* gpuPairBytes;
  const char* copyBytes;  // host memory copies (--copies on the mpi backend)
  const char* gpuCopyBytes;
  int copyIters;
  int seqLen;  // training pattern shape: host memory, then GPUs
  int hidden;
  int gpuSeqLen;
  int gpuHidden;
  int trainIters;
  const char* scalingBytes;
  const char* gpuScalingBytes;
};

// quick: a whole sweep in well under a minute on a small host; full: up to 1 GiB, nccl-tests' -f 2.
constexpr Suite kSuites[] = {
    {"quick", "8", "8M", 4, 20, 2, "256K", 10, 100, "1G", "4M", "16M", "256M", 10, 512, 1024, 2048, 4096, 10, "8M", "256M"},
    {"full", "8", "1G", 2, 20, 5, "1M", 20, 1000, "8G", "16M", "64M", "1G", 20, 1024, 2048, 4096, 8192, 20, "64M", "1G"},
};

const Suite& suiteNamed(const std::string& name) {
  for (const Suite& s : kSuites) {
    if (name == s.name) return s;
  }
  throw core::UsageError("unknown suite '" + name + "' (quick or full)");
}

// The largest pairwise message: MPI counts are ints, and a bigger one says nothing new.
constexpr std::uint64_t kMaxPairBytes = 1ull << 30;
// A pairwise stream's window: osu_bw's 64 messages per iteration, acknowledged once per window.
constexpr int kPairWindow = 64;

// The sweep (nccl-tests' options and the layout of ranks and groups), in --help's order.
void addSweepOptions(po::options_description& d) {
  // clang-format off
  d.add_options()
    ("help,h", "show this help")
    ("suite", po::value<std::string>()->default_value("quick"),
     "preset sweep: quick (8 B..8 MiB, x4) or full (8 B..1 GiB, x2); explicit options override")
    ("backend", po::value<std::string>()->default_value("auto"),
     "auto | mpi | nccl (auto: nccl when every rank has a GPU)")
    ("min-bytes,b", po::value<std::string>(), "smallest message size (K/M/G = 1024^n)")
    ("max-bytes,e", po::value<std::string>(), "largest message size")
    ("step-factor,f", po::value<std::string>(), "multiply the size by this integer > 1 each step")
    ("step-bytes,i", po::value<std::string>(), "add this many bytes each step instead")
    ("iters,n", po::value<int>(), "timed iterations per size")
    ("warmup-iters,w", po::value<int>(), "untimed warm-up iterations per size")
    ("check,c", po::value<int>()->default_value(1), "check results exactly: 1 (default) or 0")
    ("noise-cv", po::value<double>()->default_value(0.2),
     "mark a step noisy when a group's iteration times vary beyond this coefficient of variation")
    ("step-timeout", po::value<double>(),
     "seconds any step may take before the job ends as hung, naming the ranks that hold it up "
     "(default: 300 s plus the step's data at 50 MB/s)")
    ("cuda-graph", "nccl backend: capture each size's timed iterations into a CUDA graph and launch it once")
    ("cudagraph,G", po::value<int>(), "nccl-tests' form of --cuda-graph: 0 off, 1 or more on")
    ("dtype,d", po::value<std::string>()->default_value("float"),
     "element type(s): int8 uint8 int32 uint32 int64 uint64 half float double bfloat16, a "
     "comma list, or all")
    (",o", po::value<std::vector<std::string>>()->composing(),
     "reduction op(s) sum|prod|min|max|all (as nccl-tests), or the output file when the value "
     "is a path (has a '.' or '/')")
    ("op", po::value<std::string>(), "reduction op(s): sum, prod, min, max, a comma list, or all")
    ("output", po::value<std::string>(), "results file (default results/<UTC time>.h5)")
    ("ops", po::value<std::string>()->default_value("all"),
     "collectives: all_reduce,all_gather,reduce_scatter,broadcast,reduce,alltoall,sendrecv or all")
    ("root,r", po::value<int>()->default_value(0), "root rank within each group (broadcast, reduce)")
    ("min-group", po::value<int>()->default_value(2),
     "smallest group to run collectives in; 1 also runs one-rank groups (a one-GPU smoke test: "
     "results are checked, busbw is 0 by definition)")
    ("in-place", "run in-place only (with --out-of-place: both)")
    ("out-of-place", "run out-of-place only (with --in-place: both)")
    ("placement", po::value<std::string>(), "out-of-place | in-place | both (default both)")
    ("scopes", po::value<std::string>()->default_value("world,intra,inter"),
     "world (all ranks), intra (per node), inter (per local rank across nodes)")
    ("gpus-per-node", po::value<int>(),
     "GPUs per node to bind local ranks to (local rank modulo this, so more ranks share GPUs; "
     "default: every visible GPU, one rank each)")
    ("ranks-per-node", po::value<int>(),
     "treat consecutive blocks of K ranks as one node (testing on one machine; recorded as emulated)")
    ("progress", po::value<std::string>()->implicit_value("live"),
     "live | lines | off (default: live when stderr is a terminal)");
  // clang-format on
}

// The phases (collectives, copies, pairwise, training, scaling), their judging, and running.
void addPhaseOptions(po::options_description& d) {
  // clang-format off
  d.add_options()
    ("collectives", "run the collective sweeps only (default: collectives and pairwise)")
    ("pairwise", "run the pairwise bandwidth/latency matrices (phases given: only those run)")
    ("copies", "run the GPU-pair copy matrix inside each node (default with GPUs; on the mpi "
               "backend, host-memory copies between a node's ranks)")
    ("copy-bytes", po::value<std::string>(), "bytes per GPU-pair copy (quick suite: 256M on GPUs, 16M host)")
    ("copy-iters", po::value<int>(), "timed copies per direction and method (quick suite: 10)")
    ("pairwise-mode", po::value<std::string>()->default_value("full"),
     "full: every rank and node pair (circle method, n-1 rounds); quick: a few random peers each")
    ("pairwise-peers", po::value<int>()->default_value(3), "quick mode: random peers per rank/node")
    ("pair-bytes", po::value<std::string>(), "pairwise stream message size (quick suite: 256K, on GPUs 4M)")
    ("pair-window", po::value<int>(), "pairwise messages per iteration, acknowledged per window as osu_bw (default 64, 1..1024)")
    ("pair-iters", po::value<int>(), "pairwise timed iterations")
    ("latency-iters", po::value<int>(), "pairwise ping-pong round trips (8 B)")
    ("retests", po::value<int>()->default_value(2), "re-measurements of a pair flagged slow")
    ("min-confidence", po::value<double>()->default_value(0.5),
     "findings less sure than this (0..1: supporting pairs, their clarity, margin over the next "
     "explanation) are reported as information only")
    ("slow-threshold", po::value<double>()->default_value(0.9),
     "a pair is slow below this fraction of its link class's baseline, in (0, 1]")
    ("latency-factor", po::value<double>()->default_value(2.0),
     "latency is bad above this multiple of its link class's baseline, >= 1")
    ("patterns", po::value<std::string>(),
     "phases to run, a comma list: collectives, copies, pairwise, training (like the phase "
     "switches: only those run)")
    ("layout", po::value<std::string>(),
     "training pattern: tp=T,pp=P,dp=D[,ep=E] in Megatron-LM rank order (TP innermost); "
     "default tp = ranks per node, dp = nodes")
    ("strict-layout", "refuse a layout whose tensor-parallel groups cross nodes (default: a warning finding)")
    ("micro-batch", po::value<int>()->default_value(1), "training pattern: sequences per micro-batch (b)")
    ("seq-len", po::value<int>(), "training pattern: tokens per sequence (s; quick suite: 512 host, 2048 GPUs)")
    ("hidden", po::value<int>(), "training pattern: hidden size (h; quick suite: 1024 host, 4096 GPUs)")
    ("layers", po::value<int>()->default_value(2), "training pattern: layers simulated per pipeline stage")
    ("top-k", po::value<int>()->default_value(2), "training pattern: experts per token (EP alltoall)")
    ("sequence-parallel", "training pattern: TP as all_gather + reduce_scatter pairs (Megatron sequence parallelism)")
    ("dp-mode", po::value<std::string>()->default_value("allreduce"),
     "training pattern: allreduce (DDP buckets) or zero (reduce_scatter + all_gather, ZeRO/FSDP)")
    ("bucket-bytes", po::value<std::string>()->default_value("25M"), "training pattern: DP gradient bucket size")
    ("train-dtype", po::value<std::string>()->default_value("bfloat16"), "training pattern: element type")
    ("train-iters", po::value<int>(), "training pattern: timed training steps per measurement (quick suite: 10)")
    ("scaling", "run the scaling sweep: one all_reduce on 2, 4, ... GPUs of every node and on 1, 2, 4, ... nodes")
    ("scaling-bytes", po::value<std::string>(), "scaling sweep: all_reduce size per rank (quick suite: 8M host, 256M GPUs)")
    ("preflight",
     "check before measuring anything, then stop: every rank runs the same fabricmap build, sees the "
     "expected GPUs (the same count on every node, one per rank on the nccl backend, --gpus-per-node), "
     "and the output can be written; exit 0 when all is well, 2 naming each problem")
    ("resume", po::value<std::string>(),
     "finish the incomplete run recorded in FILE.h5: run only the steps it lacks, with its "
     "configuration, on the same rank layout, and mark it complete")
    ("inject-fault", po::value<std::vector<std::string>>()->composing(),
     "TESTING ONLY: corrupt:rank=R[:op=OP][:step=N] changes an output element before the check; "
     "error:rank=R[:op=OP][:step=N] fails that rank with a runtime error; stall:rank=R:step=N "
     "hangs it (sleeps forever); crash:rank=R:step=N kills it (SIGKILL)");
  // clang-format on
}

po::options_description describeOptions() {
  po::options_description d("fabricmap run options");
  addSweepOptions(d);
  addPhaseOptions(d);
  return d;
}

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

std::string runHelpText() {
  std::ostringstream out;
  out << "usage: mpirun -np N fabricmap run [options]\n\n"
         "Measures collectives on every scope (all ranks, each node, each rail across nodes) and\n"
         "writes an HDF5 results file. Sizes take K/M/G suffixes (powers of 1024); rates are\n"
         "GB/s (1e9 B/s) as in nccl-tests.\n\n"
      << describeOptions();
  return out.str();
}

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
  if (vm.count("output")) c.output = vm["output"].as<std::string>();
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
                                                 vm.count("scaling") > 0;
  c.phasesGiven = switches || collectivesChosen;
  c.collectives = !switches || asked("collectives");
  c.pairwise = !c.phasesGiven || asked("pairwise");
  c.copies = asked("copies");
  c.training = asked("training");
  c.scaling = vm.count("scaling") > 0;
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
  static const std::set<std::string> kRunTime{"resume", "output", "progress", "step-timeout", "inject-fault", "preflight"};
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

void applyBackendDefaults(RunConfig& c, std::string_view backend) {
  const worker::BackendInfo* info = worker::findBackend(backend);
  if (info == nullptr) throw core::UsageError(fmt::format("unknown backend '{}'", backend));
  if (c.cudaGraph && !info->measures.graphs) {
    const auto graphs = [](const worker::BackendInfo& b) { return b.measures.graphs; };
    throw core::UsageError(fmt::format("--cuda-graph needs the {} backend (this run uses {})",
                                       worker::backendNames(false, graphs), backend));
  }
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
  return c;
}

}  // namespace fabricmap::orchestrator
