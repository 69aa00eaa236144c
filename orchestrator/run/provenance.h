// Provenance of a run: tool, libraries, launcher facts (Slurm), time, layout.
#pragma once

#include <string>

#include "core/records.h"

namespace fabricmap::orchestrator {

std::string utcNow(bool compact);  // "2026-12-02T14:15:07Z", or "20261202T141507Z" when compact
// The command line as a shell would re-run it (arguments with spaces or quotes are quoted).
std::string shellJoin(int argc, char** argv);

core::Provenance makeProvenance(const std::string& commandLine, const std::string& backend,
                                const core::Topology& topology);

}  // namespace fabricmap::orchestrator
