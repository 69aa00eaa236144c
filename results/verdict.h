// /verdict of a results file: the acceptance verdict `fabricmap verify --record` writes into it.
#pragma once

#include <hdf5.h>

#include <optional>
#include <string>
#include <string_view>

namespace fabricmap::results {

struct VerdictRecord {
  bool pass = false;
  std::string profile;  // the profile's name
  std::string profileSource;  // "built-in" or the profile file
  int checks = 0;
  int failed = 0;
  int missing = 0;
  bool allowMissing = false;
  std::string reasons;  // one line per failing (or counted missing) check
  std::string createdUtc;
  std::string toolVersion;
};

// The three outcomes of an acceptance: every check judged passed (PASS; with --allow-missing, every
// judged check), one failed (FAIL), or none failed but some could not be judged from the file
// (NOT JUDGED): a check the file cannot answer is missing, never failed, and never passed either.
enum class Acceptance { kPass, kFail, kNotJudged };
Acceptance acceptanceOf(const VerdictRecord& v);
std::string_view name(Acceptance a);   // "pass", "fail", "not_judged" (JSON, /verdict's `verdict`)
std::string_view title(Acceptance a);  // "PASS", "FAIL", "NOT JUDGED" (for people)

// The acceptance as a headline, the first thing a reader sees: "ACCEPTANCE: FAIL against profile
// hgx-h100-8: 2 of 14 checks failed, 10 passed, 2 missing" / "ACCEPTANCE: NOT JUDGED against
// profile hgx-a100-40gb-8: 9 of 14 checks missing (5 judged, 5 passed)".
std::string acceptanceHeadline(const VerdictRecord& v);

// (Re)writes /verdict's attributes, crash-safe: the verdict goes into a copy beside the file
// (FILE.h5.verdict), which is synced and renamed over it, so a kill or a full disk leaves either
// the old file or the new one, never a half-written one. Throws UsageError when the file cannot be
// written or is still journaled (its run did not end cleanly: the journal is what holds the data).
// The caller holds the file's core::OutputLock (verify --record takes it; run --accept holds it).
void writeVerdict(const std::string& path, const VerdictRecord& verdict);
// /verdict of a file, nothing when it has none.
std::optional<VerdictRecord> readVerdict(const std::string& path);
// The same from a file already open (the results reader).
std::optional<VerdictRecord> readVerdict(hid_t file);

}  // namespace fabricmap::results
