// `fabricmap history --json` and the baseline file (`--write-baseline`, read by verify and compare
// with `--baseline`): README.md documents both.
#include <fmt/format.h>

#include <cmath>

#include "core/error.h"
#include "core/files.h"
#include "core/text.h"
#include "core/units.h"
#include "orchestrator/verdicts/history.h"

namespace fabricmap::orchestrator {
namespace {

using Json = nlohmann::ordered_json;

constexpr const char* kBaselineKind = "fabricmap-baseline";
constexpr int kBaselineVersion = 1;

Json numberOrNull(double v) { return std::isfinite(v) ? Json(v) : Json(nullptr); }

Json subjectToJson(const SubjectHistory& s) {
  Json j;
  if (s.b.empty()) {
    j["node"] = s.a;
  } else {
    j["a"] = s.a;
    j["b"] = s.b;
  }
  j["runs"] = s.runs.size();
  j["measured"] = s.measured;
  j["blamed"] = s.blamed;
  j["first_seen"] = s.firstSeen;
  j["last_seen"] = s.lastSeen;
  j["status"] = name(s.status);
  j["flapping"] = s.status == SubjectStatus::kFlapping;
  j["trend"] = s.trend ? Json(*s.trend) : Json(nullptr);
  Json series = Json::array();
  for (const SubjectRun& r : s.runs)
    series.push_back({{"run", r.run}, {"gbs", numberOrNull(r.bandwidth)}, {"blamed", r.blamed}});
  j["series"] = std::move(series);
  return j;
}

Json rulesToJson() {
  return {{"order", "runs sorted by created_utc (then path)"},
          {"blamed", "a warning or error finding whose node_a or node_b names the node; a pair: one naming both"},
          {"node_gbs", "median of the node's row and column of /matrix/node/bw (sent and received)"},
          {"pair_gbs", "the slower direction of the pair's two cells of /matrix/node/bw"},
          {"trend", "the last measured bandwidth / the median of the earlier ones"},
          {"flapping", "blamed in a run and clean (seen, not blamed) in a later run"},
          {"clusters", "runs whose host sets share a host, directly or through other runs, are one cluster; several "
                       "clusters are warned about, not split"}};
}

Json spreadToJson(const Spread& s) {
  return {{"runs", s.runs},
          {"median_gbs", numberOrNull(s.median)},
          {"spread_gbs", numberOrNull(s.spread)},
          {"min_gbs", numberOrNull(s.min)},
          {"max_gbs", numberOrNull(s.max)}};
}

[[noreturn]] void notABaseline(const std::string& path, const std::string& why) {
  throw core::UsageError(
      fmt::format("'{}' is not a fabricmap baseline ({}); write one with `fabricmap history "
                  "FILES --write-baseline history.json`",
                  path, why));
}

// The value of `key` in `j`, of the JSON type `is` checks; refuses the file otherwise.
const nlohmann::json& field(const nlohmann::json& j, const char* key, bool (nlohmann::json::*is)() const noexcept,
                            const std::string& path) {
  if (!j.is_object() || !j.contains(key) || !(j[key].*is)()) notABaseline(path, fmt::format("no valid \"{}\"", key));
  return j[key];
}

Spread spreadFromJson(const nlohmann::json& j, const std::string& path) {
  const auto number = [&](const char* key) {
    const nlohmann::json& v = j.contains(key) ? j[key] : nlohmann::json();
    if (v.is_null()) return kNoValue;
    if (!v.is_number()) notABaseline(path, fmt::format("\"{}\" is not a number", key));
    return v.get<double>();
  };
  Spread s;
  s.runs = field(j, "runs", &nlohmann::json::is_number_integer, path).get<int>();
  s.median = number("median_gbs");
  s.spread = number("spread_gbs");
  s.min = number("min_gbs");
  s.max = number("max_gbs");
  return s;
}

}  // namespace

Json historyToJson(const History& h) {
  Json runs = Json::array();
  for (const HistoryRunInfo& r : h.runs) {
    runs.push_back({{"file", r.path},
                    {"created_utc", r.createdUtc},
                    {"hostnames", r.hostnames},
                    {"backend", r.backend},
                    {"nodes", r.nodes},
                    {"blames", r.blames},
                    {"hosts", r.hosts},
                    {"cluster", r.cluster}});
  }
  Json clusters = Json::array();
  for (const HostCluster& c : h.clusters) clusters.push_back({{"hosts", c.hosts}, {"runs", c.runs}});
  Json skipped = Json::array();
  for (const SkippedFile& s : h.skipped) skipped.push_back({{"file", s.path}, {"reason", s.reason}});
  Json nodes = Json::array();
  for (const SubjectHistory& s : h.nodes) nodes.push_back(subjectToJson(s));
  Json pairs = Json::array();
  for (const SubjectHistory& s : h.pairs) pairs.push_back(subjectToJson(s));
  Json out;
  out["runs"] = std::move(runs);
  out["skipped"] = std::move(skipped);
  out["rules"] = rulesToJson();
  out["nodes"] = std::move(nodes);
  out["pairs"] = std::move(pairs);
  out["clusters"] = std::move(clusters);
  out["mixed_clusters"] = h.clusters.size() > 1;
  out["warnings"] = h.warnings;
  return out;
}

Json baselineToJson(const Baseline& b) {
  Json classes = Json::array();
  for (const ClassBaseline& c : b.classes) {
    Json j = {{"population", c.population}};
    j.update(spreadToJson(c.figure));
    classes.push_back(std::move(j));
  }
  Json collectives = Json::array();
  for (const CollectiveBaseline& c : b.collectives) {
    Json j = {{"scope", c.key.scope}, {"op", c.key.op}, {"dtype", c.key.dtype}, {"bytes", c.key.bytes}};
    j.update(spreadToJson(c.figure));
    collectives.push_back(std::move(j));
  }
  Json out;
  out["kind"] = kBaselineKind;
  out["version"] = kBaselineVersion;
  out["created_utc"] = b.createdUtc;
  out["tool_version"] = b.toolVersion;
  out["runs"] = b.runs;
  out["first_utc"] = b.firstUtc;
  out["last_utc"] = b.lastUtc;
  out["spread_rule"] = "1.4826 x the median absolute deviation of the runs' figures (a robust standard deviation)";
  out["verify_rule"] = fmt::format(
      "a figure below median - {:g} x max(spread, {:g} x median) fails; fewer than {} "
      "runs: not judged",
      kBaselineSigmas, kBaselineMinSpread, kBaselineMinRuns);
  out["classes"] = std::move(classes);
  out["collectives"] = std::move(collectives);
  return out;
}

Baseline baselineFromJson(const std::string& text, const std::string& path) {
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded()) notABaseline(path, "not JSON");
  if (!j.is_object() || !j.contains("kind") || j["kind"] != kBaselineKind)
    notABaseline(path, "no \"kind\": \"fabricmap-baseline\"");
  if (field(j, "version", &nlohmann::json::is_number_integer, path).get<int>() != kBaselineVersion) {
    notABaseline(path, fmt::format("version {}, this fabricmap reads {}", j["version"].dump(), kBaselineVersion));
  }
  Baseline b;
  b.path = path;
  b.runs = field(j, "runs", &nlohmann::json::is_number_integer, path).get<int>();
  b.createdUtc = j.value("created_utc", "");
  b.toolVersion = j.value("tool_version", "");
  b.firstUtc = j.value("first_utc", "");
  b.lastUtc = j.value("last_utc", "");
  for (const auto& c : field(j, "classes", &nlohmann::json::is_array, path)) {
    b.classes.push_back(
        {field(c, "population", &nlohmann::json::is_string, path).get<std::string>(), spreadFromJson(c, path)});
  }
  for (const auto& c : field(j, "collectives", &nlohmann::json::is_array, path)) {
    CollectiveKey key{field(c, "scope", &nlohmann::json::is_string, path).get<std::string>(),
                      field(c, "op", &nlohmann::json::is_string, path).get<std::string>(),
                      field(c, "dtype", &nlohmann::json::is_string, path).get<std::string>(),
                      field(c, "bytes", &nlohmann::json::is_number_unsigned, path).get<std::uint64_t>()};
    b.collectives.push_back({std::move(key), spreadFromJson(c, path)});
  }
  return b;
}

Baseline readBaseline(const std::string& path) {
  constexpr std::size_t kMaxBaselineBytes = 64u << 20;  // per class and collective: kilobytes
  const std::string text = core::readUserFile(path, "baseline", kMaxBaselineBytes);
  if (text.size() > kMaxBaselineBytes) {
    throw core::UsageError(fmt::format("the baseline '{}' is larger than {}: not one `fabricmap history` wrote",
                                       core::printable(path, 256), core::formatBytes(kMaxBaselineBytes)));
  }
  return baselineFromJson(text, path);
}

}  // namespace fabricmap::orchestrator
