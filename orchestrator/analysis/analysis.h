// Bottleneck analysis: from the pairwise matrices to findings that name the slow part (a node, a
// node's egress or ingress, one link, one rank's path, a node's internal path). Pure code.
#pragma once

#include <array>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/hang.h"
#include "core/layout.h"
#include "core/plan.h"
#include "core/records.h"

namespace fabricmap::orchestrator {

struct AnalysisConfig {
  double slowThreshold = 0.9;  // slow below this fraction of the class baseline
  double latencyFactor = 2.0;  // bad latency above this multiple of the class baseline
  // A node (or rank) is named when at least this share of its measured peers see it slow, with
  // at least two peers; one peer cannot tell a node from a link.
  double attributeShare = 0.75;
  // Claimed-vs-measured judges a GPU pair only when its samples agree within this share (worst
  // >= 0.75 x best): a path is what it steadily moves.
  double agreement = 0.75;
  // A pair measured once whose iteration times varied beyond this coefficient of variation
  // (--noise-cv) is noisy when its fastest iterations may have reached the bar: it is not judged
  // slow without a retest.
  double noiseCv = 0.2;
  // Retests of a slow-looking pair (--retests): a retested pair's verdict rests on 1 + this many
  // samples, which is part of a finding's confidence.
  int retests = 2;
  // Findings whose confidence is below this (--min-confidence) are information, not verdicts.
  double minConfidence = 0.5;
  // A full node's all_reduce below this share of the busbw its smallest group reached is a
  // scaling finding (a bridged-pairs node collapses past 2 GPUs).
  double minScalingEfficiency = 0.8;
  // below_line_rate: a node's inter-node bandwidth below this fraction (--line-rate-fraction) of
  // what its NICs carry: the declared line rate (--line-rate, GB/s per node) or, when 0, the sum
  // of its active RDMA ports' rates in the inventory.
  double lineRateGBps = 0;
  double lineRateFraction = 0.8;
};

// Expected figures of a link class measured on this fabric. Without reference specs for the
// hardware, they come from the population: the median of the class after setting aside the
// clearly bad values (more than 2x worse than the class median; of an even count, the median is
// the middle value on the better side). Averaging the two middle values would not do: one bad
// node among four touches half of all node pairs, and would drag the expected figure down to
// halfway between good and bad. They are computed from every pair's
// first measurement and then fixed (fixBaselines): the retests' lucky best samples must not raise
// the bar that the other pairs passed with a single sample (and a retest, often measured alone,
// runs faster than the same pair among a round's). Except where the first round ran slow
// everywhere (raiseDepressedBaselines). A re-measured pair's verdict compares its best sample with
// the baseline, and requires its samples to agree.
// Fixed baselines (Matrices::expectedFixed) are used as they are.
core::Expected classBaseline(const core::Matrices& m, core::LinkClass cls);
// Every class's at once (one pass over the rank matrices), indexed by LinkClass (kSelf unused).
std::array<core::Expected, core::kLinkClasses> classBaselines(const core::Matrices& m);
core::Expected nodeBaseline(const core::Matrices& m);

// After the retests: a baseline (of a class, or of node pairs) that the re-measured pairs' typical
// samples (MatrixBuilder::buildTypical, the median of each pair's samples) put above
// kDepressedRound times the fixed one takes their bandwidth figures (latency keeps the first
// round's). The first round then ran far below what
// the fabric moves (connections being set up, shaped links ramping up), and its bar would let a
// slow node pass. `typical` has its baselines computed (fixBaselines); true when one was raised
// (the pairs that only then look slow are measured again, orchestrator/run/steps.cpp).
inline constexpr double kDepressedRound = 2.0;
bool raiseDepressedBaselines(core::Matrices& fixed, const core::Matrices& typical);

// The share of a link's peak that tuned transfers reach (REFERENCE.md: 80-88% of NVLink's).
inline constexpr double kPracticalShare = 0.8;

// Computes the baselines from the matrices as they are and fixes them in `m`. Where every GPU of
// a class's pairs is one recognised model (topologies/specs.h), the nvswitch class expects that
// model's NVLink peak and the pcie class its PCIe x16 peak, both at kPracticalShare, instead of
// the measured population (which a fabric slow everywhere would drag down with it); the spread,
// which sets how far below the bar lies, stays measured.
void fixBaselines(core::Matrices& m, const core::Topology& topology);

// Unordered pairs that look slow, to be measured again before anything is reported: either
// direction below the bar or below kSuspectShare of its class's baseline (on a noisy fabric the
// bar falls, and the faulty and the unlucky healthy pairs first overlap), or below the baseline
// with iteration times too varied to judge (--noise-cv), or latency above the factor.
inline constexpr double kSuspectShare = 0.5;
std::vector<std::pair<int, int>> suspectRankPairs(const core::Matrices& m, const AnalysisConfig& c);
std::vector<std::pair<int, int>> suspectNodePairs(const core::Matrices& m, const AnalysisConfig& c);

// Of `pairs` (unordered, sorted), those of `level` whose bandwidth either way lies below
// kFarBelowShare of their class's baseline: where healthy streams meeting on a cable or a noisy
// host put no pair (two or three streams on one cable read a half or a third), only a fault does.
inline constexpr double kFarBelowShare = 0.125;
std::vector<std::pair<int, int>> farBelowPairs(const core::Matrices& m, core::PairLevel level,
                                               const std::vector<std::pair<int, int>>& pairs);
// Of `pairs`, those whose figures can be judged without a retest: neither way's iteration times
// varied beyond c.noiseCv (judgeBw's noisy single sample). Only such a pair may keep its first
// figure on the strength of its member's retests (planner.h sampleRetests).
std::vector<std::pair<int, int>> steadyPairs(const core::Matrices& m, core::PairLevel level,
                                             const std::vector<std::pair<int, int>>& pairs, const AnalysisConfig& c);

// What the planner needs of the fabric, from one pass over its paths (empty without a fabric):
// - claims: per node of the run, the switches whose uplinks its traffic to any node outside them
//   certainly crosses (device indices in topology.fabric, sorted): a leaf it hangs on alone, and
//   each level above where it has one switch. Retests of pairs that hold no such switch in common
//   cannot meet on a cable (core::packRounds' claims);
// - lanes: per node, aligned with its claims (core::packRounds' lanes): at the leaf it hangs on,
//   its position among the leaf's host ports modulo the leaf's cables up, the cable a subnet
//   routing by destination (ftree, D-mod-K) brings its traffic down and sends its leaf's traffic
//   for it up; -1 at the levels above, whose choice of cable is not known here;
// - widths: per switch with cables up, how many: the pairs across it that a round carries at once
//   with a cable each (core::packRounds' widths). Counted in cables: where the uplinks run faster
//   than the nodes' own cables, each could carry more.
struct UplinkParts {
  std::vector<std::vector<int>> claims;
  std::vector<std::vector<int>> lanes;
  std::map<int, int> widths;
};
UplinkParts uplinkParts(const core::Topology& topology);

// Findings, most severe first: severity "error" below half the baseline (or latency above twice
// the factor), "warning" otherwise, "info" for pairs too noisy to judge.
//
// Slow versus noisy is decided on the samples of each pair (first measurement and retests): a pair
// whose samples are all below the bar is slow, however much they differ from each other (a
// throttled link is erratic and slow every time); one with samples on both sides of the bar is
// noisy and not judged. Every finding carries a confidence, 0..1, the product of
//   support: the share of the culprit's pairs that are slow (for a node: of all its pairs in the
//            named directions), weighted by the samples behind them (k samples: k / (k + 1));
//   clarity: how far below the bar the slow pairs' best samples lie (median over the pairs; 1 at
//            kClearDepth of the bar or deeper);
//   margin:  how much better this explanation is than the next one: for a node, how clean the
//            rest of the fabric is; for egress or ingress, how fine the other direction is; for a
//            link or a rank, how fine both ends (the rank's node) are with everyone else; for a
//            path inside a node, whether its pairs are slow both ways (a link down or trained low
//            is; one direction alone is as likely the host's scheduling).
// Findings below c.minConfidence become information. Direct evidence (wrong data, a hang, a
// topology fact) has confidence 1. Nodes with GPUs also get
// claimed-vs-measured findings: a pair whose GPUs report NVLink but that moves no more than a
// PCIe x16 link carries, a FULL_NVSWITCH node whose GPUs each have one fast partner, and what a
// class other than FULL_NVSWITCH means for tensor parallelism.
//
// The analysis is an ordered list of named rules (analysisRules(); `fabricmap show --rules`), each
// a function of the matrices, the topology and the thresholds that adds its findings; a later rule
// sees what the earlier ones explained.
std::vector<core::Finding> analyze(const core::Matrices& m, const core::Topology& topology,
                                   const AnalysisConfig& c);

// analyze() with only the named rules, in the list's order (a rule tested alone). Throws
// core::UsageError for a name no rule has.
std::vector<core::Finding> analyze(const core::Matrices& m, const core::Topology& topology, const AnalysisConfig& c,
                                   const std::vector<std::string_view>& rules);

// A node's inter-node bandwidth against its NICs' line rate (below_line_rate, and verify's
// min_line_rate_fraction): its measured node pairs, both ways, each as a share of what the pair's
// slower end carries (`declaredGBps` per node when > 0, else the sum of its active RDMA ports'
// rates in topology.inventory). Nodes whose line rate is unknown are left out; none at all when
// the node pairs were not measured whole (figures derived from rank pairs are one NIC's, unless
// every node is one rank).
struct LineRateShare {
  int node = 0;
  double lineGBps = 0;          // what the node's NICs carry
  double medianGBps = 0;        // its pairs' median
  std::vector<double> shares;   // each pair's share of what it can carry
  double share() const;         // their median
};
std::vector<LineRateShare> lineRateShares(const core::Matrices& m, const core::Topology& topology, double declaredGBps);
// How `node`'s line rate was decided, for messages: "declared (--line-rate)" or "its N active RDMA
// port(s) carry".
std::string lineRateSource(const core::Topology& topology, double declaredGBps, int node);

// below_line_rate from the inter scope's all_reduce: each rail (an inter group: local rank i of
// every node; its ring crosses every node through that rank's NIC, so its busbw is one NIC's rate)
// whose plateau busbw is under `c.lineRateFraction` of what its NICs carry per rail: for each of
// its ranks, its NIC's active ports' rate shared among the node's ranks on that NIC (the node's
// line rate shared among its ranks where the NIC is unknown or `c.lineRateGBps` is declared), the
// least of them. Rails whose line rate is unknown, and files without an inter all_reduce, raise
// nothing.
std::vector<core::Finding> railLineRateFindings(const std::vector<core::CollectiveRecord>& rows,
                                                const core::Topology& topology, const AnalysisConfig& c);

// One rule of the analysis: its name and one line on what it names.
struct AnalysisRule {
  std::string_view name;
  std::string_view description;
};
// Every rule, in the order analyze() runs them.
const std::vector<AnalysisRule>& analysisRules();

// The finding of a step that overran its deadline (kind `hang`, severity error): who held it up,
// on which hosts, and who waited. `what` describes the step.
core::Finding hangFinding(int step, const std::string& what, double waitedSeconds, double deadlineSeconds,
                          const core::HangVerdict& verdict, const core::Topology& topology);

// Wrong data (kind `data_corruption`, severity error), recorded as it is found and never averaged
// away: the ranks of a collective group that received wrong elements, the two ends of a pair
// (the link), the GPU pair of a copy. `measured` is the count of wrong elements.
core::Finding corruptionFinding(const core::CollectiveRecord& row, const core::Topology& topology);
core::Finding corruptionFinding(const core::PairRecord& pair, const core::Topology& topology);
core::Finding corruptionFinding(const core::CopyRecord& copy, const core::Topology& topology);

// ---- the training pattern and the scaling sweep (pattern_analysis.cpp)

// A layout whose tensor-parallel groups span nodes (kind `layout`, severity warning): the
// classic mistake on PCIe or bridged servers; none when every TP group stays inside a node.
std::vector<core::Finding> layoutFindings(const core::Layout& layout, const core::Topology& topology);

// Each rank's place in `layout` (the /patterns/layout rows).
std::vector<core::LayoutPlace> layoutPlaces(const core::Layout& layout);

// Fills the interference of concurrent rows: their median time over the isolated median of the
// same traffic type among `isolated` (NaN when that was not measured).
void fillInterference(std::vector<core::TrainingRecord>& concurrent, const std::vector<core::TrainingRecord>& isolated);

// What a scaling point is judged against: the best busbw at a smaller n of its level and size
// among `rows`, so a drop anywhere below it counts: 8 GPUs against 4 (the renter's guide) and
// against 2 (bridged pairs are fast in pairs only, and 8 against 4 alone would pass them); null
// for the smallest point. Perfect scaling keeps all_reduce busbw constant.
const core::ScalingRecord* scalingBase(const core::ScalingRecord& row, const std::vector<core::ScalingRecord>& rows);

// Fills the efficiency of `row`: its busbw over its scalingBase among `earlier` (the sweep runs
// smallest first; 1 for the smallest point); NaN without a usable baseline.
void fillEfficiency(core::ScalingRecord& row, const std::vector<core::ScalingRecord>& earlier);

// The scaling verdicts: a full node (the largest GPU count of the sweep) whose efficiency is
// below c.minScalingEfficiency is a warning (kind `scaling`), or only an info finding when that
// point or its baseline was noisy (not judged without a steady measurement).
std::vector<core::Finding> scalingFindings(const std::vector<core::ScalingRecord>& rows, const AnalysisConfig& c);

}  // namespace fabricmap::orchestrator
