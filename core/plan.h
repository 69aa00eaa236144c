// A plan is plain data: the list of steps every rank executes in the same order. The planner
// (orchestrator/) builds it; executors (worker/) run it; nothing here knows MPI.
#pragma once

#include <compare>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "core/dtype.h"
#include "core/layout.h"
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
  int index = 0;       // step number (collectives first, then pair steps); the test-pattern seed
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
    kStall,    // stop making progress at the start of the step (sleep forever): a hang
    kCrash,    // die at the start of the step (SIGKILL to itself)
  };
  Kind kind = Kind::kCorrupt;
  int rank = -1;               // world rank, -1: every rank
  std::optional<Op> op;        // only this op
  int step = -1;               // only this step index, -1: every step
};

// Pairwise measurements: between ranks, or between nodes (all local ranks of both at once).
enum class PairLevel : std::uint8_t { kRank, kNode };
std::string_view name(PairLevel level);

// One round of concurrent, disjoint pairs. A full matrix is the circle method's rounds over
// `members` (pairs computed by circleRound, so a 8,192-rank plan stays small); quick mode and
// retests list their pairs explicitly.
struct PairStep {
  int index = 0;  // step number, after every other kind
  PairLevel level = PairLevel::kRank;
  int members = 0;  // ranks or nodes taking part in the schedule
  int round = 0;    // circle-method round, when `pairs` is empty or holds a part of it
  int part = 0;     // a circle round run in parts (to keep to a fabric's cables): 1, 2, ...; else 0
  std::vector<std::pair<int, int>> pairs;  // explicit pairs (quick mode, retests, a round's part)
  int sample = 0;                          // 0: first measurement; 1, 2, ...: retests
  std::uint64_t bytes = 0;                 // message size of the bandwidth streams
  int window = 1;                          // messages in flight per iteration
  int iters = 0;                           // timed iterations of `window` messages
  int warmup = 0;
  int latencyIters = 0;  // ping-pong round trips of `latencyBytes`
  std::uint64_t latencyBytes = 8;
};

// Which side of pair (a, b) streams first: a where a and b differ in an odd number of bits, so
// that every member leads about half of its pairs. Were the lower member always first, a round's
// first streams would have the highest members' leaf all receiving and the lowest's all sending
// at once, crowding their cables, and their pairs would stand out as slow. (0, 1) is led by 0.
bool aStreamsFirst(int a, int b);

// The pairs of one round: explicit ones, or the circle method's.
std::vector<std::pair<int, int>> pairsOf(const PairStep& step);

// Round-robin (circle method): n-1 rounds of n/2 disjoint pairs for even n; for odd n, n rounds
// in which one member sits out. Every unordered pair occurs exactly once.
int circleRounds(int members);
std::vector<std::pair<int, int>> circleRound(int members, int round);

// Packs pairs into rounds of disjoint pairs (greedy, in order), for quick mode and retests.
// `claims` (per member, sorted; members past its end claim nothing) names shared parts a pair's
// traffic crosses, such as a switch's uplinks: a pair holds the parts one end claims and the other
// does not (traffic inside a leaf stays off its uplinks), and a round holds each part at most its
// width times (`widths`: a part's pairs at once, such as a leaf's uplink cables; 1 where absent),
// except a part that would need over 4 times the rounds the typical part does (a faulty leaf's)
// and over 3 times the rounds of the busiest member or that part: it holds as many at once as
// keeps it within those rounds.
// `lanes` (per member, aligned with its claims; -1 or absent: none) spreads a part's pairs over its
// cables as a subnet routing by destination does (InfiniBand's ftree, D-mod-K): a member's lane at
// the leaf it hangs on is its position among the leaf's hosts modulo the leaf's cables up, and
// the leaf's traffic towards a destination takes the cable of the destination's lane, the
// traffic into it from outside comes down the cable of its own. A round then holds each lane of a
// part, as the lane of the end under it and as the lane of the end outside it, at most its width
// over its lanes times: two pairs of a leaf that the subnet would route onto one cable meet in
// different rounds. Where the subnet routes otherwise they meet as they would without lanes.
using Rounds = std::vector<std::vector<std::pair<int, int>>>;
using PartWidths = std::map<int, int>;
Rounds packRounds(const std::vector<std::pair<int, int>>& pairs, const std::vector<std::vector<int>>& claims = {},
                  const PartWidths& widths = {}, const std::vector<std::vector<int>>& lanes = {});

// A cable of a part as packRounds' lanes know it: side 0, the lane of the pair's end under the
// part (the cable its traffic from outside comes down); side 1, the lane of the end outside it,
// modulo the part's lanes (the cable the part sends that end's traffic up).
struct LaneCable {
  int part = 0;
  int side = 0;
  int lane = 0;
  auto operator<=>(const LaneCable&) const = default;
};

// The lane cables pairs hold, from packRounds' `claims` and `lanes`.
class LaneCables {
 public:
  LaneCables(std::vector<std::vector<int>> claims, std::vector<std::vector<int>> lanes);
  // Per part with lanes that one end of (a, b) claims and the other does not: the cable of each
  // side whose lane is known. None without lanes.
  std::vector<LaneCable> of(int a, int b) const;
  // How many lanes `part` has (0: none known).
  int lanesOf(int part) const;

 private:
  static constexpr int kNotClaimed = -2;
  int laneAt(std::size_t member, std::size_t claim) const;
  int laneOf(int member, int part) const;  // kNotClaimed where the member does not claim `part`
  int ownLane(int member) const;            // its lane at the leaf it hangs on: as a destination
  std::vector<std::vector<int>> claims_;
  std::vector<std::vector<int>> lanes_;
  std::map<int, int> count_;  // per part with lanes: how many
};

// How a GPU-pair copy moves the data (the per-method columns of /copies and /matrix/gpu).
enum class CopyMethod : std::uint8_t {
  kCopyEngine,  // cudaMemcpyAsync between the two GPUs' memory: the DMA copy engines
  kKernel,      // an SM copy kernel loading and storing through the peer mapping
  kHost,        // memcpy between two ranks' host buffers (the host-memory backend)
};
std::string_view name(CopyMethod method);

// One pair of GPUs (local ranks `a` < `b`) copying to each other, on every node at once (each
// node measures one pair at a time, so no two copies of a node share its PCIe switches or links).
struct CopyStep {
  int index = 0;              // step number, after the collectives and the training pattern
  int a = 0;                  // local ranks of the pair
  int b = 1;
  std::uint64_t bytes = 0;    // bytes per copy
  int iters = 0;              // timed copies per direction
  int warmup = 0;
};

// Every unordered pair of `localRanks` local ranks, one copy step each, in order (0,1), (0,2), ...
std::vector<std::pair<int, int>> copyPairs(int localRanks);

// The scaling sweep (--scaling): the same all_reduce on growing groups, one point per step.
enum class ScalingLevel : std::uint8_t {
  kGpus,   // the first n local ranks of every node with n or more, every node at once
  kNodes,  // every rank of the first n nodes, one group
};
std::string_view name(ScalingLevel level);  // "gpus", "nodes"

struct ScalingStep {
  int index = 0;  // step number, after the collectives
  ScalingLevel level = ScalingLevel::kGpus;
  int n = 0;                             // GPUs per node or nodes
  std::vector<std::vector<int>> groups;  // world ranks of each group
  DType dtype = DType::kFloat;
  std::uint64_t bytes = 0;  // all_reduce size: the bytes every rank holds
  int iters = 0;
  int warmup = 0;
};

// One traffic type of the training pattern (--patterns training): what each of its groups sends
// in one training step, message after message.
struct Traffic {
  Parallelism kind = Parallelism::kTensor;
  // The ops of one message, in order: {all_reduce}; {all_gather, reduce_scatter} (sequence
  // parallel); {reduce_scatter, all_gather} (ZeRO); {sendrecv} (pipeline: even messages go to
  // the next stage, odd ones back); {alltoall} (experts).
  std::vector<Op> ops;
  std::uint64_t bytes = 0;  // requested size of each op (as a collective step's size)
  int messages = 0;         // per training step
  std::vector<std::vector<int>> groups;  // world ranks, group order (pipeline: stage order)
};

// One measurement of the training pattern: one traffic type alone, or all of them at once.
struct TrainingStep {
  int index = 0;     // step number, after the scaling points
  int traffic = -1;  // index into Plan::traffic when isolated; -1: every type concurrently
  std::uint64_t bytes = 0;  // bytes of all ops one training step makes on each rank
  int iters = 0;     // timed training steps
  int warmup = 0;
};

// The storage feed (--storage PATH): the reading ranks' I/O under PATH, one test per step.
enum class StorageTest : std::uint8_t { kWrite, kRead, kRandomRead };
std::string_view name(StorageTest test);  // "write", "read", "randread"

struct StorageStep {
  int index = 0;  // step number, after the training pattern
  StorageTest test = StorageTest::kRead;
  std::string path;        // the directory every reading rank's files are under
  std::vector<int> ranks;  // the ranks doing I/O (all, or each node's first)
  bool ownFiles = false;   // files written by the run (--storage-write), else those found under path
  std::uint64_t bytes = 0;       // per rank: written, read in sequence, or spanned by random reads
  std::uint64_t blockBytes = 0;  // per read or write
  double seconds = 0;            // random reads: how long to keep reading
  bool removeAfter = false;      // the last step on the run's own files: they go after it
};

struct Plan {
  std::vector<ScopePlan> scopes;
  std::vector<CollectiveStep> collectiveSteps;
  std::vector<ScalingStep> scalingSteps;    // after the collectives
  Layout layout;                            // of the training pattern
  DType trafficDtype = DType::kBfloat16;    // its element type
  std::vector<Traffic> traffic;             // its traffic types
  std::vector<TrainingStep> trainingSteps;  // after the scaling points
  std::vector<CopyStep> copySteps;          // after the training pattern
  std::vector<StorageStep> storageSteps;    // after the training pattern
  std::vector<PairStep> pairSteps;          // after the copies; retests are appended as planned

  // Every step kind's list, in the order a run takes them: the one place that names them all
  // (a new step kind is one more list here and in stepLists).
  auto stepLists() {
    return std::tie(collectiveSteps, scalingSteps, trainingSteps, storageSteps, copySteps, pairSteps);
  }
  auto stepLists() const {
    return std::tie(collectiveSteps, scalingSteps, trainingSteps, storageSteps, copySteps, pairSteps);
  }
  // Calls f(list) for each step kind's list, in run order.
  template <class F>
  void forEachStepList(F&& f) const {
    std::apply([&](const auto&... lists) { (f(lists), ...); }, stepLists());
  }
  int stepCount() const {
    std::size_t n = 0;
    forEachStepList([&](const auto& list) { n += list.size(); });
    return static_cast<int>(n);
  }
};

}  // namespace fabricmap::core
