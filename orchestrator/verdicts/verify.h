// Acceptance checks (`fabricmap verify`): a results file judged against a profile, check by check,
// on the large-message plateau (plateau.h), never on an average over all sizes. Pure code: the
// command reads the file and the profile, prints, and decides the exit code.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "orchestrator/verdicts/history.h"
#include "orchestrator/verdicts/profiles.h"
#include "results/h5_reader.h"
#include "results/verdict.h"

namespace fabricmap::orchestrator {

enum class CheckStatus { kPass, kFail, kMissing };
std::string_view name(CheckStatus s);  // "pass", "fail", "missing"

struct Check {
  std::string check;    // "topology_class", "gpus_per_node", "gpu_model", "intra_allreduce_busbw",
                        // "inter_allreduce_busbw_per_nic", "pair_fraction", "scaling_efficiency"
  std::string subject;  // "node1 (host-1)", "rail 0 (ranks 0,2)", "rank pairs inter_node", ...
  std::string measured;  // as printed; "-" when missing
  std::string required;  // "FULL_NVSWITCH", ">= 296.0"
  std::optional<double> measuredValue;  // numeric checks
  std::optional<double> requiredValue;
  std::string unit;  // "GB/s", "GPUs", "" ...
  CheckStatus status = CheckStatus::kMissing;
  std::string detail;  // how it was measured, or why it is missing
};

struct Verification {
  std::string file;
  Profile profile;
  bool allowMissing = false;
  std::vector<Check> checks;
  int failed = 0;   // checks that failed
  int missing = 0;  // checks not measured
  int passed = 0;   // checks that passed
  bool pass = false;  // no failure, and no missing check unless allowMissing
  results::Acceptance acceptance = results::Acceptance::kFail;  // pass, fail, or not judged (missing)
  std::vector<std::string> reasons;  // one per failing (or counted missing) check
  std::vector<std::string> notes;    // context that is no verdict (incomplete file, 2-node NIC caveat)
};

// With a baseline (`--baseline history.json`), its figures are judged too: each link class's and
// collective's figure of the file (history.h) against median - k x spread of the baseline; a figure
// of fewer than kBaselineMinRuns runs is not judged (a note says so). A profile that requires
// nothing judges the baseline alone.
Verification verify(const Profile& profile, const results::ResultsFile& file, bool allowMissing,
                    const Baseline* baseline = nullptr);

// The verdict as /verdict keeps it (createdUtc and toolVersion are the caller's).
results::VerdictRecord verdictRecordOf(const Verification& v);

// `fabricmap verify`'s text: the table of checks, how each was measured, the notes, then the
// counts and the verdict as the last line ("VERDICT: PASS|FAIL|NOT JUDGED (...)").
std::string verificationText(const Verification& v);

// `fabricmap verify --json` (README.md documents it).
nlohmann::ordered_json verificationToJson(const Verification& v);

}  // namespace fabricmap::orchestrator
