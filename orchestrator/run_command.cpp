// `fabricmap run`: bootstrap, plan, execute every step, record. Every rank runs this function;
// rank 0 also writes the results. Decisions that end the job are taken by all ranks together.
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <exception>
#include <filesystem>
#include <memory>

#include <fmt/format.h>

#include "core/error.h"
#include "core/units.h"
#include "orchestrator/commands.h"
#include "orchestrator/planner.h"
#include "orchestrator/progress.h"
#include "orchestrator/provenance.h"
#include "orchestrator/run_config.h"
#include "results/console.h"
#include "results/h5_writer.h"
#include "topologies/host_probe.h"
#include "topologies/rank_map.h"
#include "worker/backends.h"
#include "worker/comm.h"
#include "worker/executor.h"

namespace fabricmap::orchestrator {
namespace {

// MPI_Init/MPI_Finalize for the run. An exception that escapes leaves MPI initialized: main()
// aborts the job, since the other ranks may be waiting in a collective that this rank left
// (MPI_Finalize here would wait for them forever).
class MpiSession {
 public:
  MpiSession(int argc, char** argv) { MPI_Init(&argc, &argv); }
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
  ~MpiSession() {
    if (std::uncaught_exceptions() > 0) return;
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Finalize();
  }
};

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
  MPI_Bcast(&failed, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (failed) throw core::UsageError(message);
}

std::string defaultOutputPath() {
  const std::string stamp = utcNow(true);
  std::string path = "results/" + stamp + ".h5";
  for (int i = 2; std::filesystem::exists(path); ++i) path = fmt::format("results/{}-{}.h5", stamp, i);
  return path;
}

// A run in which every step would be waived measures nothing: say why instead of writing an empty
// file and reporting success.
void requireSomethingToMeasure(const core::Plan& plan, const worker::Executor& executor) {
  std::vector<std::string> reasons;
  const auto note = [&](const std::string& why) {
    if (std::find(reasons.begin(), reasons.end(), why) == reasons.end()) reasons.push_back(why);
  };
  for (const auto& step : plan.steps) {
    const std::string why = executor.waiver(step);
    if (why.empty()) return;
    note(why);
  }
  for (const auto& scope : plan.scopes) {
    if (!scope.waiver.empty()) note(fmt::format("scope {}: {}", core::name(scope.scope), scope.waiver));
  }
  std::string message = "nothing to measure";
  for (std::size_t i = 0; i < reasons.size() && i < 3; ++i) message += (i == 0 ? ": " : "; ") + reasons[i];
  throw core::UsageError(message + " (run under mpirun with 2+ ranks, with sizes and types the backend supports)");
}

struct WrongResult {
  std::string what;
};

}  // namespace

int runCommand(int argc, char** argv, const std::vector<std::string>& args) {
  MpiSession session(argc, argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const bool root = rank == 0;

  try {
    // Every rank parses the same arguments and reaches the same verdict: no communication needed.
    const ParsedRun parsed = parseRunOptions(args);
    if (parsed.help) {
      if (root) fmt::print("{}", runHelpText());
      return 0;
    }
    RunConfig config = parsed.config;

    const core::Topology topology = topologies::buildTopology(
        worker::exchangeProbes(MPI_COMM_WORLD, topologies::probeHost()), config.ranksPerNode);
    bool everyRankHasGpu = true;
    for (const auto& n : topology.nodes) everyRankHasGpu = everyRankHasGpu && n.gpus >= n.ranks;
    const std::string backendName = worker::resolveBackendName(config.backend, everyRankHasGpu);
    const core::Plan plan = makePlan(config, topology);
    checkMemory(plan, topology);

    std::unique_ptr<worker::Backend> backend = worker::createBackend(backendName);
    worker::Executor executor(MPI_COMM_WORLD, *backend, plan, config.faults);
    requireSomethingToMeasure(plan, executor);

    std::unique_ptr<results::H5Sink> file;
    onRootAgreeing(rank, [&] {
      const bool defaulted = config.output.empty();
      if (defaulted) config.output = defaultOutputPath();
      results::checkWritable(config.output, defaulted);
      file = std::make_unique<results::H5Sink>(config.output);
    });

    results::ConsoleSink console(stdout);
    std::vector<core::RecordSink*> sinks;
    if (root) sinks = {file.get(), &console};
    core::Provenance provenance = makeProvenance(shellJoin(argc, argv), backendName, topology);
    provenance.plannedSteps = static_cast<int>(plan.steps.size());
    provenance.runConfig = toJsonString(config);
    const std::vector<core::ScopeRecord> scopes = scopeRecords(plan);
    for (auto* s : sinks) s->begin(provenance, topology, scopes);

    Progress progress(root ? config.progress : ProgressMode::kOff, stderr, plan);
    std::vector<WrongResult> wrong;
    for (const core::CollectiveStep& step : plan.steps) {
      progress.starting(step);
      worker::StepResult result = executor.run(step);
      progress.finished(step);
      if (!root) continue;
      progress.clear();
      for (auto* s : sinks) s->step(result.step, result.rows);
      for (const auto& row : result.rows) {
        if (row.wrong == 0) continue;
        wrong.push_back({fmt::format("{} {} {} {}{} in scope {} group {}: {} wrong elements on "
                                     "rank(s) {}",
                                     row.op, row.dtype, core::formatBytes(step.bytes),
                                     row.inPlace ? "in-place" : "out-of-place",
                                     row.redop == "none" ? "" : " (" + row.redop + ")", row.scope,
                                     row.group, row.wrong, row.wrongRanks)});
      }
    }
    progress.end();
    for (auto* s : sinks) s->finish(true);

    int code = static_cast<int>(core::ExitCode::kOk);
    if (root) {
      fmt::print("# Results: {} (complete)\n", config.output);
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
    MPI_Bcast(&code, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return code;
  } catch (const core::UsageError& e) {
    // Usage errors are reached by every rank together (parsing and planning are deterministic,
    // rank-0-only checks are agreed by broadcast), so all ranks finalize and exit 2.
    if (root) printError(e.what());
    return static_cast<int>(core::ExitCode::kUsage);
  }
}

}  // namespace fabricmap::orchestrator
