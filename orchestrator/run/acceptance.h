// `fabricmap run --accept PROFILE`: the renter's acceptance in one command. The profile decides
// what the run measures (the phases and sizes its checks judge); once the file is complete, rank 0
// judges it as `fabricmap verify` does, records the verdict in the file's /verdict (so the
// provider can hand the file over and the customer re-verifies it) and prints it as the run's last
// word. Exit 0 on PASS, 1 on FAIL or NOT JUDGED (a wrong result's exit 1 stays).
#pragma once

#include <optional>
#include <string>

#include "orchestrator/run/run_config.h"
#include "orchestrator/verdicts/profiles.h"
#include "worker/backend.h"

namespace fabricmap::orchestrator {

// The profile --accept names: a built-in profile's name, else a profile file, which rank 0 reads
// and every rank parses from the same text (one plan on every rank). Nothing without --accept.
// Throws UsageError on every rank for an unknown name or a file that is not a profile.
std::optional<Profile> acceptanceProfile(int rank, const RunConfig& config);

// Adds what the profile judges to what the run measures, once the backend's defaults are set:
// all_reduce sized to reach the profile's plateau sizes (busbw checks), the pairwise phase (pair
// and line-rate checks), the scaling sweep (scaling efficiency). Without phase switches only those
// phases run (of the collectives only all_reduce; the backend's own phases, such as the GPU copy
// matrix, stay); with switches (or --ops, --scopes) they are added to what was asked.
// A profile that judges only the hardware leaves the run's phases as they are. Throws UsageError
// when the backend cannot measure what the profile judges, or -e stops below its plateau.
void measureWhatItJudges(RunConfig& config, const Profile& profile, const worker::BackendInfo& backend);

// Rank 0 reads the finished file back, judges it, records /verdict and prints the checks and the
// verdict last; every rank returns the same code: `runCode` when it is not 0, else 0 for PASS and
// 1 for FAIL or NOT JUDGED.
int judgeRun(int rank, const RunConfig& config, const Profile& profile, int runCode);

}  // namespace fabricmap::orchestrator
