// The fabricmap binary: subcommand dispatch and the one place that turns errors into exit codes.
#include <mpi.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/config.h"
#include "core/error.h"
#include "core/text.h"
#include "orchestrator/commands.h"

namespace {

constexpr const char* kUsage =
    "usage: fabricmap <command> [options]\n"
    "\n"
    "commands:\n"
    "  run      measure collectives under mpirun/srun and write an HDF5 results file\n"
    "  show     print what a results file holds (--json for machines)\n"
    "  report   write a self-contained HTML report of a results file (-o report.html)\n"
    "  compare  results files side by side, differences beyond a tolerance marked\n"
    "  verify   acceptance of a results file against a profile or baseline (exit 0 pass, 1 fail or not judged)\n"
    "  history  many runs in time order: per node and node pair blamed, flapping, bandwidth trend; a baseline\n"
    "  predict  training step time, utilization and cost of a model and layout from results files\n"
    "  advise   the layouts of a model that fit the measured GPUs, fastest on the measured fabric first\n"
    "  import   bring nccl-tests logs into a results file (import nccl-tests LOG... -o FILE.h5)\n"
    "  topo     discover (or --file: parse a saved `nvidia-smi topo -m`) and classify this node\n"
    "  inventory  this node's RDMA ports, PCIe links and GPUDirect readiness from sysfs, judged\n"
    "\n"
    "fabricmap <command> --help describes each command's options.\n";

bool mpiActive() {
  int initialized = 0;
  int finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  return initialized && !finalized;
}

// A failure that is not a shared usage error may have happened on one rank only: the others could
// be waiting in a collective, so the whole job is aborted rather than left to hang.
// An error's message as printed: no argument echoed in it is longer than a screen.
std::string shown(const std::string& message) { return fabricmap::core::shortenWords(message, 512); }

[[noreturn]] void abortJob(const std::string& command, const std::string& message, int code) {
  if (!mpiActive()) {
    fmt::print(stderr, "fabricmap {}: error: {}\n", command, shown(message));
    std::exit(code);
  }
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  fmt::print(stderr, "fabricmap {}: error on rank {} ({}): {}\n", command, rank, host, shown(message));
  std::fflush(stderr);
  // the job is ended on purpose: the SIGTERM mpirun then sends every rank, this one too, is not an
  // interruption to report (orchestrator/run/interrupt)
  for (const int signal : {SIGINT, SIGTERM, SIGHUP}) std::signal(signal, SIG_DFL);
  if (mpiActive()) MPI_Abort(MPI_COMM_WORLD, code);
  std::exit(code);
}

}  // namespace

int main(int argc, char** argv) {
  using fabricmap::core::ExitCode;
  if (argc < 2) {
    fmt::print(stderr, "{}", kUsage);
    return static_cast<int>(ExitCode::kUsage);
  }
  const std::string command = argv[1];
  const std::vector<std::string> args(argv + 2, argv + argc);
  if (command == "--help" || command == "-h" || command == "help") {
    fmt::print("{}", kUsage);
    return 0;
  }
  if (command == "--version") {
    fmt::print("fabricmap {} ({})\n", FABRICMAP_VERSION, FABRICMAP_GIT_REVISION);
    return 0;
  }
  try {
    if (command == "run") return fabricmap::orchestrator::runCommand(argc, argv, args);
    if (command == "show") return fabricmap::orchestrator::showCommand(args);
    if (command == "report") return fabricmap::orchestrator::reportCommand(args);
    if (command == "topo") return fabricmap::orchestrator::topoCommand(args);
    if (command == "inventory") return fabricmap::orchestrator::inventoryCommand(args);
    if (command == "predict") return fabricmap::orchestrator::predictCommand(args);
    if (command == "advise") return fabricmap::orchestrator::adviseCommand(args);
    if (command == "import") return fabricmap::orchestrator::importCommand(args);
    if (command == "compare") return fabricmap::orchestrator::compareCommand(args);
    if (command == "verify") return fabricmap::orchestrator::verifyCommand(args);
    if (command == "history") return fabricmap::orchestrator::historyCommand(args);
    fmt::print(stderr, "fabricmap: error: unknown command '{}'\n{}", fabricmap::core::printable(command, 64), kUsage);
    return static_cast<int>(ExitCode::kUsage);
  } catch (const fabricmap::core::UsageError& e) {
    if (mpiActive()) abortJob(command, e.what(), static_cast<int>(e.code()));
    fmt::print(stderr, "fabricmap {}: error: {}\n", command, shown(e.what()));
    return static_cast<int>(e.code());
  } catch (const fabricmap::core::Error& e) {
    abortJob(command, e.what(), static_cast<int>(e.code()));
  } catch (const std::exception& e) {
    abortJob(command, e.what(), static_cast<int>(ExitCode::kRuntimeFault));
  }
}
