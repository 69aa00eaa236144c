// The executor's storage steps (see executor.h): the reading ranks' I/O at once, gathered to rank 0
// as rows per rank, per node and for the whole job.
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "core/error.h"
#include "worker/clock.h"
#include "worker/comm.h"
#include "worker/executor.h"
#include "worker/mpi_check.h"
#include "worker/storage.h"

namespace fabricmap::worker {
namespace {

// This rank's place among a step's reading ranks; -1 when it reads nothing.
int readerIndex(const core::StorageStep& step, int rank) {
  const auto it = std::find(step.ranks.begin(), step.ranks.end(), rank);
  return it == step.ranks.end() ? -1 : static_cast<int>(it - step.ranks.begin());
}

// The first rank's problem, the same text on every rank ("" when none). Collective.
std::string agreed(MPI_Comm world, const std::string& mine) {
  const std::vector<std::string> all = gatherStrings(world, mine);
  std::string first;
  for (std::size_t r = 0; r < all.size() && first.empty(); ++r) {
    if (!all[r].empty()) first = fmt::format("rank {}: {}", r, all[r]);
  }
  return broadcastString(world, first);
}

// What rank 0 gathers of every rank's I/O (the cache as a code: 0 none, 1 direct, 2 dropped, 3 cached).
struct IoReport {
  std::uint64_t bytes = 0;
  std::uint64_t ops = 0;
  double seconds = 0;
  int cache = 0;
  int reading = 0;
};

constexpr const char* kCaches[] = {"", "direct", "dropped", "cached"};

int cacheCode(const std::string& cache) {
  for (int c = 1; c < 4; ++c) {
    if (cache == kCaches[c]) return c;
  }
  return 0;
}

core::StorageRecord rowOf(const core::StorageStep& step, const char* level, int rank, int node) {
  core::StorageRecord row;
  row.step = step.index;
  row.test = std::string(core::name(step.test));
  row.level = level;
  row.rank = rank;
  row.node = node;
  row.blockBytes = step.blockBytes;
  return row;
}

void add(core::StorageRecord& row, const IoReport& io) {
  row.bytes += io.bytes;
  row.ops += io.ops;
  row.seconds = std::max(row.seconds, io.seconds);
  row.ranks += 1;
  // the worst of the ranks': a cached figure makes the row's cached
  const int worst = std::max(cacheCode(row.cache), io.cache);
  row.cache = kCaches[worst];
}

void finish(core::StorageRecord& row) {
  row.gbps = row.seconds > 0 ? static_cast<double>(row.bytes) / row.seconds / 1e9 : 0;
  row.iops = row.seconds > 0 ? static_cast<double>(row.ops) / row.seconds : 0;
}

}  // namespace

core::StepRecord stepHeader(const core::Plan& /*plan*/, const core::StorageStep& step) {
  core::StepRecord rec;
  rec.step = step.index;
  rec.kind = core::StepKind::kStorage;
  rec.scope = "storage";
  rec.op = std::string(core::name(step.test));
  rec.dtype = "uint8";
  rec.redop = "none";
  rec.bytes = step.bytes;
  rec.groups = static_cast<int>(step.ranks.size());
  return rec;
}

void checkStorage(MPI_Comm world, const core::Plan& plan) {
  if (plan.storageSteps.empty()) return;
  int rank = 0;
  FM_MPI(MPI_Comm_rank(world, &rank));
  const core::StorageStep& first = plan.storageSteps.front();
  const int reader = readerIndex(first, rank);
  const int readers = static_cast<int>(first.ranks.size());
  const std::string problem = agreed(world, reader < 0 ? "" : storageProblem(first, rank, reader, readers));
  if (!problem.empty()) throw core::UsageError("--storage: " + problem);
}

StorageResult Executor::run(const core::StorageStep& step) {
  const Stopwatch clock;
  StorageResult result;
  result.step = stepHeader(plan_, step);
  injectAtStart(step.index, std::nullopt);
  const int reader = readerIndex(step, rank_);
  sleepingBarrier(world_);
  StorageIo io;
  if (reader >= 0) {
    io = runStorageTest(step, storageFilesOf(step, rank_, reader, static_cast<int>(step.ranks.size())), rank_);
  }
  report(step.index, StepPhase::kDone);
  sleepingBarrier(world_);  // the ranks that read nothing must not spin beside those still reading
  const std::string problem = agreed(world_, io.error);
  if ((step.removeAfter || !problem.empty()) && reader >= 0 && step.ownFiles) removeOwnStorage(step.path, rank_);
  if (!problem.empty()) throw core::UsageError(fmt::format("--storage {}: {}", core::name(step.test), problem));
  const IoReport mine{io.bytes, io.ops, io.seconds, cacheCode(io.cache), reader >= 0 ? 1 : 0};
  std::vector<IoReport> all(rank_ == 0 ? static_cast<std::size_t>(size_) : 0);
  FM_MPI(MPI_Gather(&mine, sizeof(IoReport), MPI_BYTE, all.data(), sizeof(IoReport), MPI_BYTE, 0, world_));
  if (rank_ != 0) return result;

  core::StorageRecord total = rowOf(step, "all", -1, -1);
  std::map<int, core::StorageRecord> nodes;
  for (int r = 0; r < size_; ++r) {
    const IoReport& rep = all[static_cast<std::size_t>(r)];
    if (rep.reading == 0) continue;
    const int node = topology_.ranks.at(static_cast<std::size_t>(r)).node;
    core::StorageRecord row = rowOf(step, "rank", r, node);
    add(row, rep);
    finish(row);
    result.rows.push_back(row);
    auto [it, fresh] = nodes.try_emplace(node, rowOf(step, "node", -1, node));
    add(it->second, rep);
    add(total, rep);
  }
  for (auto& [node, row] : nodes) {
    finish(row);
    result.rows.push_back(row);
  }
  finish(total);
  result.rows.push_back(total);
  result.step.status = "ok";
  result.step.seconds = clock.seconds();
  return result;
}

}  // namespace fabricmap::worker
