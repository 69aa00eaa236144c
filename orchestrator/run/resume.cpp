// Resuming a stopped run (see resume.h).
#include "orchestrator/run/resume.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/config.h"
#include "core/error.h"

namespace fabricmap::orchestrator {
namespace {

core::UsageError cannotResume(const std::string& path, const std::string& why) {
  return core::UsageError(fmt::format("cannot resume '{}': {}", path, why));
}

std::string describe(const core::StepRecord& s) {
  std::string text = fmt::format("{} {} {}", core::name(s.kind), s.scope, s.op);
  if (s.kind == core::StepKind::kCollective) {
    text += fmt::format(" {}{} {} B {}", s.dtype, s.redop == "none" ? "" : " " + s.redop, s.bytes,
                        s.inPlace ? "in-place" : "out-of-place");
  } else {
    text += fmt::format(" {} B", s.bytes);
  }
  return text;
}

}  // namespace

std::string encode(const RecordedRun& run) {
  return nlohmann::json{{"args", run.args}, {"backend", run.backend}}.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

RecordedRun decodeRecordedRun(const std::string& wire) {
  const auto j = nlohmann::json::parse(wire);
  return {j.at("args").get<std::vector<std::string>>(), j.at("backend").get<std::string>()};
}

results::ResultsFile readResumable(const std::string& path) {
  results::ResultsFile file = results::readResults(path);
  const core::Provenance& p = file.provenance;
  if (file.complete) throw cannotResume(path, "the run is complete; there is nothing left to measure");
  if (p.toolVersion != FABRICMAP_VERSION || p.gitRevision != FABRICMAP_GIT_REVISION) {
    throw cannotResume(path, fmt::format("it was measured by fabricmap {} ({}), this is {} ({}); finish "
                                         "it with that build, or measure again",
                                         p.toolVersion, p.gitRevision, FABRICMAP_VERSION, FABRICMAP_GIT_REVISION));
  }
  if (p.runArguments.empty()) throw cannotResume(path, "the file does not record its run arguments");
  const auto args = nlohmann::json::parse(p.runArguments, nullptr, false);
  if (!args.is_array() || !std::all_of(args.begin(), args.end(), [](const auto& a) { return a.is_string(); })) {
    throw cannotResume(path, "its run_arguments attribute is not a list of arguments");
  }
  return file;
}

RecordedRun recordedRunOf(const results::ResultsFile& file) {
  return {nlohmann::json::parse(file.provenance.runArguments).get<std::vector<std::string>>(),
          file.provenance.backend};
}

RunConfig resumedConfig(const ParsedRun& given, const RecordedRun& recorded) {
  const std::string& path = given.resume;
  ParsedRun before;
  try {
    before = parseRunOptions(recorded.args);
  } catch (const core::UsageError& e) {
    throw cannotResume(path, fmt::format("its recorded arguments no longer parse: {}", e.what()));
  }
  if (given.measurementGiven) {
    const std::vector<std::string> differences = measurementDifferences(before.config, given.config);
    if (!differences.empty()) {
      std::string list;
      for (std::size_t i = 0; i < differences.size() && i < 8; ++i) list += (i ? "; " : "") + differences[i];
      if (differences.size() > 8) list += fmt::format("; and {} more", differences.size() - 8);
      throw cannotResume(path, fmt::format("this command measures differently from the recorded run (recorded "
                                           "vs given: {}); run it with only --resume to take the recorded "
                                           "configuration",
                                           list));
    }
  }
  RunConfig config = before.config;
  config.backend = recorded.backend;  // the backend it resolved to, not "auto" again
  config.output = path;
  config.faults = given.config.faults;
  config.progress = given.config.progress;
  if (given.config.stepTimeout > 0) config.stepTimeout = given.config.stepTimeout;
  return config;
}

std::string layoutDifference(const core::Topology& recorded, const core::Topology& now) {
  if (recorded.ranks.size() != now.ranks.size()) {
    return fmt::format("the run was measured by {} ranks, this job has {}", recorded.ranks.size(), now.ranks.size());
  }
  if (recorded.nodes.size() != now.nodes.size()) {
    return fmt::format("the run was measured on {} nodes, this job has {}", recorded.nodes.size(), now.nodes.size());
  }
  for (std::size_t i = 0; i < now.nodes.size(); ++i) {
    const core::NodeRecord& r = recorded.nodes[i];
    const core::NodeRecord& n = now.nodes[i];
    if (r.name != n.name || r.ranks != n.ranks) {
      return fmt::format("node {} was {} with {} ranks, in this job it is {} with {}", i, r.name, r.ranks, n.name,
                         n.ranks);
    }
  }
  for (std::size_t i = 0; i < now.ranks.size(); ++i) {
    const core::RankRecord& r = recorded.ranks[i];
    const core::RankRecord& n = now.ranks[i];
    if (r.node != n.node || r.localRank != n.localRank) {
      return fmt::format("rank {} was local rank {} of node {}, in this job local rank {} of node {}", i,
                         r.localRank, r.node, n.localRank, n.node);
    }
    if (!r.gpuUuid.empty() && !n.gpuUuid.empty() && r.gpuUuid != n.gpuUuid) {
      return fmt::format("rank {} measured GPU {}, in this job it has GPU {}", i, r.gpuUuid, n.gpuUuid);
    }
  }
  return {};
}

core::Provenance resumedProvenance(core::Provenance recorded, int plannedSteps, int kept, const std::string& utc,
                                   const std::string& commandLine) {
  recorded.resumed += fmt::format("{}{} kept {} of {} steps: {}", recorded.resumed.empty() ? "" : "\n", utc, kept,
                                  plannedSteps, commandLine);
  recorded.plannedSteps = plannedSteps;
  return recorded;
}

Replay::Replay(const results::ResultsFile& file) {
  core::forEachRowType([&]<class R>(std::type_identity<R>) {
    auto& byStep = std::get<std::map<int, std::vector<R>>>(rows_);
    for (const R& r : results::rowsIn<R>(file)) byStep[r.step].push_back(r);
  });
  for (const auto& s : file.steps) steps_[s.step] = s;
  for (const auto& f : file.findings) {
    if (f.kind == core::FindingKind::kHang) carried_.push_back(f);
  }
}

std::string Replay::mismatch(const core::StepRecord& planned, const std::vector<std::pair<int, int>>& pairs) const {
  const core::StepRecord& r = steps_.at(planned.step);
  if (r.kind != planned.kind || r.scope != planned.scope || r.op != planned.op || r.dtype != planned.dtype ||
      r.redop != planned.redop || r.bytes != planned.bytes || r.inPlace != planned.inPlace) {
    return fmt::format("step {} of the file is {}, this plan's is {}", planned.step, describe(r), describe(planned));
  }
  if (planned.kind != core::StepKind::kPairwise) return {};
  const std::set<std::pair<int, int>> wanted(pairs.begin(), pairs.end());
  const auto& recorded = std::get<std::map<int, std::vector<core::PairRecord>>>(rows_);
  const auto it = recorded.find(planned.step);
  if (it == recorded.end()) return {};
  for (const auto& p : it->second) {
    if (!wanted.contains({p.a, p.b}) && !wanted.contains({p.b, p.a})) {
      return fmt::format("step {} of the file measured the pair {}-{}, which this plan's step does not have",
                         planned.step, p.a, p.b);
    }
  }
  return {};
}

std::vector<char> Replay::match(const core::Plan& plan, int from, bool strict) const {
  const int total = plan.stepCount();
  std::vector<char> flags(static_cast<std::size_t>(std::max(0, total - from)), 0);
  const auto judge = [&](const core::StepRecord& planned, const std::vector<std::pair<int, int>>& pairs) {
    if (planned.step < from || !steps_.contains(planned.step)) return;
    const std::string why = mismatch(planned, pairs);
    if (!why.empty() && strict) {
      throw core::UsageError("cannot resume: the recorded run planned other steps (" + why +
                             "); measure again instead");
    }
    flags[static_cast<std::size_t>(planned.step - from)] = why.empty() ? 1 : 0;
  };
  plan.forEachStepList([&]<class S>(const std::vector<S>& list) {
    for (const S& s : list) {
      if constexpr (std::is_same_v<S, core::PairStep>) {
        judge(worker::stepHeader(plan, s), core::pairsOf(s));
      } else {
        judge(worker::stepHeader(plan, s), {});
      }
    }
  });
  return flags;
}

}  // namespace fabricmap::orchestrator
