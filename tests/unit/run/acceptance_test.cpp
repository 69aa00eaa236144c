// `run --accept PROFILE`: what the profile judges is what the run measures (phases, all_reduce up
// to the plateau sizes), refused where the backend cannot measure it or -e stops short.
#include "orchestrator/run/acceptance.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/error.h"
#include "orchestrator/run/run_config.h"
#include "orchestrator/verdicts/profiles.h"

namespace fabricmap::orchestrator {
namespace {

constexpr std::uint64_t kGiB = 1ull << 30;

RunConfig parse(std::vector<std::string> args) { return parseRunOptions(args).config; }

// The backend a GPU run takes (collectives, pairs, training traffic), and one that only has pairs.
worker::BackendInfo gpuBackend() {
  worker::BackendInfo b;
  b.name = "gpu-like";
  b.measures.collectives = b.measures.pairs = b.measures.traffic = true;
  return b;
}

worker::BackendInfo pairsOnly() {
  worker::BackendInfo b;
  b.name = "pairs-only";
  b.measures.pairs = true;
  return b;
}

bool runsAllReduce(const RunConfig& c) {
  return std::find(c.ops.begin(), c.ops.end(), core::Op::kAllReduce) != c.ops.end();
}

std::string errorOf(RunConfig c, const Profile& p, const worker::BackendInfo& b) {
  try {
    measureWhatItJudges(c, p, b);
  } catch (const core::UsageError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return {};
}

// The HGX profile judges all_reduce plateaus from 1 GiB, pairs and scaling: on a GPU run's quick
// sweep (8 B x4 up to 1 GiB, whose top is 512 MiB) -e is raised to the next swept size, 2 GiB.
TEST(Accept, AnHgxProfileMeasuresItsPlateauPairsAndScaling) {
  RunConfig c = parse({"--accept", "hgx-h100-8"});
  c.maxBytes = kGiB;  // what the backend's GPU defaults set
  c.copies = true;
  const Profile p = *findProfile("hgx-h100-8");
  measureWhatItJudges(c, p, gpuBackend());
  EXPECT_TRUE(c.collectives);
  EXPECT_TRUE(c.pairwise);
  EXPECT_TRUE(c.scaling);
  EXPECT_TRUE(c.copies) << "the backend's own phases stay";
  EXPECT_EQ(c.ops, std::vector<core::Op>{core::Op::kAllReduce}) << "of the collectives, what it judges";
  EXPECT_EQ(c.maxBytes, 2 * kGiB);
  EXPECT_EQ(c.accept, "hgx-h100-8");
  EXPECT_FALSE(c.allowMissing);
}

// Only what it judges runs without phase switches; with them, its phases are added.
TEST(Accept, PhasesAreWhatItJudgesOrAddedToThoseAsked) {
  Profile pairs;
  pairs.name = "pairs";
  pairs.minPairFraction = 0.9;
  RunConfig c = parse({"--accept", "x"});
  measureWhatItJudges(c, pairs, gpuBackend());
  EXPECT_FALSE(c.collectives);
  EXPECT_TRUE(c.pairwise);
  EXPECT_FALSE(c.scaling);
  EXPECT_EQ(c.maxBytes, 8u << 20) << "no all_reduce judged: the sweep is as asked";

  c = parse({"--accept", "x", "--collectives", "--ops", "alltoall", "-e", "2M"});
  measureWhatItJudges(c, pairs, gpuBackend());
  EXPECT_TRUE(c.collectives);
  EXPECT_TRUE(c.pairwise);
  EXPECT_FALSE(runsAllReduce(c));

  Profile busbw;
  busbw.name = "busbw";
  busbw.minIntraAllReduceBusbw = 1;
  busbw.minPlateauBytes = 1 << 20;
  measureWhatItJudges(c, busbw, gpuBackend());
  EXPECT_TRUE(runsAllReduce(c)) << "the profile judges all_reduce";
  EXPECT_EQ(c.maxBytes, 2u << 20) << "the sweep as given reaches the plateau";

  // a profile of the hardware alone leaves the run as asked
  Profile hardware;
  hardware.name = "hw";
  hardware.minGpuMemoryGb = 80;
  c = parse({"--accept", "x"});
  const RunConfig before = c;
  measureWhatItJudges(c, hardware, gpuBackend());
  EXPECT_EQ(c.collectives, before.collectives);
  EXPECT_EQ(c.pairwise, before.pairwise);
  EXPECT_EQ(c.maxBytes, before.maxBytes);
}

// Additive steps reach the plateau the same way; an -e the user gave below it is refused, as is a
// backend without the collectives (or the pairs) the profile judges.
TEST(Accept, RaisesOrRefuses) {
  Profile busbw;
  busbw.name = "busbw";
  busbw.minIntraAllReduceBusbw = 1;
  busbw.minPlateauBytes = 1 << 20;
  RunConfig c = parse({"--accept", "x", "-b", "100K", "-i", "300K"});
  c.maxBytes = 400 << 10;  // a default that stops short
  measureWhatItJudges(c, busbw, gpuBackend());
  EXPECT_EQ(c.maxBytes, 1300u << 10);  // 100K + k x 300K: the first at or above 1024K

  const std::string shortSweep = errorOf(parse({"--accept", "x", "-e", "512K"}), busbw, gpuBackend());
  EXPECT_NE(shortSweep.find("the sweep stops at 512 KiB"), std::string::npos) << shortSweep;
  EXPECT_NE(shortSweep.find("min_plateau_bytes 1 MiB"), std::string::npos) << shortSweep;

  const std::string noCollectives = errorOf(parse({"--accept", "x"}), busbw, pairsOnly());
  EXPECT_NE(noCollectives.find("pairs-only backend does not measure"), std::string::npos) << noCollectives;
  Profile pairs;
  pairs.name = "pairs";
  pairs.minLineRateFraction = 0.8;
  worker::BackendInfo none = pairsOnly();
  none.measures.pairs = false;
  EXPECT_NE(errorOf(parse({"--accept", "x"}), pairs, none).find("judges pairs"), std::string::npos);
}

TEST(Accept, Options) {
  EXPECT_TRUE(parse({}).accept.empty());
  const RunConfig c = parse({"--accept", "lease.txt", "--allow-missing"});
  EXPECT_EQ(c.accept, "lease.txt");
  EXPECT_TRUE(c.allowMissing);
  for (const std::vector<std::string>& bad : {std::vector<std::string>{"--allow-missing"},
                                              std::vector<std::string>{"--accept", ""}}) {
    EXPECT_THROW(parse(bad), core::UsageError);
  }
  // a resumed run must be judged as the stopped one was: the profile is a measurement setting
  RunConfig other = c;
  other.accept = "hgx-h100-8";
  const auto differences = measurementDifferences(c, other);
  EXPECT_EQ(differences.size(), 1u);
  EXPECT_NE(differences.front().find("accept"), std::string::npos);
}

}  // namespace
}  // namespace fabricmap::orchestrator
