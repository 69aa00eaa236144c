// The planner: RunConfig + Topology -> Plan. Pure and deterministic, so every rank computes the
// same plan without talking to the others.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "core/plan.h"
#include "core/records.h"
#include "orchestrator/run/run_config.h"

namespace fabricmap::orchestrator {

// The groups of one scope. Groups smaller than `minGroup` (2: one rank has nobody to talk to) are
// dropped; a scope with no group left, or with exactly the groups of an earlier scope in
// `earlier`, is waived with the reason.
core::ScopePlan planScope(core::Scope scope, const core::Topology& topology,
                          const std::vector<core::ScopePlan>& earlier, int minGroup = 2);

// What the planner knows of the fabric (`run --fabric`, read on rank 0 and told to every rank,
// which all plan the same steps): each node's uplink claims and lanes (analysis.h uplinkParts) and how
// many pairs each claimed switch carries across it at once. Empty without a fabric.
struct FabricClaims {
  std::vector<std::vector<int>> nodes;
  std::vector<std::vector<int>> lanes;  // per node, aligned with its claims (analysis.h UplinkParts)
  core::PartWidths widths;
  // The claims of each member of `level`: a rank's are its node's.
  std::vector<std::vector<int>> of(core::PairLevel level, const core::Topology& topology) const;
  // The lanes of each member of `level`, aligned with its claims: a rank's are its node's.
  std::vector<std::vector<int>> lanesOf(core::PairLevel level, const core::Topology& topology) const;
  // The widths for pairs of `level`: a switch's cables each carry as many rank pairs as its
  // nodes run ranks (they share their node's own cable too).
  core::PartWidths widthsOf(core::PairLevel level, const core::Topology& topology) const;
};

// The collective steps, the scaling points, the training pattern, the GPU-pair copies, then the
// pairwise rounds, as the configuration asks.
core::Plan makePlan(const RunConfig& config, const core::Topology& topology, const FabricClaims& claims = {});

// Collective steps: for each active scope, op, dtype, reduction op (reducing ops only), size,
// then out-of-place before in-place. Throws UsageError when the root lies outside a group.
void planCollectives(const RunConfig& config, const core::Topology& topology, core::Plan& plan);

// Scaling points: all_reduce of config.scalingBytes on the first 2, 4, ... local ranks of every
// node (up to the largest node), then on every rank of the first 1, 2, 4, ... nodes (2+ nodes).
void planScaling(const RunConfig& config, const core::Topology& topology, core::Plan& plan);

// The training pattern's layout: --layout, or TP over each node's ranks and DP across nodes.
// Throws UsageError when it does not fit the job, or (--strict-layout) a TP group crosses nodes.
core::Layout trainingLayout(const RunConfig& config, const core::Topology& topology);

// The training pattern: its traffic types (TP, PP, DP, EP with a group of 2+ ranks; sizes from
// the model shape in `config`), one isolated step per type, then one step with all at once.
void planTraining(const RunConfig& config, const core::Topology& topology, core::Plan& plan);

// The storage feed (--storage PATH): a write test with --storage-write, a sequential read of
// kStorageBlockBytes blocks, and kRandomReadSeconds of kRandomReadBytes reads at random offsets, on
// every rank or each node's first (--storage-ranks).
inline constexpr std::uint64_t kStorageBlockBytes = 4ull << 20;
inline constexpr std::uint64_t kRandomReadBytes = 4096;
inline constexpr double kRandomReadSeconds = 2;
void planStorage(const RunConfig& config, const core::Topology& topology, core::Plan& plan);

// GPU-pair copy steps: every pair of local ranks of the largest node, one pair per step (every
// node measures its own pair of that step at once). Nodes with one rank have nothing to copy;
// throws UsageError when no node has two ranks and copies are all that was asked for.
void planCopies(const RunConfig& config, const core::Topology& topology, core::Plan& plan);

// Pairwise rounds: the rank matrix, then the node matrix (when nodes hold several ranks; with
// one rank per node it is the rank matrix). Full mode: the circle method's rounds; quick mode:
// each member against `pairwisePeers` random others, packed into rounds of disjoint pairs. Either
// way no round sends pairs across a switch with claims more often than it has cables up, nor two
// pairs that a subnet routing by destination puts on one of its cables (`claims` and their lanes;
// a full round that would is measured in parts, up to kSplitMembers members): a round that sent a
// 2:1 leaf's every node across would measure its uplinks' sharing, not its pairs, and two pairs
// on one cable read half their rate, which widens the first pass's spread until the bar lets a
// slow leaf's pairs pass.
inline constexpr int kSplitMembers = 2048;
void planPairs(const RunConfig& config, const core::Topology& topology, core::Plan& plan,
               const FabricClaims& claims = {});

// Appends re-measurement number `sample` (1..config.retests) of `pairs`: one pair per round when
// there are at most kIsolatedRetests of them (a retest measures the suspect alone), else rounds
// of disjoint pairs that hold each of the members' `claims` at most once (core::packRounds),
// each sample packed from another starting pair. A few are packed too where claims are known and
// `separateMachines` (no two members' nodes are one machine).
inline constexpr std::size_t kIsolatedRetests = 128;
void planRetests(const RunConfig& config, core::PairLevel level, int members,
                 const std::vector<std::pair<int, int>>& pairs, core::Plan& plan, int sample,
                 const std::vector<std::vector<int>>& claims = {}, bool separateMachines = false);

// Suspects far below the baseline and steady (analysis.h farBelowPairs, steadyPairs: `farBelow`)
// are measured again a sample per holder: each end of a pair (a rank or a node) and, where the
// fabric's lanes are known (`cables`), each lane cable it crosses (core::LaneCables). Once a holder
// has kRetestSample of them in the retests, its other pairs wait.
// A host or a cable at 1% puts every pair through it there, and measuring each again holds the
// cluster a round per pair (a member is in one pair a round, a far-below pair is retested alone)
// for figures that repeat the first. A cable's pairs spread over many nodes, one or two each:
// only a sample per cable bounds them.
inline constexpr int kRetestSample = 4;
using SampleHolder = std::variant<int, core::LaneCable>;  // a member, or a lane cable
// Holders whose whole sample was found far below again, each with its sample's median depth (the
// pair's slower way's best figure, GB/s): the cause is that member's or beyond it, or that
// cable's. They settle waiting pairs (unsettled), in the retests that found them and in later
// ones (quick mode's second round retests its own suspects).
using SettledLevels = std::map<SampleHolder, double>;
struct RetestSample {
  std::vector<std::pair<int, int>> measured;  // retested now: the suspects but the waiting ones
  std::vector<std::pair<int, int>> waiting;
  // per holder whose sample filled: its far-below pairs among `measured`
  std::map<SampleHolder, std::vector<std::pair<int, int>>> samples;
};
// `settled`: holders settled by earlier retests, whose far-below pairs wait from the start.
RetestSample sampleRetests(const std::vector<std::pair<int, int>>& suspects,
                           const std::vector<std::pair<int, int>>& farBelow, const core::LaneCables* cables = nullptr,
                           const SettledLevels& settled = {});
// Once the sample was measured again (`farBelowNow`: which of its pairs are still far below;
// `depth(a, b)`: the pair's slower way's best figure so far): the holders it settled.
SettledLevels settledLevels(const RetestSample& sample, const std::vector<std::pair<int, int>>& farBelowNow,
                            const std::function<double(int, int)>& depth);
// The waiting pairs to measure too. A waiting pair is settled, its first figure standing, where a
// holder of it (`cables` as above) is in `settled` and the pair lies at its level (within
// kSettleSpread of it). A pair much deeper shared the slow part with another pair of its round (a
// round packs pairs by cables, not by routes), and one cause must read as one level (the cable
// rule's kOneCauseSpread).
inline constexpr double kSettleSpread = 2;
std::vector<std::pair<int, int>> unsettled(const RetestSample& sample, const SettledLevels& settled,
                                           const std::function<double(int, int)>& depth,
                                           const core::LaneCables* cables = nullptr);

// Quick mode's pairs: each of `members` picks `peers` distinct random others (deterministic in
// `seed`); unordered, deduplicated, sorted.
std::vector<std::pair<int, int>> quickPairs(int members, int peers, std::uint64_t seed);

// Quick mode's second round: for each suspect pair (a, b), up to `perSide` pairs that tell its
// cause apart, (a's neighbours, b) and (a, b's neighbours), none of them `measured` yet. A
// member's neighbours are the members with its uplink claims (analysis.h uplinkParts' claims: its leaf;
// everyone without a fabric), the nearest after it in index order first. At most `limit` pairs,
// unordered, deduplicated, sorted.
std::vector<std::pair<int, int>> widenedPairs(const std::vector<std::pair<int, int>>& suspects,
                                              const std::vector<std::vector<int>>& claims, int members, int perSide,
                                              std::size_t limit, const std::function<bool(int, int)>& measured);
inline constexpr int kWidenPerSide = 3;

// Appends rounds of disjoint first measurements of `pairs` (quick mode's second round), packed
// as the first round was.
void planWidening(const RunConfig& config, const core::Topology& topology, core::PairLevel level,
                  const std::vector<std::pair<int, int>>& pairs, const FabricClaims& claims, core::Plan& plan);

// Each step kind's planning knowledge beside its planX above: about how many bytes the step
// moves per rank (waived: none), and what the progress line calls it.
double stepBytes(const core::CollectiveStep& step);
double stepBytes(const core::CopyStep& step);
double stepBytes(const core::PairStep& step);
double stepBytes(const core::ScalingStep& step);
double stepBytes(const core::TrainingStep& step);
double stepBytes(const core::StorageStep& step);
std::string describe(const core::Plan& plan, const core::CollectiveStep& step);
std::string describe(const core::Plan& plan, const core::CopyStep& step);
std::string describe(const core::Plan& plan, const core::PairStep& step);
std::string describe(const core::Plan& plan, const core::ScalingStep& step);
std::string describe(const core::Plan& plan, const core::TrainingStep& step);
std::string describe(const core::Plan& plan, const core::StorageStep& step);

// Seconds a step may take before the watchdog calls it a hang: --step-timeout when given,
// otherwise kDeadlineFloor plus the time its stepBytes take at kSlowestRate (slower than any
// fabric worth measuring, so a healthy step never comes near it).
inline constexpr double kDeadlineFloor = 300;
inline constexpr double kSlowestRate = 50e6;  // B/s
template <class S>
double stepDeadline(const S& step, const RunConfig& config) {
  return config.stepTimeout > 0 ? config.stepTimeout : kDeadlineFloor + stepBytes(step) / kSlowestRate;
}

// Largest buffer footprint of any step on one rank, in bytes (input + output).
std::uint64_t peakBytesPerRank(const core::Plan& plan);

// Throws UsageError when a node lacks the host memory its ranks' buffers need (keeping 20% free).
void checkMemory(const core::Plan& plan, const core::Topology& topology);

// The scope table of a plan, as recorded in the results file.
std::vector<core::ScopeRecord> scopeRecords(const core::Plan& plan);

}  // namespace fabricmap::orchestrator
