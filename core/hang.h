// Who holds up a step that overran its deadline: the watchdog's verdict, as pure logic (the
// watchdog in worker/ hears the ranks; the analysis turns the verdict into a `hang` finding).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace fabricmap::core {

// Where a rank is within a step.
enum class StepPhase : std::uint8_t {
  kStarting,   // preparing: buffers, communicators, test data
  kMeasuring,  // in its group's measurement (waiting there for the group's other ranks too)
  kDone,       // its part is done; waiting for the other groups
};
std::string_view name(StepPhase phase);

// One rank's last word, as rank 0 heard it.
struct RankProgress {
  int step = -1;  // -1: nothing heard yet
  StepPhase phase = StepPhase::kStarting;
  double silentSeconds = 0;  // since its last datagram
};

// Who holds up step `step`: the culprits and the unfinished ranks waiting on them. Culprits are,
// in this order of evidence: ranks silent for more than `silentAfter` seconds (stopped, dead, or
// cut off), even one that had finished its part; otherwise unfinished ranks that never reached the
// measurement (still in an earlier step, or stuck preparing); otherwise every unfinished rank
// (stuck inside one measurement together). `why` says which.
struct HangVerdict {
  std::vector<int> culprits;
  std::vector<int> waiting;
  std::string why;
};
HangVerdict judgeHang(int step, const std::vector<RankProgress>& ranks, double silentAfter);

}  // namespace fabricmap::core
