// Progress on rank 0's stderr: step i of N, what it runs, elapsed time and an ETA.
#pragma once

#include <chrono>
#include <cstdio>
#include <map>
#include <string>

#include "core/plan.h"
#include "orchestrator/run/run_config.h"

namespace fabricmap::orchestrator {

class Progress {
 public:
  // kAuto resolves to live output when `err` is a terminal, otherwise off.
  Progress(ProgressMode mode, std::FILE* err, const core::Plan& plan);

  void starting(int step);  // before step `step` runs
  void clear();             // before other output reaches the terminal
  void finished(int step);  // after it ran
  void recorded(int step);  // it will not run: a resumed run took it from its file
  void extend(const core::Plan& plan);  // the plan grew (retests)
  void end();
  // What step `step` runs ("intra all_reduce float sum 1 MiB out-of-place"); empty when unknown.
  std::string describe(int step) const;

 private:
  double etaSeconds() const;

  ProgressMode mode_;
  std::FILE* err_;
  std::map<int, std::pair<double, std::string>> steps_;  // index -> expected cost, description
  int total_ = 0;
  double totalWeight_ = 0;
  double doneWeight_ = 0;
  std::chrono::steady_clock::time_point start_;
  bool lineOpen_ = false;
};

}  // namespace fabricmap::orchestrator
