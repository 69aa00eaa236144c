// Fuzz target: an acceptance-profile file (`fabricmap verify --profile-file`), parsed, then used
// to judge a small results file and printed as `verify --json` does. A bad profile must be a
// UsageError naming the file and line, never a crash.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/error.h"
#include "orchestrator/verdicts/profiles.h"
#include "orchestrator/verdicts/verify.h"

namespace {

// Two nodes of two ranks with an intra and an inter all_reduce sweep: every check has something
// to judge.
fabricmap::results::ResultsFile smallRun() {
  namespace core = fabricmap::core;
  fabricmap::results::ResultsFile f;
  f.path = "fuzz.h5";
  f.complete = true;
  for (int n = 0; n < 2; ++n) {
    core::NodeRecord node;
    node.node = n;
    node.ranks = 2;
    node.topologyClass = "NO_GPU";
    f.topology.nodes.push_back(node);
    for (int l = 0; l < 2; ++l) {
      core::RankRecord r;
      r.rank = n * 2 + l;
      r.node = n;
      r.localRank = l;
      f.topology.ranks.push_back(r);
    }
  }
  for (std::uint64_t bytes : {1u << 20, 1u << 22}) {
    for (int g = 0; g < 2; ++g) {
      core::CollectiveRecord r;
      r.op = "all_reduce";
      r.bytes = bytes;
      r.group = g;
      r.nranks = 2;
      r.busbwMedian = 1.5;
      r.scope = "intra";
      r.ranks = g == 0 ? "0-1" : "2-3";
      f.collectives.push_back(r);
      r.scope = "inter";
      r.ranks = g == 0 ? "0,2" : "1,3";
      f.collectives.push_back(r);
    }
  }
  return f;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace orch = fabricmap::orchestrator;
  static const fabricmap::results::ResultsFile run = smallRun();
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const orch::Profile profile = orch::parseProfile(text, "fuzz.txt");
    const orch::Verification v = orch::verify(profile, run, false);
    (void)orch::verificationToJson(v).dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
  } catch (const fabricmap::core::UsageError& e) {
    if (std::string_view(e.what()).rfind("fuzz.txt", 0) != 0) __builtin_trap();  // every error names the file
  }
  return 0;
}
