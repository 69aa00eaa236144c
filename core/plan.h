// A plan is plain data: the list of steps every rank executes in the same order. The planner
// (orchestrator/) builds it; executors (worker/) run it; nothing here knows MPI.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/dtype.h"
#include "core/ops.h"

namespace fabricmap::core {

// Which concurrent groups a collective runs in.
enum class Scope : std::uint8_t {
  kWorld,  // every rank
  kIntra,  // one group per node
  kInter,  // one "rail" group per local rank index, across nodes
};

std::string_view name(Scope scope);
std::span<const Scope> allScopes();
std::optional<Scope> parseScope(std::string_view name);

struct ScopePlan {
  Scope scope = Scope::kWorld;
  std::vector<std::vector<int>> groups;  // world ranks of each group (2+ ranks each)
  std::string waiver;                    // non-empty: the scope is not run, and why
};

struct CollectiveStep {
  int index = 0;       // position in Plan::steps; also the test-pattern seed
  int scopeIndex = 0;  // into Plan::scopes
  Op op = Op::kAllReduce;
  DType dtype = DType::kFloat;
  RedOp redop = RedOp::kSum;
  int root = 0;                  // group rank of the root (rooted ops)
  std::uint64_t bytes = 0;       // requested size
  bool inPlace = false;
  int iters = 0;
  int warmup = 0;
  bool check = true;
  std::string waiver;  // non-empty: skipped, and why (e.g. too small for the group size)
};

// A fault injected on purpose, for tests only (`--inject-fault`; nothing is injected otherwise).
struct Fault {
  enum class Kind : std::uint8_t {
    kCorrupt,  // change an output element before the check
    kError,    // fail with a runtime error on this rank only, at the start of the step
  };
  Kind kind = Kind::kCorrupt;
  int rank = -1;               // world rank, -1: every rank
  std::optional<Op> op;        // only this op
  int step = -1;               // only this step index, -1: every step
};

struct Plan {
  std::vector<ScopePlan> scopes;
  std::vector<CollectiveStep> steps;
};

}  // namespace fabricmap::core
