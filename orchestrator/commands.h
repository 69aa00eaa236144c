// Subcommands of the fabricmap binary. Each returns the process exit code (core::ExitCode) and
// throws core::Error for main() to report.
#pragma once

#include <string>
#include <vector>

namespace fabricmap::orchestrator {

// `fabricmap run`: the MPI job. argc/argv are the process's own (for MPI_Init).
int runCommand(int argc, char** argv, const std::vector<std::string>& args);
// `fabricmap show FILE.h5 [--json]`.
int showCommand(const std::vector<std::string>& args);
// `fabricmap topo [--file TOPO.txt] [--json]`.
int topoCommand(const std::vector<std::string>& args);
// `fabricmap inventory [--sysfs-root DIR] [--interval S] [--json]`.
int inventoryCommand(const std::vector<std::string>& args);
// `fabricmap report FILE.h5 [-o report.html]`.
int reportCommand(const std::vector<std::string>& args);
// `fabricmap predict FILE.h5 [FILE2.h5 ...] --model M --tp T --pp P --dp D [--json]`.
int predictCommand(const std::vector<std::string>& args);
// `fabricmap advise FILE.h5 [FILE2.h5 ...] --model M [--framework F] [--json]`.
int adviseCommand(const std::vector<std::string>& args);
// `fabricmap import nccl-tests LOG... -o FILE.h5 [--force] [--op OP]`.
int importCommand(const std::vector<std::string>& args);
// `fabricmap compare A.h5 B.h5 ... [--json]`.
int compareCommand(const std::vector<std::string>& args);
// `fabricmap verify FILE.h5 --profile P [--json]`: 0 pass, 1 fail.
int verifyCommand(const std::vector<std::string>& args);
// `fabricmap history FILES|DIR... [--json] [--html OUT] [--write-baseline B.json]`.
int historyCommand(const std::vector<std::string>& args);

// Throws UsageError for an argument holding one of Boost.Program_options' message placeholders
// ("%value%", "%canonical_option%", ...): formatting its error message about such an argument
// never ends (Boost 1.74). Call before handing arguments to Boost.
void refusePlaceholders(const std::vector<std::string>& args);

}  // namespace fabricmap::orchestrator
