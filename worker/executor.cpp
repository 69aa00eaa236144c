// Step execution: timing, checking and gathering (see executor.h).
//
// Timing: after a barrier, each rank runs the iterations back to back and notes when each one
// completed on it. An iteration is done when its last rank is done, so its completion time is the
// maximum over ranks, and its duration the difference between successive completions. The mean of
// these durations is the slowest rank's total / iterations (nccl-tests' -a 3); the median
// and p95 come from the same samples without adding a barrier per iteration.
#include "worker/executor.h"

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <limits>
#include <numeric>
#include <thread>

#include "core/units.h"
#include <fmt/format.h>

#include "core/error.h"
#include "core/pattern_for.h"
#include "worker/clock.h"
#include "worker/mpi_check.h"

namespace fabricmap::worker {
namespace {

std::vector<double> durationsFromCompletions(const std::vector<double>& completion) {
  std::vector<double> d(completion.size());
  double prev = 0.0;
  for (std::size_t i = 0; i < completion.size(); ++i) {
    d[i] = std::max(0.0, completion[i] - prev);
    prev = std::max(prev, completion[i]);
  }
  return d;
}

}  // namespace

// What each rank sends rank 0 after a collective step (raw bytes: homogeneous cluster).
struct Executor::RankReport {
  int group = -1;   // -1: not in a group this step
  int leader = 0;   // 1 on group rank 0, which carries the group's timing
  std::uint64_t wrong = 0;
  double min = 0, median = 0, mean = 0, max = 0, p95 = 0, cv = 0;  // seconds
};

CollectiveSpec specFor(const core::CollectiveStep& step, int nranks) {
  CollectiveSpec spec;
  spec.op = step.op;
  spec.dtype = step.dtype;
  spec.redop = step.redop;
  spec.root = step.root;
  spec.inPlace = step.inPlace;
  spec.shape = core::shapeOf(step.op, step.bytes, core::traits(step.dtype).size, nranks);
  spec.pattern = core::patternFor(step.op, step.redop, step.dtype, nranks,
                                  static_cast<std::uint32_t>(step.index));
  return spec;
}

bool Executor::matches(const core::Fault& fault, int index, std::optional<core::Op> op) const {
  return (fault.rank < 0 || fault.rank == rank_) && (!fault.op || fault.op == op) &&
         (fault.step < 0 || fault.step == index);
}

void Executor::injectAtStart(int index, std::optional<core::Op> op) const {
  for (const core::Fault& f : faults_) {
    if (!matches(f, index, op)) continue;
    switch (f.kind) {
      case core::Fault::Kind::kError:
        throw FM_FAULT(fmt::format("error injected at step {} (--inject-fault)", index));
      case core::Fault::Kind::kStall:
        // a hang as a stopped process shows it: no progress, no CPU
        while (true) std::this_thread::sleep_for(std::chrono::seconds(1));
      case core::Fault::Kind::kCrash:
        std::fflush(nullptr);
        ::raise(SIGKILL);
        break;
      case core::Fault::Kind::kCorrupt:
        break;  // applied to the output before the check
    }
  }
}

PairSpec pairSpecFor(const core::PairStep& step) {
  PairSpec spec;
  spec.bytes = step.bytes;
  spec.window = step.window;
  spec.iters = step.iters;
  spec.warmup = step.warmup;
  spec.latencyIters = step.latencyIters;
  spec.latencyBytes = step.latencyBytes;
  spec.seed = static_cast<std::uint32_t>(step.index);
  return spec;
}

core::StepRecord stepHeader(const core::Plan& plan, const core::CollectiveStep& step) {
  const core::ScopePlan& scope = plan.scopes.at(static_cast<std::size_t>(step.scopeIndex));
  core::StepRecord rec;
  rec.step = step.index;
  rec.kind = core::StepKind::kCollective;
  rec.scope = std::string(core::name(scope.scope));
  rec.op = std::string(core::traits(step.op).name);
  rec.dtype = std::string(core::traits(step.dtype).name);
  rec.redop = core::traits(step.op).reduces ? std::string(core::name(step.redop)) : "none";
  rec.bytes = step.bytes;
  rec.inPlace = step.inPlace;
  rec.groups = static_cast<int>(scope.groups.size());
  return rec;
}

core::StepRecord stepHeader(const core::Plan& /*plan*/, const core::CopyStep& step) {
  core::StepRecord rec;
  rec.step = step.index;
  rec.kind = core::StepKind::kCopy;
  rec.scope = "intra";
  rec.op = fmt::format("gpu_pair {}-{}", step.a, step.b);
  rec.dtype = "uint8";
  rec.redop = "none";
  rec.bytes = step.bytes;
  return rec;
}

core::StepRecord stepHeader(const core::Plan& /*plan*/, const core::PairStep& step) {
  core::StepRecord rec;
  rec.step = step.index;
  rec.kind = core::StepKind::kPairwise;
  rec.scope = std::string(core::name(step.level));
  rec.op = step.sample == 0 ? "round" : "retest";
  rec.dtype = "uint8";
  rec.redop = "none";
  rec.bytes = step.bytes;
  return rec;
}

core::StepRecord stepHeader(const core::Plan& /*plan*/, const core::ScalingStep& step) {
  core::StepRecord rec;
  rec.step = step.index;
  rec.kind = core::StepKind::kScaling;
  rec.scope = std::string(core::name(step.level));
  rec.op = fmt::format("all_reduce n={}", step.n);
  rec.dtype = std::string(core::traits(step.dtype).name);
  rec.redop = "sum";
  rec.bytes = step.bytes;
  rec.groups = static_cast<int>(step.groups.size());
  return rec;
}

core::StepRecord stepHeader(const core::Plan& plan, const core::TrainingStep& step) {
  core::StepRecord rec;
  rec.step = step.index;
  rec.kind = core::StepKind::kTraining;
  rec.scope = step.traffic < 0 ? "concurrent" : "isolated";
  for (std::size_t t = 0; t < plan.traffic.size(); ++t) {
    if (step.traffic >= 0 && static_cast<std::size_t>(step.traffic) != t) continue;
    if (!rec.op.empty()) rec.op += '+';
    rec.op += core::name(plan.traffic[t].kind);
    rec.groups += static_cast<int>(plan.traffic[t].groups.size());
  }
  rec.op += " " + core::formatLayout(plan.layout);
  rec.dtype = std::string(core::traits(plan.trafficDtype).name);
  rec.redop = "sum";
  rec.bytes = step.bytes;
  return rec;
}

Executor::Executor(MPI_Comm world, Backend& backend, const core::Plan& plan,
                   const core::Topology& topology, std::vector<core::Fault> faults)
    : world_(world), backend_(backend), plan_(plan), topology_(topology), faults_(std::move(faults)) {
  FM_MPI(MPI_Comm_rank(world_, &rank_));
  FM_MPI(MPI_Comm_size(world_, &size_));
}

void Executor::enterScope(int scopeIndex) {
  if (scopeIndex == scopeIndex_) return;
  const core::ScopePlan& scope = plan_.scopes.at(static_cast<std::size_t>(scopeIndex));
  group_ = -1;
  int key = 0;
  for (std::size_t g = 0; g < scope.groups.size() && group_ < 0; ++g) {
    const auto& ranks = scope.groups[g];
    if (auto it = std::find(ranks.begin(), ranks.end(), rank_); it != ranks.end()) {
      group_ = static_cast<int>(g);
      key = static_cast<int>(it - ranks.begin());
    }
  }
  MPI_Comm comm = MPI_COMM_NULL;
  FM_MPI(MPI_Comm_split(world_, group_ >= 0 ? group_ : MPI_UNDEFINED, key, &comm));
  groupComm_ = Communicator(comm);
  scopeIndex_ = scopeIndex;
}

std::string Executor::waiver(const core::CollectiveStep& step) const {
  if (!step.waiver.empty()) return step.waiver;
  // Every rank evaluates every group, so all ranks agree without communicating.
  for (const auto& group : plan_.scopes.at(static_cast<std::size_t>(step.scopeIndex)).groups) {
    std::string why = backend_.waiver(specFor(step, static_cast<int>(group.size())));
    if (!why.empty()) return why;
  }
  return {};
}

Executor::RankReport Executor::measureCollective(const core::CollectiveStep& step, const Communicator& group, int groupId) {
  RankReport mine;
  MPI_Comm comm = group.get();
  const int n = group.size();
  CollectiveSpec spec = specFor(step, n);
  std::unique_ptr<CollectiveRunner> runner = backend_.prepare(comm, spec);
  runner->fill();
  report(step.index, StepPhase::kMeasuring);
  sleepingBarrier(comm);  // slow fillers must not make the others spin
  for (int i = 0; i < step.warmup; ++i) runner->runOnce();
  FM_MPI(MPI_Barrier(comm));
  std::vector<double> completion = runner->timeIterations(step.iters);
  FM_MPI(MPI_Barrier(comm));
  completion.push_back(runner->timeBatch(step.iters));  // reduced with the completions, then taken off
  std::vector<double> slowest(completion.size());
  FM_MPI(MPI_Reduce(completion.data(), slowest.data(), static_cast<int>(completion.size()), MPI_DOUBLE,
             MPI_MAX, 0, comm));
  const double batch = slowest.back();
  slowest.pop_back();
  if (step.check) {
    runner->fill();
    runner->runOnce();
    for (const core::Fault& f : faults_) {
      if (f.kind == core::Fault::Kind::kCorrupt && matches(f, step.index, step.op)) runner->corruptOutput(0);
    }
    mine.wrong = runner->countWrong();
  }
  mine.group = groupId;
  if (group.rank() == 0) {
    const core::TimeStats s = core::summarize(durationsFromCompletions(slowest));
    mine.leader = 1;
    mine.min = s.min;
    mine.median = s.median;
    mine.mean = batch > 0 ? batch / step.iters : s.mean;
    mine.max = s.max;
    mine.p95 = s.p95;
    mine.cv = s.cv;
  }
  return mine;
}

StepResult Executor::run(const core::CollectiveStep& step) {
  const Stopwatch clock;
  const core::ScopePlan& scope = plan_.scopes.at(static_cast<std::size_t>(step.scopeIndex));
  StepResult result;
  core::StepRecord& rec = result.step;
  rec = stepHeader(plan_, step);

  std::string why = waiver(step);
  if (!why.empty()) {
    rec.status = "waived";
    rec.reason = std::move(why);
    return result;
  }

  injectAtStart(step.index, step.op);
  enterScope(step.scopeIndex);
  RankReport mine;
  if (group_ >= 0) mine = measureCollective(step, groupComm_, group_);

  report(step.index, StepPhase::kDone);
  // Everyone waits here, asleep, until the last group is done. (A non-blocking gather alone would
  // not do: it completes early on non-root ranks, which would then race ahead and spin in the next
  // blocking call while the groups still measure.)
  sleepingBarrier(world_);
  std::vector<RankReport> all(rank_ == 0 ? static_cast<std::size_t>(size_) : 0);
  FM_MPI(MPI_Gather(&mine, sizeof(RankReport), MPI_BYTE, all.data(), sizeof(RankReport), MPI_BYTE, 0,
             world_));
  if (rank_ != 0) return result;

  bool anyWrong = false;
  for (std::size_t g = 0; g < scope.groups.size(); ++g) {
    const std::vector<int>& ranks = scope.groups[g];
    const int n = static_cast<int>(ranks.size());
    const core::OpShape shape = core::shapeOf(step.op, step.bytes, core::traits(step.dtype).size, n);
    core::CollectiveRecord row;
    row.step = step.index;
    row.scope = rec.scope;
    row.group = static_cast<int>(g);
    row.ranks = core::formatRanks(ranks);
    row.nranks = n;
    row.op = rec.op;
    row.dtype = rec.dtype;
    row.redop = rec.redop;
    row.root = core::traits(step.op).rooted ? step.root : -1;
    row.inPlace = step.inPlace;
    row.bytes = shape.bytes;
    row.count = shape.count;
    row.iters = step.iters;
    row.warmup = step.warmup;
    row.checked = step.check;
    std::vector<int> wrongRanks;
    for (int r : ranks) {
      const RankReport& rep = all[static_cast<std::size_t>(r)];
      row.wrong += rep.wrong;
      if (rep.wrong > 0) wrongRanks.push_back(r);
      if (rep.leader) {
        row.timeUs = {rep.min * 1e6, rep.median * 1e6, rep.mean * 1e6,
                      rep.max * 1e6, rep.p95 * 1e6,    rep.cv};
        row.algbw = core::algbwGBs(shape.bytes, rep.mean);
        row.busbw = core::busbwGBs(step.op, shape.bytes, rep.mean, n);
        row.algbwMedian = core::algbwGBs(shape.bytes, rep.median);
        row.busbwMedian = core::busbwGBs(step.op, shape.bytes, rep.median, n);
      }
    }
    row.wrongRanks = core::formatRanks(wrongRanks);
    anyWrong = anyWrong || row.wrong > 0;
    result.rows.push_back(std::move(row));
  }
  rec.status = anyWrong ? "wrong" : (step.check ? "ok" : "unchecked");
  rec.seconds = clock.seconds();
  return result;
}

namespace {

constexpr int kMaxCopyMethods = 3;
enum CopyPhase { kForward, kBackward, kBoth, kCopyPhases };  // data a -> b, b -> a, both at once

// What each rank sends rank 0 after a copy step.
struct CopyReport {
  int node = -1;  // -1: not in this step's pair
  int first = 0;  // 1 on the pair's `a`
  char path[16] = {};
  int canRead = 0;
  int supported[kMaxCopyMethods] = {};
  double seconds[kMaxCopyMethods][2][kCopyPhases] = {};  // [method][write, read][phase], 0: idle
  std::uint64_t wrong[kMaxCopyMethods] = {};  // elements wrong at this destination, per method
};

// Whether this side copies in `phase`: a write is issued by the data's source, a read by its
// destination.
bool activeIn(CopyPhase phase, bool write, bool first) {
  if (phase == kBoth) return true;
  const bool source = first == (phase == kForward);
  return write ? source : !source;
}

// The rank of local rank `local` on `node`, -1 when the node has none.
int rankAt(const core::Topology& topology, int node, int local) {
  for (const auto& r : topology.ranks) {
    if (r.node == node && r.localRank == local) return r.rank;
  }
  return -1;
}

// This rank's side of a copy step, as one of the pair `pair` (its `first` member copies from a).
CopyReport measureCopies(Backend& backend, const core::CopyStep& step, const std::vector<core::CopyMethod>& methods,
                         const Communicator& pair, bool first) {
  CopyReport mine;
  mine.first = first ? 1 : 0;
  CopySpec spec;
  spec.bytes = step.bytes;
  spec.iters = step.iters;
  spec.warmup = step.warmup;
  spec.seed = static_cast<std::uint32_t>(step.index);
  std::unique_ptr<CopyRunner> runner = backend.prepareCopies(pair.get(), spec);
  const std::string path = runner ? runner->path() : "none";
  std::snprintf(mine.path, sizeof mine.path, "%s", path.c_str());
  mine.canRead = runner && runner->canRead() ? 1 : 0;
  for (std::size_t m = 0; runner && m < methods.size() && m < kMaxCopyMethods; ++m) {
    if (!runner->supports(methods[m])) continue;
    mine.supported[m] = 1;
    for (const bool write : {true, false}) {
      if (!write && !mine.canRead) continue;
      for (const CopyPhase phase : {kForward, kBackward, kBoth}) {
        mine.seconds[m][write ? 0 : 1][phase] = runner->transfer(methods[m], activeIn(phase, write, first), write);
      }
      mine.wrong[m] += runner->checkedCopy(methods[m], first, write) + runner->checkedCopy(methods[m], !first, write);
    }
  }
  return mine;
}

// One row per node and method from both sides' reports: the slower side's time sets the rate.
core::CopyRecord copyRow(const core::CopyStep& step, core::CopyMethod method, std::size_t m, const CopyReport& a,
                         const CopyReport& b) {
  core::CopyRecord c;
  c.step = step.index;
  c.a = step.a;
  c.b = step.b;
  c.method = std::string(core::name(method));
  c.path = a.path;
  c.bytes = step.bytes;
  c.iters = step.iters;
  const double volume = static_cast<double>(step.bytes) * step.iters;
  const bool measured = a.supported[m] && b.supported[m];
  const auto rate = [&](int dir, CopyPhase phase) {
    const double t = std::max(a.seconds[m][dir][phase], b.seconds[m][dir][phase]);
    if (!measured || t <= 0) return std::numeric_limits<double>::quiet_NaN();
    return (phase == kBoth ? 2.0 : 1.0) * volume / t / 1e9;
  };
  c.writeAB = rate(0, kForward);
  c.writeBA = rate(0, kBackward);
  c.writeBidir = rate(0, kBoth);
  c.readAB = rate(1, kForward);
  c.readBA = rate(1, kBackward);
  c.readBidir = rate(1, kBoth);
  c.wrong = a.wrong[m] + b.wrong[m];
  return c;
}

}  // namespace

CopyResult Executor::run(const core::CopyStep& step) {
  const Stopwatch clock;
  CopyResult result;
  core::StepRecord& rec = result.step;
  rec = stepHeader(plan_, step);
  const std::vector<core::CopyMethod> methods = backend_.copyMethods();
  if (methods.empty()) {
    rec.status = "waived";
    rec.reason = fmt::format("the {} backend has no GPU-pair copies", backend_.name());
    return result;
  }

  injectAtStart(step.index, std::nullopt);
  const core::RankRecord& me = topology_.ranks.at(static_cast<std::size_t>(rank_));
  const bool inPair = (me.localRank == step.a || me.localRank == step.b) &&
                      rankAt(topology_, me.node, step.a) >= 0 && rankAt(topology_, me.node, step.b) >= 0;
  MPI_Comm pairComm = MPI_COMM_NULL;
  FM_MPI(MPI_Comm_split(world_, inPair ? me.node : MPI_UNDEFINED, me.localRank, &pairComm));
  Communicator pair(pairComm);

  CopyReport mine;
  if (inPair) {
    report(step.index, StepPhase::kMeasuring);
    mine = measureCopies(backend_, step, methods, pair, me.localRank == step.a);
    mine.node = me.node;
  }

  report(step.index, StepPhase::kDone);
  sleepingBarrier(world_);
  std::vector<CopyReport> all(rank_ == 0 ? static_cast<std::size_t>(size_) : 0);
  FM_MPI(MPI_Gather(&mine, sizeof(CopyReport), MPI_BYTE, all.data(), sizeof(CopyReport), MPI_BYTE, 0, world_));
  if (rank_ != 0) return result;

  bool anyWrong = false;
  for (const core::NodeRecord& node : topology_.nodes) {
    const int ra = rankAt(topology_, node.node, step.a);
    const int rb = rankAt(topology_, node.node, step.b);
    if (ra < 0 || rb < 0) continue;
    for (std::size_t m = 0; m < methods.size() && m < kMaxCopyMethods; ++m) {
      core::CopyRecord c = copyRow(step, methods[m], m, all[static_cast<std::size_t>(ra)], all[static_cast<std::size_t>(rb)]);
      c.node = node.node;
      c.rankA = ra;
      c.rankB = rb;
      c.gpuA = topology_.ranks[static_cast<std::size_t>(ra)].gpuIndex;
      c.gpuB = topology_.ranks[static_cast<std::size_t>(rb)].gpuIndex;
      anyWrong = anyWrong || c.wrong > 0;
      result.rows.push_back(std::move(c));
    }
  }
  rec.groups = static_cast<int>(result.rows.size() / std::max<std::size_t>(methods.size(), 1));
  rec.status = anyWrong ? "wrong" : "ok";
  rec.seconds = clock.seconds();
  return result;
}

namespace {

// What each rank sends rank 0 after a pair round.
struct PairReport {
  int slot = -1;     // index of this rank's pair in the round, -1 when idle
  int first = 0;     // 1 on the pair's first member (its "a" side)
  int latency = 0;   // 1 when this rank measured the latency
  double send = 0;   // seconds of its sender-only stream
  double bidir = 0;  // seconds of the bidirectional stream
  int sendIters = 0; // the windows those timed (fewer for a clearly slow pair)
  int bidirIters = 0;
  double cv = 0;     // the least steady of its streams: coefficient of variation of iteration times
  double oneWay = 0; // seconds, one-way latency
  std::uint64_t wrong = 0;
  std::array<TypicalWindows::Sample, 2> windows{};  // its sent and both-ways windows, for the typical
};

// My partner in a round of `pairs`: the rank of the other member (rank level), or the rank with
// my local index on the other node (node level; ranks beyond the smaller node's count sit out).
// Sets `mine`'s slot and side; -1 when I sit out.
int partnerOf(const core::Topology& topology, int rank, bool nodeLevel, const std::vector<std::pair<int, int>>& pairs,
              PairReport& mine) {
  const core::RankRecord& me = topology.ranks.at(static_cast<std::size_t>(rank));
  const int self = nodeLevel ? me.node : rank;
  for (std::size_t slot = 0; slot < pairs.size(); ++slot) {
    const auto [a, b] = pairs[slot];
    if (self != a && self != b) continue;
    const bool first = self == a;
    const int peer = nodeLevel ? rankAt(topology, first ? b : a, me.localRank) : (first ? b : a);
    if (peer < 0) continue;
    mine.slot = static_cast<int>(slot);
    mine.first = first ? 1 : 0;
    return peer;
  }
  return -1;
}

// One pair's row from its members' reports (node level: every stream of the node pair).
core::PairRecord pairRow(const core::PairStep& step, std::size_t slot, std::pair<int, int> pair,
                         const std::vector<PairReport>& all) {
  core::PairRecord rec;
  rec.step = step.index;
  rec.level = std::string(core::name(step.level));
  rec.a = pair.first;
  rec.b = pair.second;
  rec.sample = step.sample;
  rec.bytes = step.bytes;
  rec.window = step.window;
  rec.iters = step.iters;
  // the bytes each direction moved over the longest of its streams' times
  const double perWindow = static_cast<double>(step.bytes) * step.window;
  double sendA = 0, sendB = 0, bidir = 0, volumeA = 0, volumeB = 0, volumeBoth = 0;
  for (const PairReport& r : all) {
    if (r.slot != static_cast<int>(slot)) continue;
    if (r.first) {
      ++rec.streams;
      sendA = std::max(sendA, r.send);
      volumeA += perWindow * r.sendIters;
    } else {
      sendB = std::max(sendB, r.send);
      volumeB += perWindow * r.sendIters;
    }
    rec.iters = std::min({rec.iters, r.sendIters, r.bidirIters});
    bidir = std::max(bidir, r.bidir);
    volumeBoth += perWindow * r.bidirIters;
    rec.cv = std::max(rec.cv, r.cv);
    if (r.latency && r.first) rec.latencyUs = r.oneWay * 1e6;
    rec.wrong += r.wrong;
  }
  rec.bwAB = sendA > 0 ? volumeA / sendA / 1e9 : 0.0;
  rec.bwBA = sendB > 0 ? volumeB / sendB / 1e9 : 0.0;
  rec.bwBidir = bidir > 0 ? volumeBoth / bidir / 1e9 : 0.0;
  return rec;
}

}  // namespace

std::size_t Executor::kindOf(bool nodeLevel, int peer) const {
  if (nodeLevel) return 2;
  const auto& ranks = topology_.ranks;
  return ranks.at(static_cast<std::size_t>(rank_)).node == ranks.at(static_cast<std::size_t>(peer)).node ? 0 : 1;
}

TypicalWindows::Sample Executor::firstWindow(const core::PairStep& step, int peer, bool leads,
                                             const Communicator& phase) {
  PairSpec spec = pairSpecFor(step);
  setProbe(spec, 0);
  const bool probes = spec.probeMessages > 0;
  PairSpec one = spec;
  one.warmup = 0;
  one.iters = 1;
  one.probeMessages = 0;
  if (probes) {
    one.bytes = spec.probeBytes;
    one.window = spec.probeMessages;
  }
  if (phase.member()) FM_MPI(MPI_Barrier(phase.get()));
  const double seconds = backend_.preparePairs(world_, one)->stream(peer, leads, !leads).seconds;
  const auto kind = static_cast<int>(kindOf(step.level == core::PairLevel::kNode, peer));
  return probes ? TypicalWindows::Sample{kind, 0, seconds} : TypicalWindows::Sample{kind, seconds, 0};
}

PairResult Executor::run(const core::PairStep& step) {
  const Stopwatch clock;
  injectAtStart(step.index, std::nullopt);
  const std::vector<std::pair<int, int>> pairs = core::pairsOf(step);
  const bool nodeLevel = step.level == core::PairLevel::kNode;
  PairReport mine;
  const int peer = partnerOf(topology_, rank_, nodeLevel, pairs, mine);

  // Node level: the rank pairs of one node pair start each phase together, so a direction's
  // aggregate is measured with all its streams running.
  MPI_Comm phaseComm = MPI_COMM_NULL;
  if (nodeLevel) FM_MPI(MPI_Comm_split(world_, peer >= 0 ? mine.slot : MPI_UNDEFINED, rank_, &phaseComm));
  Communicator phase(phaseComm);
  const auto together = [&] {
    if (phase.member()) FM_MPI(MPI_Barrier(phase.get()));
  };

  const bool first = mine.first == 1;
  bool leads = false;
  if (peer >= 0) {
    report(step.index, StepPhase::kMeasuring);
    const auto [a, b] = pairs.at(static_cast<std::size_t>(mine.slot));
    leads = first == core::aStreamsFirst(a, b);
  }
  // the level's first round: the typical window from a probe per pair, before any is judged
  if (!(nodeLevel ? typical_.knows(2) : typical_.knows(0) || typical_.knows(1))) {
    typical_.agree(world_, {peer >= 0 ? firstWindow(step, peer, leads, phase) : TypicalWindows::Sample{}});
  }
  if (peer >= 0) {
    const std::size_t kind = kindOf(nodeLevel, peer);
    PairSpec spec = pairSpecFor(step);
    spec.slowWindow = kClearlySlow * typical_.window(kind);
    setProbe(spec, typical_.probe(kind));
    spec.probes = step.sample > 0 ? 1 : 2;  // a retested pair's connection is up
    std::unique_ptr<PairRunner> runner = backend_.preparePairs(world_, spec);
    // the leading side's stream, then the other's, then both at once; every node-level stream of
    // a direction runs together
    together();
    const PairRunner::Timing one = runner->stream(peer, leads, !leads);
    together();
    const PairRunner::Timing two = runner->stream(peer, !leads, leads);
    const PairRunner::Timing& sent = leads ? one : two;
    mine.send = sent.seconds;
    mine.sendIters = sent.iters;
    together();
    const PairRunner::Timing both = runner->stream(peer, true, true);
    mine.bidir = both.seconds;
    mine.bidirIters = both.iters;
    mine.cv = std::max({one.cv, two.cv, both.cv});
    for (std::size_t i = 0; i < 2; ++i) {
      const PairRunner::Timing& t = i == 0 ? sent : both;
      if (t.iters > 0 && !t.clearlySlow) mine.windows[i] = {static_cast<int>(kind), t.seconds / t.iters, t.probe};
    }
    const bool measuresLatency = !nodeLevel || topology_.ranks.at(static_cast<std::size_t>(rank_)).localRank == 0;
    if (step.latencyIters > 0 && measuresLatency) {
      mine.oneWay = runner->pingPong(peer, first);
      mine.latency = 1;
    }
    mine.wrong = runner->checkedTransfer(peer, first) + runner->checkedTransfer(peer, !first);
  }

  report(step.index, StepPhase::kDone);
  sleepingBarrier(world_);
  std::vector<PairReport> all(rank_ == 0 ? static_cast<std::size_t>(size_) : 0);
  FM_MPI(MPI_Gather(&mine, sizeof(PairReport), MPI_BYTE, all.data(), sizeof(PairReport), MPI_BYTE, 0, world_));
  std::vector<TypicalWindows::Sample> samples;
  for (const PairReport& r : all) samples.insert(samples.end(), r.windows.begin(), r.windows.end());
  typical_.agreeGathered(world_, std::move(samples));
  PairResult result;
  if (rank_ != 0) return result;

  bool anyWrong = false;
  for (std::size_t slot = 0; slot < pairs.size(); ++slot) {
    core::PairRecord rec = pairRow(step, slot, pairs[slot], all);
    if (rec.streams == 0) continue;  // nodes without ranks to pair (cannot happen with 1+ each)
    anyWrong = anyWrong || rec.wrong > 0;
    result.rows.push_back(std::move(rec));
  }
  core::StepRecord& s = result.step;
  s = stepHeader(plan_, step);
  s.groups = static_cast<int>(result.rows.size());
  s.status = anyWrong ? "wrong" : "ok";
  s.seconds = clock.seconds();
  return result;
}

namespace {

// This rank's group among `groups` and its position there; -1, 0 when it has none.
std::pair<int, int> placeIn(const std::vector<std::vector<int>>& groups, int rank) {
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const auto it = std::find(groups[g].begin(), groups[g].end(), rank);
    if (it != groups[g].end()) return {static_cast<int>(g), static_cast<int>(it - groups[g].begin())};
  }
  return {-1, 0};
}

Communicator splitInto(MPI_Comm world, const std::vector<std::vector<int>>& groups, int rank) {
  const auto [group, key] = placeIn(groups, rank);
  MPI_Comm comm = MPI_COMM_NULL;
  FM_MPI(MPI_Comm_split(world, group >= 0 ? group : MPI_UNDEFINED, key, &comm));
  return Communicator(comm);
}

}  // namespace

ScalingResult Executor::run(const core::ScalingStep& step) {
  const Stopwatch clock;
  ScalingResult result;
  result.step = stepHeader(plan_, step);
  injectAtStart(step.index, core::Op::kAllReduce);
  core::CollectiveStep collective;
  collective.index = step.index;
  collective.op = core::Op::kAllReduce;
  collective.dtype = step.dtype;
  collective.bytes = step.bytes;
  collective.iters = step.iters;
  collective.warmup = step.warmup;
  const Communicator comm = splitInto(world_, step.groups, rank_);
  RankReport mine;
  if (comm.member()) mine = measureCollective(collective, comm, placeIn(step.groups, rank_).first);
  report(step.index, StepPhase::kDone);
  sleepingBarrier(world_);
  std::vector<RankReport> all(rank_ == 0 ? static_cast<std::size_t>(size_) : 0);
  FM_MPI(MPI_Gather(&mine, sizeof(RankReport), MPI_BYTE, all.data(), sizeof(RankReport), MPI_BYTE, 0, world_));
  if (rank_ != 0) return result;

  core::ScalingRecord row;
  row.step = step.index;
  row.level = result.step.scope;
  row.n = step.n;
  row.groups = static_cast<int>(step.groups.size());
  row.op = "all_reduce";
  row.iters = step.iters;
  std::vector<int> wrongRanks;
  for (const RankReport& rep : all) {
    if (rep.group < 0) continue;
    row.wrong += rep.wrong;
    if (!rep.leader || rep.median * 1e6 < row.timeUs.median) continue;
    // the slowest group speaks for the point: the sweep is as fast as its worst node
    const int n = static_cast<int>(step.groups[static_cast<std::size_t>(rep.group)].size());
    const core::OpShape shape = core::shapeOf(core::Op::kAllReduce, step.bytes, core::traits(step.dtype).size, n);
    row.nranks = n;
    row.bytes = shape.bytes;
    row.timeUs = {rep.min * 1e6, rep.median * 1e6, rep.mean * 1e6, rep.max * 1e6, rep.p95 * 1e6, rep.cv};
    row.algbw = core::algbwGBs(shape.bytes, rep.median);
    row.busbw = core::busbwGBs(core::Op::kAllReduce, shape.bytes, rep.median, n);
  }
  result.step.status = row.wrong > 0 ? "wrong" : "ok";
  result.step.seconds = clock.seconds();
  result.rows.push_back(std::move(row));
  return result;
}

TrafficRunner& Executor::traffic() {
  if (traffic_) return *traffic_;
  std::vector<TrafficSpec> specs;
  for (const core::Traffic& t : plan_.traffic) {
    trafficComms_.push_back(splitInto(world_, t.groups, rank_));
    TrafficSpec spec;
    spec.group = trafficComms_.back().get();
    spec.ops = t.ops;
    spec.dtype = plan_.trafficDtype;
    spec.bytes = t.bytes;
    spec.messages = t.messages;
    specs.push_back(std::move(spec));
  }
  traffic_ = backend_.prepareTraffic(specs);
  return *traffic_;
}

TrainingResult Executor::run(const core::TrainingStep& step) {
  const Stopwatch clock;
  TrainingResult result;
  result.step = stepHeader(plan_, step);
  injectAtStart(step.index, std::nullopt);
  TrafficRunner& runner = traffic();
  const std::size_t types = plan_.traffic.size();
  std::vector<bool> active(types);
  for (std::size_t t = 0; t < types; ++t) active[t] = step.traffic < 0 || static_cast<std::size_t>(step.traffic) == t;
  report(step.index, StepPhase::kMeasuring);
  for (int i = 0; i < step.warmup; ++i) {
    FM_MPI(MPI_Barrier(world_));
    runner.step(active);
  }
  // seconds[t * iters + i]: type t in training step i, on this rank
  const std::size_t iters = static_cast<std::size_t>(step.iters);
  std::vector<double> seconds(types * iters);
  for (std::size_t i = 0; i < iters; ++i) {
    FM_MPI(MPI_Barrier(world_));  // every type of every group starts together
    const std::vector<double> s = runner.step(active);
    for (std::size_t t = 0; t < types; ++t) seconds[t * iters + i] = s[t];
  }
  std::vector<double> slowest(rank_ == 0 ? seconds.size() : 0);
  FM_MPI(MPI_Reduce(seconds.data(), slowest.data(), static_cast<int>(seconds.size()), MPI_DOUBLE, MPI_MAX, 0, world_));
  report(step.index, StepPhase::kDone);
  if (rank_ != 0) return result;

  const std::size_t ts = core::traits(plan_.trafficDtype).size;
  for (std::size_t t = 0; t < types; ++t) {
    if (!active[t]) continue;
    const core::Traffic& traffic = plan_.traffic[t];
    const int n = static_cast<int>(traffic.groups.front().size());
    core::TrainingRecord row;
    row.step = step.index;
    row.mode = result.step.scope;
    row.traffic = std::string(core::name(traffic.kind));
    std::uint64_t counted = 0;  // every op of one message
    for (core::Op op : traffic.ops) {
      if (!row.ops.empty()) row.ops += '+';
      row.ops += core::traits(op).name;
      const std::uint64_t bytes = core::shapeOf(op, traffic.bytes, ts, n).bytes;
      counted += bytes;
      row.bytes = bytes;
    }
    row.groups = static_cast<int>(traffic.groups.size());
    row.nranks = n;
    row.messages = traffic.messages;
    row.iters = step.iters;
    row.warmup = step.warmup;
    std::vector<double> samples(slowest.begin() + static_cast<std::ptrdiff_t>(t * iters),
                                slowest.begin() + static_cast<std::ptrdiff_t>((t + 1) * iters));
    const core::TimeStats s = core::summarize(samples);
    row.timeUs = {s.min * 1e6, s.median * 1e6, s.mean * 1e6, s.max * 1e6, s.p95 * 1e6, s.cv};
    const std::uint64_t total = counted * static_cast<std::uint64_t>(traffic.messages);
    row.algbw = core::algbwGBs(total, s.median);
    // the ops of a message share one bus factor: (n-1)/n for all_gather and reduce_scatter
    row.busbw = core::busbwGBs(traffic.ops.front(), total, s.median, n);
    result.rows.push_back(std::move(row));
  }
  result.step.status = "unchecked";
  result.step.seconds = clock.seconds();
  return result;
}

}  // namespace fabricmap::worker
