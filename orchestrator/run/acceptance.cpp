// `run --accept PROFILE` (acceptance.h): what the profile judges, measured; the file judged.
#include "orchestrator/run/acceptance.h"

#include <mpi.h>

#include <algorithm>
#include <cstdio>

#include <fmt/format.h>

#include "core/config.h"
#include "core/error.h"
#include "core/files.h"
#include "core/text.h"
#include "core/units.h"
#include "orchestrator/run/provenance.h"
#include "orchestrator/verdicts/verify.h"
#include "results/h5_reader.h"
#include "results/verdict.h"
#include "worker/comm.h"
#include "worker/mpi_check.h"

namespace fabricmap::orchestrator {
namespace {

// A profile file is at most this (as `verify --profile-file` reads it).
constexpr std::size_t kMaxProfileBytes = 64 * 1024;

struct Judged {
  bool busbw = false;    // intra or inter all_reduce plateaus
  bool pairs = false;    // the pairwise matrices (pair fraction, line-rate share)
  bool scaling = false;  // the scaling sweep
};

Judged judgedBy(const Profile& p) {
  return {p.minIntraAllReduceBusbw || p.minInterAllReduceBusbwPerNic, p.minPairFraction || p.minLineRateFraction,
          p.minScalingEfficiency.has_value()};
}

// The sweep's largest size reaches the profile's plateau sizes: -e is raised to the first swept
// size at or above them (a factor-4 sweep from 8 B stops at 512 MiB under a 1 GiB -e); an -e the
// user gave below them is refused.
void reachPlateau(RunConfig& c, const Profile& p) {
  if (p.minPlateauBytes == 0) return;
  const auto sizes = core::sweepSizes(c.minBytes, c.maxBytes, c.stepFactor, c.stepBytes);
  if (!sizes.empty() && sizes.back() >= p.minPlateauBytes) return;
  if (c.maxBytesGiven) {
    throw core::UsageError(fmt::format("--accept {}: the sweep stops at {}, below the sizes the profile judges its "
                                       "plateau on (min_plateau_bytes {}): raise -e/--max-bytes",
                                       p.name, core::formatBytes(sizes.empty() ? 0 : sizes.back()),
                                       core::formatBytes(p.minPlateauBytes)));
  }
  std::uint64_t size = c.minBytes;
  while (size < p.minPlateauBytes) size = c.stepBytes > 0 ? size + c.stepBytes : size * c.stepFactor;
  c.maxBytes = size;
}

}  // namespace

std::optional<Profile> acceptanceProfile(int rank, const RunConfig& config) {
  if (config.accept.empty()) return std::nullopt;
  if (auto builtin = findProfile(config.accept)) return builtin;
  // a file: rank 0 reads it, every rank parses the same text (and fails the same way)
  int failed = 0;
  std::string text;
  if (rank == 0) {
    try {
      text = core::readUserFile(config.accept, "profile file", kMaxProfileBytes);
    } catch (const core::UsageError& e) {
      failed = 1;
      text = e.what();
    }
  }
  FM_MPI(MPI_Bcast(&failed, 1, MPI_INT, 0, MPI_COMM_WORLD));
  text = worker::broadcastString(MPI_COMM_WORLD, text);
  if (failed) {
    throw core::UsageError(fmt::format("--accept {}: not a built-in profile ({}), and {}",
                                       core::printable(config.accept, 256), profileNames(), text));
  }
  return parseProfile(text, config.accept);
}

void measureWhatItJudges(RunConfig& c, const Profile& p, const worker::BackendInfo& backend) {
  const Judged judged = judgedBy(p);
  if (!judged.busbw && !judged.pairs && !judged.scaling) return;  // the hardware only: the run as asked
  if (c.phasesGiven) {
    c.collectives = c.collectives || judged.busbw;
    c.pairwise = c.pairwise || judged.pairs;
  } else {
    // the profile decides what runs: of the collectives, the all_reduce it judges
    c.collectives = judged.busbw;
    c.pairwise = judged.pairs;
    if (judged.busbw) c.ops = {core::Op::kAllReduce};
  }
  c.scaling = c.scaling || judged.scaling;
  if ((judged.busbw && !backend.measures.collectives) || (judged.scaling && !backend.measures.traffic)) {
    throw core::UsageError(fmt::format("--accept {}: the profile judges all_reduce{}, which the {} backend does not "
                                       "measure (it has no collectives)",
                                       p.name, judged.scaling ? " and its scaling" : "", backend.name));
  }
  if (judged.pairs && !backend.measures.pairs) {
    throw core::UsageError(
        fmt::format("--accept {}: the profile judges pairs, which the {} backend does not measure", p.name, backend.name));
  }
  if (!judged.busbw) return;
  if (std::find(c.ops.begin(), c.ops.end(), core::Op::kAllReduce) == c.ops.end()) c.ops.push_back(core::Op::kAllReduce);
  reachPlateau(c, p);
}

int judgeRun(int rank, const RunConfig& config, const Profile& profile, int runCode) {
  int code = runCode;
  if (rank == 0) {
    int verdict = static_cast<int>(core::ExitCode::kMeasuredFailure);
    try {
      const Verification v = verify(profile, results::readResults(config.output), config.allowMissing);
      results::VerdictRecord record = verdictRecordOf(v);
      record.createdUtc = utcNow(false);
      record.toolVersion = FABRICMAP_VERSION;
      results::writeVerdict(config.output, record);
      fmt::print("#\n# acceptance of {} against profile {} (recorded in its /verdict; `fabricmap verify {} "
                 "--profile ...` judges it again)\n{}",
                 config.output, profile.name, config.output, verificationText(v));
      verdict = static_cast<int>(v.pass ? core::ExitCode::kOk : core::ExitCode::kMeasuredFailure);
    } catch (const core::Error& e) {
      // the measurements are in the file; only the judging failed: no verdict, not a pass
      fmt::print(stderr, "fabricmap run: error: --accept: the file could not be judged: {}\n", e.what());
    }
    std::fflush(stdout);
    if (code == static_cast<int>(core::ExitCode::kOk)) code = verdict;
  }
  FM_MPI(MPI_Bcast(&code, 1, MPI_INT, 0, MPI_COMM_WORLD));
  return code;
}

}  // namespace fabricmap::orchestrator
