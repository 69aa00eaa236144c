// `fabricmap run`: bootstrap, plan, execute every step, record. Every rank runs this function;
// rank 0 also writes the results. Decisions that end the job are taken by all ranks together.
#include <mpi.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <mutex>
#include <exception>
#include <filesystem>
#include <memory>
#include <optional>
#include <type_traits>

#include <fmt/format.h>

#include "core/error.h"
#include "core/files.h"
#include "core/units.h"
#include "orchestrator/analysis/analysis.h"
#include "orchestrator/commands.h"
#include "orchestrator/analysis/matrices.h"
#include "orchestrator/run/acceptance.h"
#include "orchestrator/run/endpoints.h"
#include "orchestrator/run/fabric_input.h"
#include "orchestrator/run/interrupt.h"
#include "orchestrator/run/nic_pinning.h"
#include "orchestrator/run/node_inventory.h"
#include "orchestrator/run/planner.h"
#include "orchestrator/run/preflight.h"
#include "orchestrator/run/progress.h"
#include "orchestrator/run/provenance.h"
#include "orchestrator/run/resume.h"
#include "orchestrator/run/run_config.h"
#include "orchestrator/run/steps.h"
#include "results/console.h"
#include "results/h5_writer.h"
#include "results/journal.h"
#include "topologies/classify.h"
#include "topologies/discovery.h"
#include "topologies/host_probe.h"
#include "topologies/node_records.h"
#include "topologies/rank_map.h"
#include "worker/backends.h"
#include "worker/comm.h"
#include "worker/executor.h"
#include "worker/mpi_check.h"
#include "worker/watchdog.h"

namespace fabricmap::orchestrator {
namespace {

// MPI_Init/MPI_Finalize for the run. An exception that escapes leaves MPI initialized: main()
// aborts the job, since the other ranks may be waiting in a collective that this rank left
// (MPI_Finalize here would wait for them forever).
class MpiSession {
 public:
  // Single, as osu_latency and nccl-tests (MPI_Init) run: only the main thread ever calls MPI.
  // The watchdog's thread (worker/watchdog.h) and CUDA's and NCCL's own threads never do. Any
  // level above single makes Open MPI 4 lock its internals on every call (measured: a one-way
  // 8 B message 0.450 us at FUNNELED, 0.404 at SINGLE; bench/README.md (f)).
  MpiSession(int argc, char** argv) {
    int provided = 0;
    FM_MPI(MPI_Init_thread(&argc, &argv, MPI_THREAD_SINGLE, &provided));
  }
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
  ~MpiSession() {
    if (std::uncaught_exceptions() > 0) return;
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Finalize();
  }
};

// How long the watchdog waits for the sinks, and how long after their own deadline the other
// ranks end themselves when rank 0 has not ended the job.
constexpr std::chrono::seconds kWatchdogGrace{5};

void printError(const std::string& message) {
  fmt::print(stderr, "fabricmap run: error: {}\n", message);
  std::fflush(stderr);
}

// Runs `action` on rank 0 only; if it throws a UsageError every rank learns it and the error is
// rethrown everywhere (the message only on rank 0), so all ranks exit 2 together.
template <class F>
void onRootAgreeing(int rank, F&& action) {
  int failed = 0;
  std::string message;
  if (rank == 0) {
    try {
      action();
    } catch (const core::UsageError& e) {
      failed = 1;
      message = e.what();
    }
  }
  FM_MPI(MPI_Bcast(&failed, 1, MPI_INT, 0, MPI_COMM_WORLD));
  if (failed) throw core::UsageError(message);
}

std::string defaultOutputPath() {
  const std::string stamp = utcNow(true);
  std::string path = "results/" + stamp + ".h5";
  for (int i = 2; std::filesystem::exists(path); ++i) path = fmt::format("results/{}-{}.h5", stamp, i);
  return path;
}

// How an existing results file may be replaced: an unfinished run is named for --resume.
std::string howToReplace(const std::string& path) {
  std::error_code ec;
  bool unfinished = std::filesystem::exists(results::journalPath(path), ec);
  try {
    unfinished = unfinished || !results::readResults(path).complete;
  } catch (const core::Error&) {
    // not a results file fabricmap can read: only --force replaces it
  }
  if (!unfinished) return "pass --force to replace it";
  return fmt::format("it holds an unfinished run: `fabricmap run --resume {}` finishes it, --force replaces it", path);
}

// Rank 0's claim on the results file, before anything is read or measured: a path that is not a
// regular file, one of the run's inputs, an existing file without --force (an unfinished run is
// named for --resume) or a file another fabricmap is writing is refused on every rank. A resumed
// run replaces the file it finishes. Rank 0's config.output becomes the path claimed.
core::OutputLock claimResults(int rank, const ParsedRun& parsed, RunConfig& config) {
  core::OutputLock lock;
  onRootAgreeing(rank, [&] {
    const bool resumed = !parsed.resume.empty();
    const bool defaulted = !resumed && config.output.empty();
    const std::string path = resumed ? parsed.resume : defaulted ? defaultOutputPath() : config.output;
    core::OutputRules rules{.what = "results file", .replace = resumed || parsed.force,
                            .inputs = {config.fabricFile, config.accept}, .createParents = defaulted};
    std::error_code ec;
    if (!rules.replace && std::filesystem::exists(path, ec)) rules.howToReplace = howToReplace(path);
    lock = core::claimOutput(path, rules, "fabricmap run");
    config.output = path;
  });
  return lock;
}

// A run in which every step would be waived measures nothing: say why instead of writing an empty
// file and reporting success.
void requireSomethingToMeasure(const core::Plan& plan, const worker::Executor& executor) {
  std::vector<std::string> reasons;
  const auto note = [&](const std::string& why) {
    if (std::find(reasons.begin(), reasons.end(), why) == reasons.end()) reasons.push_back(why);
  };
  // a step of any kind but a waived collective is something to measure
  bool measures = false;
  plan.forEachStepList([&]<class S>(const std::vector<S>& list) {
    for (const S& step : list) {
      std::string why;
      if constexpr (std::is_same_v<S, core::CollectiveStep>) why = executor.waiver(step);
      measures = measures || why.empty();
      if (!why.empty()) note(why);
    }
  });
  if (measures) return;
  for (const auto& scope : plan.scopes) {
    if (!scope.waiver.empty()) note(fmt::format("scope {}: {}", core::name(scope.scope), scope.waiver));
  }
  std::string message = "nothing to measure";
  for (std::size_t i = 0; i < reasons.size() && i < 3; ++i) message += (i == 0 ? ": " : "; ") + reasons[i];
  throw core::UsageError(message + " (run under mpirun with 2+ ranks, with sizes and types the backend supports)");
}

// Each node's first rank discovers and classifies its GPUs; rank 0 records them, and which GPU each
// rank measures with, in `topology` (other ranks' copy stays as it was). Collective.
void describeGpus(core::Topology& topology, const worker::Backend& backend) {
  int rank = 0;
  FM_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  std::string mine;
  if (topology.ranks.at(static_cast<std::size_t>(rank)).localRank == 0) {
    const topologies::GpuTopology gpus = topologies::discoverLocalNode();
    // names from the driver are not always UTF-8
    mine = topologies::describeNode(gpus, topologies::classify(gpus))
               .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }
  const std::vector<std::string> descriptions = worker::gatherStrings(MPI_COMM_WORLD, mine);
  const std::vector<std::string> busIds = worker::gatherStrings(MPI_COMM_WORLD, backend.deviceBusId());
  if (rank != 0) return;
  for (const auto& r : topology.ranks) {
    if (r.localRank != 0) continue;
    const auto description = nlohmann::json::parse(descriptions[static_cast<std::size_t>(r.rank)], nullptr, false);
    if (!description.is_discarded()) topologies::applyNodeDescription(topology, r.node, description, busIds);
  }
}

// Why the GPUs cannot carry one rank each (empty when they can): a node with fewer GPUs than
// ranks. An explicit --gpus-per-node spreads the ranks over that many GPUs, sharing them when
// there are more ranks (NCCL refuses two ranks of one communicator on one GPU; the GPU-pair
// copies work, which is how a one-GPU machine checks them).
std::string gpuShortage(const core::Topology& topology, const RunConfig& config) {
  for (const auto& n : topology.nodes) {
    const int gpus = config.gpusPerNode > 0 ? std::min(config.gpusPerNode, n.gpus) : n.gpus;
    if (gpus == 0 || (config.gpusPerNode == 0 && gpus < n.ranks)) {
      return n.gpus == 0 ? fmt::format("no GPU on {}", n.name)
                         : fmt::format("{} has {} GPU(s) for {} ranks", n.name, gpus, n.ranks);
    }
  }
  return {};
}

// --resume: rank 0 reads the stopped run (returned there), every rank takes its configuration.
std::optional<results::ResultsFile> readStoppedRun(int rank, const ParsedRun& parsed, RunConfig& config) {
  std::optional<results::ResultsFile> stopped;
  if (parsed.resume.empty()) return stopped;
  std::string recorded;
  onRootAgreeing(rank, [&] {
    stopped = readResumable(parsed.resume);
    recorded = encode(recordedRunOf(*stopped));
  });
  config = resumedConfig(parsed, decodeRecordedRun(worker::broadcastString(MPI_COMM_WORLD, recorded)));
  return stopped;
}

// The steps a resumed run takes from its file: the same plan on the same ranks, or a refusal. The
// decision is rank 0's, broadcast.
Resuming resumingOf(int rank, const std::string& resume, const std::optional<results::ResultsFile>& stopped,
                    const core::Topology& topology, const core::Plan& plan) {
  Resuming resuming;
  resuming.root = rank == 0;
  if (resume.empty()) return resuming;
  onRootAgreeing(rank, [&] {
    const std::string why = layoutDifference(stopped->topology, topology);
    if (!why.empty()) throw core::UsageError(fmt::format("cannot resume '{}': {}", resume, why));
    resuming.replay = Replay(*stopped);
    resuming.recorded = resuming.replay.match(plan, 0, true);
  });
  worker::broadcastBytes(MPI_COMM_WORLD, resuming.recorded);
  return resuming;
}

// Rank 0's results file and its journal (after the file: finish() removes it).
struct FileSinks {
  std::unique_ptr<results::H5Sink> file;
  std::unique_ptr<results::JournalSink> journal;
};

// Creates the results file (config.output, or the default path) and its journal. A resumed run's
// files replace the stopped run's once its steps are in them again.
FileSinks openFileSinks(const RunConfig& config, bool resumed, Resuming& resuming) {
  const results::Publish when = resumed ? results::Publish::kWhenAsked : results::Publish::kAtBegin;
  FileSinks out{std::make_unique<results::H5Sink>(config.output, when),
                std::make_unique<results::JournalSink>(config.output, when)};
  resuming.file = out.file.get();
  resuming.journal = out.journal.get();
  resuming.published = !resumed;
  return out;
}

// A new run's provenance: who ran what, with which configuration and plan.
core::Provenance newProvenance(const std::string& commandLine, const std::vector<std::string>& args,
                               const std::string& backendName, const core::Topology& topology, const RunConfig& config,
                               const core::Plan& plan) {
  core::Provenance provenance = makeProvenance(commandLine, backendName, topology);
  provenance.plannedSteps = plan.stepCount();
  provenance.runConfig = toJsonString(config);
  provenance.runArguments = nlohmann::json(args).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return provenance;
}

// What the backend needs to know of this rank and the run.
worker::BackendContext backendContext(const RunConfig& config, const core::Topology& topology, int rank) {
  worker::BackendContext context;
  context.localRank = topology.ranks.at(static_cast<std::size_t>(rank)).localRank;
  context.gpusPerNode = config.gpusPerNode;
  context.cudaGraph = config.cudaGraph;
  context.pairApi = config.remoteWrites ? worker::PairApi::kRma : worker::PairApi::kTag;
  context.pairMemory = config.cudaPairs ? worker::MemoryKind::kCuda : worker::MemoryKind::kHost;
  if (config.stepTimeout > 0) context.stepTimeoutSeconds = config.stepTimeout;
  return context;
}

// --nic-per-rank on a backend that measures through MPI itself: what each rank pinned before
// MPI_Init (`early`), gathered; a rank that could not (no local rank from its launcher) where it
// should have (`agreed`, its entry of rank 0's table) is refused on every rank. Collective.
std::vector<worker::NicChoice> pinnedBeforeInit(const worker::NicChoice& early, const worker::NicChoice& agreed) {
  const int failed = early.empty() && !agreed.empty() ? 1 : 0;
  int anyFailed = 0;
  FM_MPI(MPI_Allreduce(&failed, &anyFailed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
  if (anyFailed != 0) {
    throw core::UsageError("--nic-per-rank: a rank could not pin MPI's NIC before MPI_Init: its launcher gave no "
                           "local rank (OMPI_COMM_WORLD_LOCAL_RANK, SLURM_LOCALID or MPI_LOCALRANKID)");
  }
  std::vector<worker::NicChoice> all;
  for (const std::string& line : worker::gatherStrings(MPI_COMM_WORLD, early.device + " " + std::to_string(early.port))) {
    const std::size_t space = line.rfind(' ');
    all.push_back({line.substr(0, space), std::stoi(line.substr(space + 1))});
  }
  return all;  // rank 0: every rank's; the others: none
}

// Collective: the nodes' inventory into rank 0's `topology` (beside the GPU discovery's rows), each
// rank's NIC agreed (--nic-per-rank; `early`: what this rank pinned before MPI_Init), the backend
// started with it; then what rank 0 records of every rank: its binding and its pinned NIC.
std::unique_ptr<worker::Backend> startBackend(const RunConfig& config, const worker::BackendInfo& info,
                                              const NodeInventories& inventories, core::Topology& topology,
                                              int rank, const worker::NicChoice& early) {
  if (rank == 0) {
    core::InventoryRows rows = inventories.rows();
    rows.gpus = std::move(topology.inventory.gpus);  // from the GPU discovery
    topology.inventory = std::move(rows);
  }
  std::vector<worker::NicChoice> nics = agreedNics(MPI_COMM_WORLD, topology, config.nicPerRank);
  worker::BackendContext context = backendContext(config, topology, rank);
  if (!nics.empty() && info.pinsNics) context.nic = nics.at(static_cast<std::size_t>(rank));
  if (!nics.empty() && !info.pinsNics) nics = pinnedBeforeInit(early, nics.at(static_cast<std::size_t>(rank)));
  std::unique_ptr<worker::Backend> backend = info.create(context);
  describeGpus(topology, *backend);
  if (rank == 0) {
    recordBindings(topology);
    for (std::size_t r = 0; r < nics.size(); ++r) topology.ranks.at(r).pinnedNic = nics[r].name();
  }
  return backend;
}

// The run's exit code on every rank: rank 0 names the results file and, when some measurement got
// wrong data, says which (exit 1).
int finalVerdict(bool root, const std::string& output, const std::vector<WrongResult>& wrong) {
  int code = static_cast<int>(core::ExitCode::kOk);
  if (root) {
    fmt::print("# Results: {} (complete)\n", output);
    std::fflush(stdout);
    if (!wrong.empty()) {
      std::string message = fmt::format("wrong results in {} measurement(s):", wrong.size());
      constexpr std::size_t kShown = 20;
      for (std::size_t i = 0; i < wrong.size() && i < kShown; ++i) message += "\n  " + wrong[i].what;
      if (wrong.size() > kShown) {
        message += fmt::format("\n  ... and {} more (see /collectives in the file)", wrong.size() - kShown);
      }
      printError(message);
      code = static_cast<int>(core::ExitCode::kMeasuredFailure);
    }
  }
  FM_MPI(MPI_Bcast(&code, 1, MPI_INT, 0, MPI_COMM_WORLD));
  return code;
}

// `--preflight`: the checks, the table on rank 0, exit 0 or 2 (every rank the same). Nothing is
// written; the output is only tried.
int preflight(RunConfig config, bool force, const std::vector<core::HostProbe>& probes, const core::Topology& topology,
              const std::string& backend) {
  int rank = 0;
  FM_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  std::vector<std::string> problems = gpuProblems(probes, topology, config, backend);
  std::string unwritable;
  if (rank == 0) {
    try {
      const bool defaulted = config.output.empty();
      core::checkOutput(defaulted ? defaultOutputPath() : config.output,
                        {.what = "results file", .replace = force, .inputs = {config.fabricFile, config.accept},
                         .createParents = defaulted});
    } catch (const core::UsageError& e) {
      unwritable = e.what();
    }
  }
  unwritable = worker::broadcastString(MPI_COMM_WORLD, unwritable);
  if (!unwritable.empty()) problems.push_back(unwritable);
  if (rank == 0) {
    fmt::print("{}# backend {}\n", preflightReport(probes, topology, problems), backend);
    std::fflush(stdout);
  }
  if (!problems.empty()) {
    throw core::UsageError(fmt::format("preflight: {}{}", problems.front(),
                                       problems.size() > 1 ? fmt::format(" (and {} more above)", problems.size() - 1) : ""));
  }
  return static_cast<int>(core::ExitCode::kOk);
}

// The process's peak resident memory (getrusage's ru_maxrss, KiB on Linux).
std::uint64_t peakResidentBytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<std::uint64_t>(usage.ru_maxrss) * 1024;
}

// Every step of `plan` with its progress line and under the watchdog, then the sinks finished and
// the run's verdict (the exit code).
int measure(const RunConfig& config, const core::Topology& topology, const FabricClaims& claims, core::Plan& plan,
            worker::Executor& executor, Sinks& sinks, Resuming& resuming, const NodeInventories& inventories,
            double planSeconds) {
  const bool root = resuming.root;
  Progress progress(root ? config.progress : ProgressMode::kOff, stderr, plan);
  // A step past its deadline: rank 0's watchdog thread records who holds it up, flushes the
  // file and ends the job (the main thread may be stuck in MPI; the thread makes no MPI call).
  worker::Watchdog watchdog(MPI_COMM_WORLD, kWatchdogGrace.count(), [&](const worker::Watchdog::Hang& hang) {
    const core::Finding f = hangFinding(hang.step, progress.describe(hang.step), hang.waitedSeconds,
                                        hang.deadlineSeconds, hang.verdict, topology);
    progress.clear();
    const bool recorded = sinks.tryEach([&](core::RecordSink& s) { s.finding(f); }, kWatchdogGrace);
    printError(f.message + (recorded ? "" : " (the results file could not be updated: its writer is busy)"));
  });
  executor.setObserver(&watchdog);
  Steps steps{config, topology, claims, progress, watchdog, sinks, resuming, {.planSeconds = planSeconds}};
  std::vector<WrongResult> wrong;
  runPlan(topology, plan, executor, steps, wrong);
  progress.end();
  if (root) resuming.publish();  // every step was in the file already
  const NodeInventories::End end = inventories.readEnd(topology);
  core::InventoryRows endRows;
  endRows.counters = end.counters;
  endRows.endpoints = gatherEndpoints(MPI_COMM_WORLD, executor.backend().endpointPaths());
  sinks.each([&](core::RecordSink& s) { s.inventoryEnd(endRows); });
  for (const core::Finding& f : end.findings) sinks.each([&](core::RecordSink& s) { s.finding(f); });
  core::RankZeroCosts costs = steps.costs;
  costs.writeSeconds = sinks.seconds();
  costs.peakRssBytes = peakResidentBytes();
  sinks.each([&](core::RecordSink& s) { s.costs(costs); });
  sinks.each([&](core::RecordSink& s) { s.finish(true); });

  return finalVerdict(root, config.output, wrong);
}

// --nic-per-rank on the mpi backend (or auto, which may become it): MPI's NIC, pinned before
// MPI_Init. Arguments that do not parse pin nothing; every rank says why after MPI_Init.
worker::NicChoice pinMpiEarly(const std::vector<std::string>& args) {
  try {
    const ParsedRun parsed = parseRunOptions(args);
    const RunConfig& c = parsed.config;
    if (parsed.help || c.nicPerRank.empty()) return {};
    const worker::BackendInfo* info = worker::findBackend(c.backend);
    if (c.backend != "auto" && (info == nullptr || info->pinsNics)) return {};
    return pinBeforeMpiInit(c.nicPerRank, c.sysfsRoot, c.gpusPerNode);
  } catch (const core::UsageError&) {
    return {};
  }
}

}  // namespace

int runCommand(int argc, char** argv, const std::vector<std::string>& args) {
  const worker::NicChoice early = pinMpiEarly(args);  // before MPI_Init, which picks MPI's devices
  MpiSession session(argc, argv);
  int rank = 0;
  FM_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  const bool root = rank == 0;

  try {
    // Every rank parses the same arguments and reaches the same verdict: no communication needed.
    const ParsedRun parsed = parseRunOptions(args);
    if (parsed.help) {
      if (root) fmt::print("{}", runHelpText());
      return 0;
    }
    RunConfig config = parsed.config;
    const core::OutputLock lock = config.preflight ? core::OutputLock() : claimResults(rank, parsed, config);
    std::optional<EndOnInterrupt> interrupts;
    if (!config.preflight) interrupts.emplace(root ? config.output : "");
    std::optional<results::ResultsFile> stopped = readStoppedRun(rank, parsed, config);

    const std::vector<core::HostProbe> probes = worker::exchangeProbes(MPI_COMM_WORLD, topologies::probeHost());
    core::Topology topology = topologies::buildTopology(probes, config.ranksPerNode);
    // ranks of different builds might not even plan the same steps: refused before anything else
    if (const auto stale = versionProblems(probes, topology); !stale.empty()) throw core::UsageError(stale.front());
    const worker::BackendChoice choice = worker::resolveBackend(config.backend, gpuShortage(topology, config));
    const std::string& backendName = choice.name;
    const std::optional<Profile> accept = acceptanceProfile(rank, config);  // a bad profile: before anything
    if (config.preflight) return preflight(config, parsed.force, probes, topology, backendName);
    applyBackendDefaults(config, backendName);
    if (accept) measureWhatItJudges(config, *accept, *choice.info);
    if (const std::string shortage = gpuShortage(topology, config);
        config.cudaPairs && !shortage.empty()) {
      throw core::UsageError("--pair-memory cuda needs one GPU per rank: " + shortage);
    }
    onRootAgreeing(rank, [&] { topology.fabric = fabricOf(config, topology); });
    const FabricClaims claims = agreedClaims(MPI_COMM_WORLD, topology);
    const RealTimer planning;
    core::Plan plan = makePlan(config, topology, claims);  // grows when retests are planned
    const double planSeconds = planning.seconds();
    // host buffers must fit in host memory; GPU buffers failing to fit fail cudaMalloc, loudly
    if (choice.info->memory == worker::MemoryKind::kHost) checkMemory(plan, topology);

    onRootAgreeing(rank, [&] { core::requireDirectory(config.sysfsRoot, "--sysfs-root"); });
    const NodeInventories inventories(topology, config.sysfsRoot);
    std::unique_ptr<worker::Backend> backend = startBackend(config, *choice.info, inventories, topology, rank, early);
    worker::Executor executor(MPI_COMM_WORLD, *backend, plan, topology, config.faults);
    requireSomethingToMeasure(plan, executor);
    worker::checkStorage(MPI_COMM_WORLD, plan);

    Resuming resuming = resumingOf(rank, parsed.resume, stopped, topology, plan);

    FileSinks files;
    onRootAgreeing(rank, [&] { files = openFileSinks(config, stopped.has_value(), resuming); });

    results::ConsoleSink console(stdout);
    Sinks sinks;
    if (root) {
      sinks.add(files.file.get());
      sinks.add(&console);
      sinks.add(files.journal.get());
    }
    const int kept = static_cast<int>(std::count(resuming.recorded.begin(), resuming.recorded.end(), 1));
    const core::Provenance provenance =
        stopped ? resumedProvenance(stopped->provenance, plan.stepCount(), kept, utcNow(false), shellJoin(argc, argv))
                : newProvenance(shellJoin(argc, argv), args, backendName, topology, config, plan);
    const std::vector<core::ScopeRecord> scopes = scopeRecords(plan);
    sinks.each([&](core::RecordSink& s) { s.begin(provenance, topology, scopes); });
    if (root && !choice.reason.empty()) {
      fmt::print("# backend {} (auto: {})\n", backendName, choice.reason);
      std::fflush(stdout);
    }
    if (stopped) {
      if (root) {
        fmt::print("# resuming {}: {} of {} steps taken from the file, the rest measured now\n", config.output,
                   kept, plan.stepCount());
        std::fflush(stdout);
      }
      // what the stopped run found that no step brings back: its hang
      for (const core::Finding& f : resuming.replay.carriedFindings()) sinks.each([&](core::RecordSink& s) { s.finding(f); });
      stopped.reset();
    }
    if (root) {
      for (const core::Finding& f : inventories.findings(topology)) sinks.each([&](core::RecordSink& s) { s.finding(f); });
    }

    const int code = measure(config, topology, claims, plan, executor, sinks, resuming, inventories, planSeconds);
    return accept ? judgeRun(rank, config, *accept, code) : code;
  } catch (const core::UsageError& e) {
    // Usage errors are reached by every rank together (parsing and planning are deterministic,
    // rank-0-only checks are agreed by broadcast), so all ranks finalize and exit 2.
    if (root) printError(e.what());
    return static_cast<int>(core::ExitCode::kUsage);
  }
}

}  // namespace fabricmap::orchestrator
