// Planner (see planner.h).
#include "orchestrator/run/planner.h"

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "core/error.h"
#include "core/pattern.h"
#include "core/stats.h"
#include "core/units.h"

namespace fabricmap::orchestrator {
namespace {

std::vector<std::vector<int>> groupsOf(core::Scope scope, const core::Topology& topo, int minGroup) {
  std::vector<std::vector<int>> groups;
  switch (scope) {
    case core::Scope::kWorld: {
      std::vector<int> all;
      for (const auto& r : topo.ranks) all.push_back(r.rank);
      groups.push_back(std::move(all));
      break;
    }
    case core::Scope::kIntra:
      groups.resize(topo.nodes.size());
      for (const auto& r : topo.ranks) groups[static_cast<std::size_t>(r.node)].push_back(r.rank);
      break;
    case core::Scope::kInter: {
      // rail j: the ranks with local rank j, in node order
      int rails = 0;
      for (const auto& r : topo.ranks) rails = std::max(rails, r.localRank + 1);
      groups.resize(static_cast<std::size_t>(rails));
      std::vector<const core::RankRecord*> byNode;
      for (const auto& r : topo.ranks) byNode.push_back(&r);
      std::stable_sort(byNode.begin(), byNode.end(),
                       [](const auto* a, const auto* b) { return a->node < b->node; });
      for (const auto* r : byNode) groups[static_cast<std::size_t>(r->localRank)].push_back(r->rank);
      break;
    }
  }
  std::erase_if(groups, [&](const auto& g) { return static_cast<int>(g.size()) < minGroup; });
  return groups;
}

std::string emptyReason(core::Scope scope, const core::Topology& topo) {
  switch (scope) {
    case core::Scope::kWorld: return "a single rank: nothing to communicate with";
    case core::Scope::kIntra: return "every node has a single rank";
    case core::Scope::kInter:
      return topo.nodes.size() < 2 ? "one node: no inter-node groups"
                                   : "no local rank index is shared by two nodes";
  }
  return "empty";
}

std::string describeSize(std::uint64_t bytes) {
  const std::string pretty = core::formatBytes(bytes);
  return pretty == fmt::format("{} B", bytes) ? pretty : fmt::format("{} ({} B)", pretty, bytes);
}

}  // namespace

core::ScopePlan planScope(core::Scope scope, const core::Topology& topology,
                          const std::vector<core::ScopePlan>& earlier, int minGroup) {
  core::ScopePlan plan;
  plan.scope = scope;
  plan.groups = groupsOf(scope, topology, minGroup);
  if (plan.groups.empty()) {
    plan.waiver = emptyReason(scope, topology);
    return plan;
  }
  for (const auto& e : earlier) {
    if (e.waiver.empty() && e.groups == plan.groups) {
      plan.waiver = fmt::format("same groups as scope {}", core::name(e.scope));
      return plan;
    }
  }
  return plan;
}

namespace {

// Per member of `level`, its node's row of `perNode`.
std::vector<std::vector<int>> perMember(const std::vector<std::vector<int>>& perNode, core::PairLevel level,
                                        const core::Topology& topology) {
  if (level == core::PairLevel::kNode || perNode.empty()) return perNode;
  std::vector<std::vector<int>> out;
  for (const core::RankRecord& r : topology.ranks) {
    const auto node = static_cast<std::size_t>(r.node);
    out.push_back(node < perNode.size() ? perNode[node] : std::vector<int>{});
  }
  return out;
}

}  // namespace

std::vector<std::vector<int>> FabricClaims::of(core::PairLevel level, const core::Topology& topology) const {
  return perMember(nodes, level, topology);
}

std::vector<std::vector<int>> FabricClaims::lanesOf(core::PairLevel level, const core::Topology& topology) const {
  return perMember(lanes, level, topology);
}

core::PartWidths FabricClaims::widthsOf(core::PairLevel level, const core::Topology& topology) const {
  if (level == core::PairLevel::kNode) return widths;
  int ranks = 1;
  for (const core::NodeRecord& n : topology.nodes) ranks = std::max(ranks, n.ranks);
  core::PartWidths out = widths;
  for (auto& [part, width] : out) width *= ranks;
  return out;
}

core::Plan makePlan(const RunConfig& config, const core::Topology& topology, const FabricClaims& claims) {
  core::Plan plan;
  if (config.collectives) planCollectives(config, topology, plan);
  if (config.scaling) planScaling(config, topology, plan);
  if (config.training) planTraining(config, topology, plan);
  if (!config.storagePath.empty()) planStorage(config, topology, plan);
  if (config.copies) planCopies(config, topology, plan);
  if (config.pairwise) planPairs(config, topology, plan, claims);
  return plan;
}

void planStorage(const RunConfig& config, const core::Topology& topology, core::Plan& plan) {
  core::StorageStep base;
  base.path = config.storagePath;
  base.ownFiles = config.storageWrite;
  base.bytes = config.storageBytes;
  for (const core::RankRecord& r : topology.ranks) {
    if (config.storageEveryRank || r.localRank == 0) base.ranks.push_back(r.rank);
  }
  std::vector<core::StorageTest> tests;
  if (config.storageWrite) tests.push_back(core::StorageTest::kWrite);
  tests.push_back(core::StorageTest::kRead);
  tests.push_back(core::StorageTest::kRandomRead);
  for (core::StorageTest test : tests) {
    core::StorageStep step = base;
    step.index = plan.stepCount();
    step.test = test;
    // sequential blocks of 4 MiB, or the whole (4 KiB-aligned) size when it is smaller
    const std::uint64_t whole = (config.storageBytes + kRandomReadBytes - 1) / kRandomReadBytes * kRandomReadBytes;
    step.blockBytes = test == core::StorageTest::kRandomRead ? kRandomReadBytes : std::min(kStorageBlockBytes, whole);
    step.seconds = test == core::StorageTest::kRandomRead ? kRandomReadSeconds : 0;
    step.removeAfter = config.storageWrite && test == tests.back();
    plan.storageSteps.push_back(std::move(step));
  }
}

void planCopies(const RunConfig& config, const core::Topology& topology, core::Plan& plan) {
  int local = 0;
  for (const auto& n : topology.nodes) local = std::max(local, n.ranks);
  if (local < 2) {
    if (!config.collectives && !config.pairwise) {
      throw core::UsageError(fmt::format("--copies needs 2 or more ranks on a node (the most here is {})", local));
    }
    return;  // nothing to pair inside a node; the other phases run
  }
  for (const auto& [a, b] : core::copyPairs(local)) {
    core::CopyStep step;
    step.index = plan.stepCount();
    step.a = a;
    step.b = b;
    step.bytes = config.copyBytes;
    step.iters = config.copyIters;
    step.warmup = config.copyWarmup;
    plan.copySteps.push_back(step);
  }
}

void planCollectives(const RunConfig& config, const core::Topology& topology, core::Plan& plan) {
  for (core::Scope s : config.scopes) {
    plan.scopes.push_back(planScope(s, topology, plan.scopes, config.minGroup));
  }

  const std::vector<std::uint64_t> sizes =
      core::sweepSizes(config.minBytes, config.maxBytes, config.stepFactor, config.stepBytes);
  std::vector<bool> placements;
  if (config.placement != Placement::kInPlace) placements.push_back(false);
  if (config.placement != Placement::kOutOfPlace) placements.push_back(true);

  for (std::size_t si = 0; si < plan.scopes.size(); ++si) {
    const core::ScopePlan& scope = plan.scopes[si];
    if (!scope.waiver.empty()) continue;
    int smallest = std::numeric_limits<int>::max();
    int largest = 0;
    for (const auto& g : scope.groups) {
      smallest = std::min(smallest, static_cast<int>(g.size()));
      largest = std::max(largest, static_cast<int>(g.size()));
    }

    for (core::Op op : config.ops) {
      const core::OpTraits& ot = core::traits(op);
      if (ot.rooted && config.root >= smallest) {
        throw core::UsageError(fmt::format(
            "-r/--root {} is outside the smallest group of scope {} ({} ranks)", config.root,
            core::name(scope.scope), smallest));
      }
      const std::vector<core::RedOp> redops =
          ot.reduces ? config.redops : std::vector<core::RedOp>{core::RedOp::kSum};
      for (core::DType dtype : config.dtypes) {
        const std::size_t ts = core::traits(dtype).size;
        for (core::RedOp redop : redops) {
          for (std::uint64_t bytes : sizes) {
            for (bool inPlace : placements) {
              core::CollectiveStep step;
              step.index = static_cast<int>(plan.collectiveSteps.size());
              step.scopeIndex = static_cast<int>(si);
              step.op = op;
              step.dtype = dtype;
              step.redop = redop;
              step.root = config.root;
              step.bytes = bytes;
              step.inPlace = inPlace;
              step.iters = config.iters;
              step.warmup = config.warmup;
              step.check = config.check;
              if (core::shapeOf(op, bytes, ts, largest).block == 0) {
                step.waiver = fmt::format("{} holds less than one {} per rank for {} ranks",
                                          describeSize(bytes), core::traits(dtype).name, largest);
              }
              plan.collectiveSteps.push_back(std::move(step));
            }
          }
        }
      }
    }
  }
}

namespace {

// 2, 4, 8, ... below `largest`, then `largest` itself (from `first`).
std::vector<int> doublings(int first, int largest) {
  std::vector<int> ns;
  for (int n = first; n < largest; n *= 2) ns.push_back(n);
  if (largest >= first) ns.push_back(largest);
  return ns;
}

// World ranks of each node, by local rank.
std::vector<std::vector<int>> ranksByNode(const core::Topology& topology) {
  std::vector<std::vector<int>> nodes(topology.nodes.size());
  std::vector<const core::RankRecord*> sorted;
  for (const auto& r : topology.ranks) sorted.push_back(&r);
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto* a, const auto* b) { return a->localRank < b->localRank; });
  for (const auto* r : sorted) nodes.at(static_cast<std::size_t>(r->node)).push_back(r->rank);
  return nodes;
}

}  // namespace

void planScaling(const RunConfig& config, const core::Topology& topology, core::Plan& plan) {
  const std::vector<std::vector<int>> nodes = ranksByNode(topology);
  const core::DType dtype = core::DType::kFloat;
  const std::uint64_t ts = core::traits(dtype).size;
  core::ScalingStep base;
  base.dtype = dtype;
  base.bytes = std::max<std::uint64_t>(config.scalingBytes / ts * ts, ts);
  base.iters = config.iters;
  base.warmup = config.warmup;
  const auto add = [&](core::ScalingLevel level, int n, std::vector<std::vector<int>> groups) {
    core::ScalingStep step = base;
    step.index = plan.stepCount();
    step.level = level;
    step.n = n;
    step.groups = std::move(groups);
    plan.scalingSteps.push_back(std::move(step));
  };
  int local = 0;
  for (const auto& node : nodes) local = std::max(local, static_cast<int>(node.size()));
  for (int n : doublings(2, local)) {
    std::vector<std::vector<int>> groups;
    for (const auto& node : nodes) {
      if (static_cast<int>(node.size()) >= n) groups.emplace_back(node.begin(), node.begin() + n);
    }
    add(core::ScalingLevel::kGpus, n, std::move(groups));
  }
  if (nodes.size() >= 2) {
    for (int n : doublings(1, static_cast<int>(nodes.size()))) {
      std::vector<int> group;
      for (int i = 0; i < n; ++i) group.insert(group.end(), nodes[static_cast<std::size_t>(i)].begin(), nodes[static_cast<std::size_t>(i)].end());
      if (group.size() >= 2) add(core::ScalingLevel::kNodes, n, {std::move(group)});
    }
  }
  if (plan.scalingSteps.empty() && !config.collectives && !config.training && !config.pairwise && !config.copies) {
    throw core::UsageError("--scaling needs 2 or more ranks on a node or 2 or more nodes; start it with mpirun -np 2 or more");
  }
}

core::Layout trainingLayout(const RunConfig& config, const core::Topology& topology) {
  const int world = static_cast<int>(topology.ranks.size());
  core::Layout layout;
  if (!config.layout.empty()) {
    layout = core::parseLayout(config.layout);
  } else {
    // the common layout: tensor parallelism inside each node, data parallelism across nodes
    const int local = topology.nodes.empty() ? 1 : topology.nodes.front().ranks;
    for (const auto& n : topology.nodes) {
      if (n.ranks != local) {
        throw core::UsageError(fmt::format("the nodes hold different numbers of ranks ({} has {}, {} has {}): give "
                                           "the training pattern's --layout tp=T,pp=P,dp=D",
                                           topology.nodes.front().name, local, n.name, n.ranks));
      }
    }
    layout.tp = local;
    layout.dp = std::max(world / std::max(local, 1), 1);
  }
  if (const std::string why = core::layoutProblem(layout, world); !why.empty()) {
    throw core::UsageError(fmt::format("--layout {}: {}", core::formatLayout(layout), why));
  }
  if (config.strictLayout) {
    const auto crossing = core::tpGroupsCrossingNodes(layout, topology);
    if (!crossing.empty()) {
      const auto groups = core::groupsOf(layout, core::Parallelism::kTensor);
      throw core::UsageError(fmt::format(
          "--layout {}: tensor-parallel group {} (ranks {}) crosses nodes, refused by --strict-layout (TP "
          "traffic would go over the network; use a TP size that divides the ranks per node)",
          core::formatLayout(layout), crossing.front(),
          core::formatRanks(groups[static_cast<std::size_t>(crossing.front())])));
    }
  }
  return layout;
}

void planTraining(const RunConfig& config, const core::Topology& topology, core::Plan& plan) {
  const core::Layout layout = trainingLayout(config, topology);
  plan.layout = layout;
  plan.trafficDtype = config.trainDtype;
  const std::uint64_t ts = core::traits(config.trainDtype).size;
  const std::uint64_t h = static_cast<std::uint64_t>(config.hidden);
  // one micro-batch's activations: b x s x h elements
  const std::uint64_t activation = static_cast<std::uint64_t>(config.microBatch) *
                                   static_cast<std::uint64_t>(config.seqLen) * h * ts;
  const auto add = [&](core::Parallelism kind, int size, std::vector<core::Op> ops, std::uint64_t bytes, int messages) {
    if (size < 2) return;
    core::Traffic t;
    t.kind = kind;
    t.ops = std::move(ops);
    t.bytes = bytes;
    t.messages = messages;
    t.groups = core::groupsOf(layout, kind);
    for (core::Op op : t.ops) {
      if (core::shapeOf(op, bytes, ts, size).block == 0) {
        throw core::UsageError(fmt::format("training pattern: {} messages of {} are too small for {} on {} ranks",
                                           core::name(kind), describeSize(bytes), core::traits(op).name, size));
      }
    }
    plan.traffic.push_back(std::move(t));
  };
  // Megatron-LM: per layer two all_reduces forward and two backward (attention and MLP); with
  // sequence parallelism each becomes an all_gather + reduce_scatter pair.
  add(core::Parallelism::kTensor, layout.tp,
      config.sequenceParallel ? std::vector<core::Op>{core::Op::kAllGather, core::Op::kReduceScatter}
                              : std::vector<core::Op>{core::Op::kAllReduce},
      activation, 4 * config.layers);
  // one micro-batch's activations forward to the next stage, its gradients back
  add(core::Parallelism::kPipeline, layout.pp, {core::Op::kSendRecv}, activation, 2);
  // the stage's gradients (12 h^2 parameters per layer, split over TP) in buckets
  const std::uint64_t gradients = std::max<std::uint64_t>(
      12 * h * h * static_cast<std::uint64_t>(config.layers) * ts / static_cast<std::uint64_t>(layout.tp), ts);
  const std::uint64_t buckets = (gradients + config.bucketBytes - 1) / config.bucketBytes;
  const std::uint64_t bucket = ((gradients + buckets - 1) / buckets + ts - 1) / ts * ts;
  add(core::Parallelism::kData, layout.dp,
      config.zero ? std::vector<core::Op>{core::Op::kReduceScatter, core::Op::kAllGather}
                  : std::vector<core::Op>{core::Op::kAllReduce},
      bucket, static_cast<int>(std::min<std::uint64_t>(buckets, 1u << 20)));
  // tokens to their top-k experts and back, forward and backward, per layer
  add(core::Parallelism::kExpert, layout.ep, {core::Op::kAllToAll},
      activation * static_cast<std::uint64_t>(config.topK), 4 * config.layers);
  if (plan.traffic.empty()) {
    throw core::UsageError(fmt::format("training pattern: the layout {} has no group of 2 or more ranks",
                                       core::formatLayout(layout)));
  }
  // each type alone, then all at once (its interference is relative to them)
  const int types = static_cast<int>(plan.traffic.size());
  for (int t = 0; t <= types; ++t) {
    core::TrainingStep step;
    step.index = plan.stepCount();
    step.traffic = t < types ? t : -1;
    for (int k = 0; k < types; ++k) {
      const core::Traffic& traffic = plan.traffic[static_cast<std::size_t>(k)];
      if (step.traffic < 0 || step.traffic == k) step.bytes += traffic.bytes * traffic.ops.size() * static_cast<std::uint64_t>(traffic.messages);
    }
    step.iters = config.trainIters;
    step.warmup = config.trainWarmup;
    plan.trainingSteps.push_back(step);
  }
}

namespace {

// The holders a pair's retests count against (sampleRetests): its ends, then its lane cables.
std::vector<SampleHolder> holdersOf(int a, int b, const core::LaneCables* cables) {
  std::vector<SampleHolder> out{a, b};
  if (cables == nullptr) return out;
  for (const core::LaneCable& cable : cables->of(a, b)) out.emplace_back(cable);
  return out;
}

}  // namespace

RetestSample sampleRetests(const std::vector<std::pair<int, int>>& suspects,
                           const std::vector<std::pair<int, int>>& farBelow, const core::LaneCables* cables,
                           const SettledLevels& settled) {
  RetestSample out;
  std::map<SampleHolder, int> taken;  // per holder: its far-below pairs in the sample
  const auto full = [&](const SampleHolder& holder) {
    return settled.count(holder) > 0 || taken[holder] >= kRetestSample;
  };
  for (const auto& pair : suspects) {
    if (!std::binary_search(farBelow.begin(), farBelow.end(), pair)) {
      out.measured.push_back(pair);
      continue;
    }
    const std::vector<SampleHolder> holders = holdersOf(pair.first, pair.second, cables);
    if (std::any_of(holders.begin(), holders.end(), full)) {
      out.waiting.push_back(pair);
      continue;
    }
    out.measured.push_back(pair);
    for (const SampleHolder& holder : holders) ++taken[holder];
  }
  for (const auto& pair : out.measured) {
    if (!std::binary_search(farBelow.begin(), farBelow.end(), pair)) continue;
    for (const SampleHolder& holder : holdersOf(pair.first, pair.second, cables)) {
      if (taken[holder] >= kRetestSample) out.samples[holder].push_back(pair);
    }
  }
  return out;
}

SettledLevels settledLevels(const RetestSample& sample, const std::vector<std::pair<int, int>>& farBelowNow,
                            const std::function<double(int, int)>& depth) {
  SettledLevels out;
  for (const auto& [holder, pairs] : sample.samples) {
    std::vector<double> depths;
    for (const auto& pair : pairs) {
      if (!std::binary_search(farBelowNow.begin(), farBelowNow.end(), pair)) break;
      depths.push_back(depth(pair.first, pair.second));
    }
    if (depths.size() == pairs.size()) out[holder] = core::median(depths);
  }
  return out;
}

std::vector<std::pair<int, int>> unsettled(const RetestSample& sample, const SettledLevels& settled,
                                           const std::function<double(int, int)>& depth,
                                           const core::LaneCables* cables) {
  const auto settles = [&](const SampleHolder& holder, double d) {
    const auto it = settled.find(holder);
    return it != settled.end() && d * kSettleSpread >= it->second && d <= kSettleSpread * it->second;
  };
  std::vector<std::pair<int, int>> out;
  for (const auto& [a, b] : sample.waiting) {
    const double d = depth(a, b);
    const std::vector<SampleHolder> holders = holdersOf(a, b, cables);
    if (std::none_of(holders.begin(), holders.end(), [&](const SampleHolder& h) { return settles(h, d); })) {
      out.emplace_back(a, b);
    }
  }
  return out;
}

std::vector<std::pair<int, int>> quickPairs(int members, int peers, std::uint64_t seed) {
  std::vector<std::pair<int, int>> edges;
  if (members < 2) return edges;
  const int k = std::min(peers, members - 1);
  for (int i = 0; i < members; ++i) {
    // k distinct random peers, drawn deterministically from (seed, i)
    std::vector<int> chosen;
    std::uint64_t state = seed * 0x9E3779B97F4A7C15ull + static_cast<std::uint64_t>(i) + 1;
    while (static_cast<int>(chosen.size()) < k) {
      state = core::Pattern::mix(state + 0x9E3779B97F4A7C15ull);
      const int j = static_cast<int>(state % static_cast<std::uint64_t>(members - 1));
      const int peer = j >= i ? j + 1 : j;  // every member but i
      if (std::find(chosen.begin(), chosen.end(), peer) == chosen.end()) chosen.push_back(peer);
    }
    for (int peer : chosen) edges.emplace_back(std::min(i, peer), std::max(i, peer));
  }
  std::sort(edges.begin(), edges.end());
  edges.erase(std::unique(edges.begin(), edges.end()), edges.end());
  return edges;
}

std::vector<std::pair<int, int>> widenedPairs(const std::vector<std::pair<int, int>>& suspects,
                                              const std::vector<std::vector<int>>& claims, int members, int perSide,
                                              std::size_t limit, const std::function<bool(int, int)>& measured) {
  const auto claimsOf = [&](int m) {
    return static_cast<std::size_t>(m) < claims.size() ? claims[static_cast<std::size_t>(m)] : std::vector<int>{};
  };
  std::set<std::pair<int, int>> out;
  // up to perSide new pairs of `other` with the neighbours of `near`
  const auto around = [&](int near, int other) {
    int added = 0;
    for (int step = 1; step < members && added < perSide; ++step) {
      const int m = (near + step) % members;
      if (m == other || claimsOf(m) != claimsOf(near)) continue;
      const std::pair<int, int> pair{std::min(m, other), std::max(m, other)};
      if (measured(pair.first, pair.second) || out.count(pair) > 0) continue;
      out.insert(pair);
      ++added;
    }
  };
  for (const auto& [a, b] : suspects) {
    if (out.size() >= limit) break;
    around(a, b);
    around(b, a);
  }
  std::vector<std::pair<int, int>> pairs(out.begin(), out.end());
  if (pairs.size() > limit) pairs.resize(limit);
  return pairs;
}

// Up to this size a pair's messages are latency-bound and take osu_bw's longer warm-up.
constexpr std::uint64_t kSmallPairBytes = 8192;

core::PairStep pairStepTemplate(const RunConfig& config, core::PairLevel level, int members) {
  core::PairStep step;
  step.level = level;
  step.members = members;
  step.bytes = config.pairBytes;
  step.window = config.pairWindow;
  step.iters = config.pairIters;
  // untimed windows before each stream: osu_bw's skip, 10 up to 8 KiB messages and 2 above
  step.warmup = config.pairBytes > kSmallPairBytes ? 2 : 10;
  step.latencyIters = config.latencyIters;
  return step;
}

void appendPairRounds(core::Plan& plan, const core::PairStep& base,
                      const std::vector<std::vector<std::pair<int, int>>>& rounds) {
  for (const auto& pairs : rounds) {
    core::PairStep step = base;
    step.index = plan.stepCount();
    step.pairs = pairs;
    plan.pairSteps.push_back(std::move(step));
  }
}

void planPairs(const RunConfig& config, const core::Topology& topology, core::Plan& plan, const FabricClaims& claims) {
  const int ranks = static_cast<int>(topology.ranks.size());
  const int nodes = static_cast<int>(topology.nodes.size());
  if (ranks < 2) {
    if (!config.collectives) {
      throw core::UsageError(fmt::format("--pairwise needs at least 2 ranks (this run has {}); "
                                         "start it with mpirun -np 2 or more",
                                         ranks));
    }
    return;  // nothing to pair; the collectives (or "nothing to measure") speak for the run
  }
  bool sharedNode = false;
  for (const auto& n : topology.nodes) sharedNode = sharedNode || n.ranks > 1;
  std::vector<std::pair<core::PairLevel, int>> levels{{core::PairLevel::kRank, ranks}};
  // With one rank per node the node matrix is the rank matrix: it is derived, not measured again.
  if (nodes >= 2 && sharedNode) levels.emplace_back(core::PairLevel::kNode, nodes);
  for (const auto& [level, members] : levels) {
    const core::PairStep base = pairStepTemplate(config, level, members);
    if (config.pairwiseMode == PairwiseMode::kQuick) {
      appendPairRounds(plan, base, core::packRounds(quickPairs(members, config.pairwisePeers, 1),
                                                    claims.of(level, topology), claims.widthsOf(level, topology),
                                                    claims.lanesOf(level, topology)));
      continue;
    }
    // a round whose pairs cross a switch more often than it has cables up, or would put two on
    // one cable of a subnet routing by destination (lanes), is measured in parts that keep to
    // them, listed pair by pair (only up to kSplitMembers: the lists take memory)
    const bool split = !claims.nodes.empty() && members <= kSplitMembers;
    const auto memberClaims = split ? claims.of(level, topology) : std::vector<std::vector<int>>{};
    const auto widths = split ? claims.widthsOf(level, topology) : core::PartWidths{};
    const auto lanes = split ? claims.lanesOf(level, topology) : std::vector<std::vector<int>>{};
    for (int round = 0; round < core::circleRounds(members); ++round) {
      core::PairStep step = base;
      step.round = round;
      const core::Rounds parts =
          split ? core::packRounds(core::circleRound(members, round), memberClaims, widths, lanes) : core::Rounds{};
      for (std::size_t part = 0; part < std::max<std::size_t>(1, parts.size()); ++part) {
        step.index = plan.stepCount();
        if (parts.size() > 1) {
          step.pairs = parts[part];
          step.part = static_cast<int>(part) + 1;
        }
        plan.pairSteps.push_back(step);
      }
    }
  }
}

void planRetests(const RunConfig& config, core::PairLevel level, int members,
                 const std::vector<std::pair<int, int>>& pairs, core::Plan& plan, int sample,
                 const std::vector<std::vector<int>>& claims, bool separateMachines) {
  if (pairs.empty()) return;
  // A suspect measured beside a really slow pair can look slow because of it (ranks spinning on a
  // slow transfer take the CPU of a machine they share, a throttled route congests the cables it
  // shares): a few suspects are retested alone, one pair per round, unless the claims keep them
  // off each other's uplinks and no two members share a machine. Many are packed into rounds of
  // disjoint pairs, none two through one switch's uplinks where the fabric is known. Elsewhere
  // two pairs of a round may still meet on a cable; each sample is packed from another starting
  // pair, so that a pair does not meet the same neighbours in every sample.
  const bool claimed = std::any_of(claims.begin(), claims.end(), [](const auto& c) { return !c.empty(); });
  core::Rounds rounds;
  if (pairs.size() <= kIsolatedRetests && !(claimed && separateMachines)) {
    for (const auto& pair : pairs) rounds.push_back({pair});
  } else {
    std::vector<std::pair<int, int>> order = pairs;
    const auto samples = static_cast<std::size_t>(std::max(config.retests, sample));
    const std::size_t shift = static_cast<std::size_t>(sample - 1) * order.size() / samples;
    std::rotate(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(shift), order.end());
    rounds = core::packRounds(order, claims);
  }
  core::PairStep base = pairStepTemplate(config, level, members);
  base.sample = sample;
  // The pair met in its round, so its connection is up: one warm window will do above 8 KiB, where
  // the round's two were for that. Small messages keep their ten, which steady the rate.
  if (base.bytes > kSmallPairBytes) base.warmup = 1;
  appendPairRounds(plan, base, rounds);
}

void planWidening(const RunConfig& config, const core::Topology& topology, core::PairLevel level,
                  const std::vector<std::pair<int, int>>& pairs, const FabricClaims& claims, core::Plan& plan) {
  if (pairs.empty()) return;
  const int members = static_cast<int>(level == core::PairLevel::kRank ? topology.ranks.size() : topology.nodes.size());
  appendPairRounds(plan, pairStepTemplate(config, level, members),
                   core::packRounds(pairs, claims.of(level, topology), claims.widthsOf(level, topology),
                                    claims.lanesOf(level, topology)));
}

double stepBytes(const core::CollectiveStep& step) {
  if (!step.waiver.empty()) return 0;
  // a rank moves at most about twice the message per op (all_reduce: 2(n-1)/n); plus the check
  return 2.0 * static_cast<double>(step.bytes) * (step.iters + step.warmup + 2);
}

double stepBytes(const core::CopyStep& step) {
  // per method (at most 3): write and read, each one way, the other and both (x2), plus checks
  return 3.0 * 2 * 4 * static_cast<double>(step.bytes) * (step.iters + step.warmup + 1);
}

double stepBytes(const core::PairStep& step) {
  // one way, the other and both (x2) of the window, the checked transfers; then a generous
  // millisecond per round trip at kSlowestRate: each one-way window's acknowledgement, and the
  // ping-pong with osu_latency's 100 untimed trips
  const double bytes = 4.0 * static_cast<double>(step.bytes) * step.window * (step.iters + step.warmup + 1);
  const double trips = 2.0 * (step.iters + step.warmup) + step.latencyIters + 100;
  return bytes + trips * 1e-3 * kSlowestRate;
}

double stepBytes(const core::ScalingStep& step) {
  return 2.0 * static_cast<double>(step.bytes) * (step.iters + step.warmup);
}

double stepBytes(const core::StorageStep& step) {
  // the random reads run for their seconds; at the slowest rate that is this many bytes
  return static_cast<double>(step.bytes) + step.seconds * kSlowestRate;
}

double stepBytes(const core::TrainingStep& step) {
  // all_reduce moves about twice its size per rank
  return 2.0 * static_cast<double>(step.bytes) * (step.iters + step.warmup);
}

std::string describe(const core::Plan& plan, const core::CollectiveStep& s) {
  const core::OpTraits& op = core::traits(s.op);
  return fmt::format("{} {} {}{} {} {}", core::name(plan.scopes[static_cast<std::size_t>(s.scopeIndex)].scope),
                     op.name, core::traits(s.dtype).name, op.reduces ? fmt::format(" {}", core::name(s.redop)) : "",
                     core::formatBytes(s.bytes), s.inPlace ? "in-place" : "out-of-place");
}

std::string describe(const core::Plan& /*plan*/, const core::ScalingStep& s) {
  return fmt::format("scaling all_reduce {} on {} {}", core::formatBytes(s.bytes), s.n, core::name(s.level));
}

std::string describe(const core::Plan& plan, const core::TrainingStep& s) {
  const std::string what = s.traffic < 0 ? std::string("all traffic at once")
                                         : fmt::format("{} alone", core::name(plan.traffic[static_cast<std::size_t>(s.traffic)].kind));
  return fmt::format("training {} ({})", what, core::formatLayout(plan.layout));
}

std::string describe(const core::Plan& /*plan*/, const core::StorageStep& s) {
  return fmt::format("storage {} {} on {} rank(s) ({})", core::name(s.test), s.path, s.ranks.size(),
                     core::formatBytes(s.bytes));
}

std::string describe(const core::Plan& /*plan*/, const core::CopyStep& s) {
  return fmt::format("copies local ranks {}-{} ({})", s.a, s.b, core::formatBytes(s.bytes));
}

std::string describe(const core::Plan& /*plan*/, const core::PairStep& s) {
  const std::string round = fmt::format("round {}/{}", s.round + 1, core::circleRounds(s.members));
  const std::string what = s.sample > 0      ? fmt::format("retest {}", s.sample)
                           : s.part > 0      ? fmt::format("{} part {}", round, s.part)
                           : s.pairs.empty() ? round
                                             : std::string("quick round");
  return fmt::format("pairwise {} {} ({} pairs, {})", core::name(s.level), what, core::pairsOf(s).size(),
                     core::formatBytes(s.bytes));
}

std::uint64_t peakBytesPerRank(const core::Plan& plan) {
  // Backends keep their largest input and output buffers for the whole sweep, so the footprint is
  // the largest input plus the largest output, possibly of different steps.
  std::uint64_t input = 0;
  std::uint64_t output = 0;
  for (const auto& step : plan.collectiveSteps) {
    if (!step.waiver.empty()) continue;
    const std::size_t ts = core::traits(step.dtype).size;
    for (const auto& g : plan.scopes[static_cast<std::size_t>(step.scopeIndex)].groups) {
      const core::OpShape s = core::shapeOf(step.op, step.bytes, ts, static_cast<int>(g.size()));
      input = std::max(input, s.inputElems * ts);
      output = std::max(output, std::max(s.outputElems, step.inPlace ? s.inputElems : 0) * ts);
    }
  }
  for (const auto& step : plan.pairSteps) {
    input = std::max(input, std::max(step.bytes, step.latencyBytes));
    output = std::max(output, std::max(step.bytes, step.latencyBytes));
  }
  for (const auto& step : plan.scalingSteps) {
    input = std::max(input, step.bytes);
    output = std::max(output, step.bytes);
  }
  // the training pattern's buffers: every traffic type's input and output at once
  std::uint64_t training = 0;
  const std::size_t ts = core::traits(plan.trafficDtype).size;
  for (const auto& t : plan.traffic) {
    const int n = t.groups.empty() ? 1 : static_cast<int>(t.groups.front().size());
    std::uint64_t largest = 0;
    for (core::Op op : t.ops) {
      const core::OpShape s = core::shapeOf(op, t.bytes, ts, n);
      largest = std::max({largest, s.inputElems * ts, s.outputElems * ts});
    }
    training += 2 * largest;
  }
  // a copy step's source and destination live while it runs, next to the kept buffers
  std::uint64_t copies = 0;
  for (const auto& step : plan.copySteps) copies = std::max(copies, 2 * step.bytes);
  return input + output + std::max(copies, training);
}

void checkMemory(const core::Plan& plan, const core::Topology& topology) {
  const std::uint64_t perRank = peakBytesPerRank(plan);
  // Emulated nodes share their host's memory: count every rank on the host.
  std::map<std::string, std::pair<int, std::uint64_t>> hosts;  // ranks, available
  for (const auto& node : topology.nodes) {
    auto& [ranks, available] = hosts[node.hostname];
    ranks += node.ranks;
    available = node.memAvailableBytes;
  }
  for (const auto& [host, use] : hosts) {
    const auto [ranks, available] = use;
    if (available == 0) continue;  // unknown
    const std::uint64_t need = perRank * static_cast<std::uint64_t>(ranks);
    if (static_cast<double>(need) > 0.8 * static_cast<double>(available)) {
      throw core::UsageError(fmt::format(
          "the sweep needs {} of buffers per rank, {} for the {} ranks on host {}, but only {} "
          "is available there; lower -e/--max-bytes",
          core::formatBytes(perRank), core::formatBytes(need), ranks, host,
          core::formatBytes(available)));
    }
  }
}

std::vector<core::ScopeRecord> scopeRecords(const core::Plan& plan) {
  std::vector<core::ScopeRecord> records;
  for (const auto& s : plan.scopes) {
    core::ScopeRecord r;
    r.scope = std::string(core::name(s.scope));
    r.groups = static_cast<int>(s.groups.size());
    for (const auto& g : s.groups) {
      if (!r.members.empty()) r.members += ';';
      r.members += core::formatRanks(g);
    }
    r.status = s.waiver.empty() ? "active" : "waived";
    r.reason = s.waiver;
    records.push_back(std::move(r));
  }
  return records;
}

}  // namespace fabricmap::orchestrator
