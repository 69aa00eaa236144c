// JSON output built from the schema's column lists, so names match the HDF5 file exactly.
#include "results/json.h"

#include <cmath>
#include <sstream>
#include <string>

#include "results/schema.h"

namespace fabricmap::results {
namespace {

nlohmann::ordered_json valueJson(const h5::Value& v) {
  return std::visit(
      [](const auto& x) -> nlohmann::ordered_json {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, double>) {
          if (!std::isfinite(x)) return nullptr;  // JSON has no NaN/inf
        }
        return x;
      },
      v);
}

template <class R>
nlohmann::ordered_json objectOf(const std::vector<Column<R>>& columns, const R& record) {
  nlohmann::ordered_json o = nlohmann::ordered_json::object();
  for (const auto& c : columns) {
    h5::Value v = c.get(record);
    // a column holding JSON text (run_config) is embedded as JSON, not as a string
    if (const auto* text = std::get_if<std::string>(&v); text && std::string_view(c.unit) == "json") {
      auto parsed = nlohmann::ordered_json::parse(*text, nullptr, false);
      o[c.name] = text->empty() ? nlohmann::ordered_json(nullptr)
                  : parsed.is_discarded() ? nlohmann::ordered_json(*text)  // keep it, as text
                                          : std::move(parsed);
      continue;
    }
    o[c.name] = valueJson(v);
  }
  return o;
}

template <class R>
nlohmann::ordered_json arrayOf(const std::vector<Column<R>>& columns, const std::vector<R>& records) {
  nlohmann::ordered_json a = nlohmann::ordered_json::array();
  for (const R& r : records) a.push_back(objectOf(columns, r));
  return a;
}

// A dense matrix as rows of values; a sparse one (quick pairwise mode) as {"n", "cells": [[row,
// col, value], ...]} of its measured cells.
nlohmann::ordered_json matrixJson(const core::Matrix& m) {
  if (m.sparse) {
    nlohmann::ordered_json cells = nlohmann::ordered_json::array();
    m.forEachCell([&](int r, int c, float v) { cells.push_back({r, c, valueJson(static_cast<double>(v))}); });
    return {{"n", m.n}, {"cells", std::move(cells)}};
  }
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (int r = 0; r < m.n; ++r) {
    nlohmann::ordered_json row = nlohmann::ordered_json::array();
    for (int c = 0; c < m.n; ++c) row.push_back(valueJson(static_cast<double>(m.at(r, c))));
    rows.push_back(std::move(row));
  }
  return rows;
}

// /matrix/gpu: per node, its copy matrices by method, and the path of each pair.
nlohmann::ordered_json copiesJson(const core::Matrices& m) {
  nlohmann::ordered_json nodes = nlohmann::ordered_json::array();
  for (const core::CopyMatrices& c : m.copies) {
    nlohmann::ordered_json node;
    node["node"] = c.node;
    node["ranks"] = c.ranks;
    node["gpus"] = c.gpus;
    nlohmann::ordered_json paths = nlohmann::ordered_json::array();
    const auto n = static_cast<std::size_t>(c.n());
    for (std::size_t r = 0; r < n; ++r) {
      paths.push_back(std::vector<std::string>(c.path.begin() + static_cast<long>(r * n),
                                               c.path.begin() + static_cast<long>((r + 1) * n)));
    }
    node["path"] = std::move(paths);
    for (const auto& x : c.methods) {
      node["methods"][x.method] = {{"write_unidir", matrixJson(x.writeUnidir)},
                                   {"write_bidir", matrixJson(x.writeBidir)},
                                   {"read_unidir", matrixJson(x.readUnidir)},
                                   {"read_bidir", matrixJson(x.readBidir)}};
    }
    nodes.push_back(std::move(node));
  }
  return nodes;
}

nlohmann::ordered_json matricesJson(const core::Matrices& m) {
  nlohmann::ordered_json j;
  j["pairs_measured"] = m.pairsMeasured;
  j["copies_measured"] = !m.copies.empty();
  j["copy_bytes"] = m.copyBytes;
  j["copy_iterations"] = m.copyIters;
  j["gpu"] = copiesJson(m);
  j["mode"] = m.mode;
  j["message_bytes"] = m.bytes;
  j["window"] = m.window;
  j["iterations"] = m.iters;
  j["latency_iterations"] = m.latencyIters;
  j["latency_bytes"] = m.latencyBytes;
  j["rank"]["bw_unidir"] = matrixJson(m.rankUnidir);
  j["rank"]["bw_bidir"] = matrixJson(m.rankBidir);
  j["rank"]["latency"] = matrixJson(m.rankLatency);
  j["rank"]["copy_unidir"] = matrixJson(m.rankCopyUnidir);
  j["rank"]["copy_bidir"] = matrixJson(m.rankCopyBidir);
  // an empty worst matrix means one sample per pair: the worst is the best
  const auto orBest = [](const core::Matrix& worst, const core::Matrix& best) -> const core::Matrix& {
    return worst.n > 0 ? worst : best;
  };
  j["rank"]["bw_unidir_worst"] = matrixJson(orBest(m.rankUnidirWorst, m.rankUnidir));
  j["rank"]["latency_worst"] = matrixJson(orBest(m.rankLatencyWorst, m.rankLatency));
  nlohmann::ordered_json classes = nlohmann::ordered_json::array();
  if (m.rankUnidir.sparse) {
    m.rankUnidir.forEachCell([&](int r, int c, float) {
      if (!m.rankLinkClass.empty()) classes.push_back({r, c, core::name(m.rankLinkClass.at(r, c))});
    });
    classes = {{"n", m.rankUnidir.n}, {"cells", std::move(classes)}};
  }
  for (int r = 0; r < m.rankUnidir.n && !m.rankUnidir.sparse && !m.rankLinkClass.empty(); ++r) {
    nlohmann::ordered_json row = nlohmann::ordered_json::array();
    for (int c = 0; c < m.rankUnidir.n; ++c) row.push_back(core::name(m.rankLinkClass.at(r, c)));
    classes.push_back(std::move(row));
  }
  j["rank"]["link_class"] = std::move(classes);
  nlohmann::ordered_json medians = nlohmann::ordered_json::array();
  for (float v : m.rankPeerMedian) medians.push_back(valueJson(static_cast<double>(v)));
  j["rank"]["peer_median"] = std::move(medians);
  j["node"]["measured"] = m.nodeMeasured;
  const auto expected = [](const core::Expected& e, const std::string& from) {
    nlohmann::ordered_json o = {{"bw", valueJson(e.bandwidth)},
                                {"latency", valueJson(e.latency)},
                                {"bw_spread", valueJson(e.bandwidthSpread)},
                                {"latency_spread", valueJson(e.latencySpread)},
                                {"bw_gap_bar", valueJson(e.bandwidthGapBar)},
                                {"from", from.empty() ? "measured" : "spec: " + from}};
    return o;
  };
  for (std::size_t c = 1; c < core::kLinkClasses; ++c) {
    j["expected"][std::string(core::name(static_cast<core::LinkClass>(c)))] =
        expected(m.classExpected[c], m.classExpectedFrom[c]);
  }
  j["expected"]["node"] = expected(m.nodeExpected, "");
  j["node"]["bw"] = matrixJson(m.nodeBw);
  j["node"]["latency"] = matrixJson(m.nodeLatency);
  j["node"]["bw_worst"] = matrixJson(orBest(m.nodeBwWorst, m.nodeBw));
  j["node"]["latency_worst"] = matrixJson(orBest(m.nodeLatencyWorst, m.nodeLatency));
  return j;
}

}  // namespace

nlohmann::ordered_json findingsJson(const std::vector<core::Finding>& findings) {
  return arrayOf(findingColumns(), findings);
}

nlohmann::ordered_json gpuInventoryJson(const std::vector<core::GpuInventoryRecord>& gpus) {
  return arrayOf(gpuInventoryColumns(), gpus);
}

nlohmann::ordered_json toJson(const ResultsFile& file) {
  nlohmann::ordered_json j;
  j["file"] = file.path;
  j["schema_version"] = file.provenance.schemaVersion;
  j["complete"] = file.complete;
  j["recovered_from"] = file.recoveredFrom.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(file.recoveredFrom);
  j["provenance"] = objectOf(provenanceColumns(), file.provenance);
  j["imported"] = arrayOf(importColumns(), file.imported);
  j["acceptance"] = nullptr;
  if (const auto& a = file.acceptance) {
    nlohmann::ordered_json reasons = nlohmann::ordered_json::array();
    std::istringstream lines(a->reasons);
    for (std::string line; std::getline(lines, line);) reasons.push_back(line);
    j["acceptance"] = {{"pass", a->pass},
                       {"verdict", name(acceptanceOf(*a))},
                       {"profile", a->profile},
                       {"profile_source", a->profileSource},
                       {"checks", a->checks},
                       {"failed", a->failed},
                       {"missing", a->missing},
                       {"allow_missing", a->allowMissing},
                       {"reasons", reasons},
                       {"created_utc", a->createdUtc},
                       {"tool_version", a->toolVersion}};
  }
  j["topology"]["ranks"] = arrayOf(rankColumns(), file.topology.ranks);
  j["topology"]["nodes"] = arrayOf(nodeColumns(), file.topology.nodes);
  for (std::size_t i = 0; i < file.topology.nodes.size(); ++i) {
    const core::NodeRecord& node = file.topology.nodes[i];
    const auto g = static_cast<std::size_t>(node.gpuLinkCount());
    nlohmann::ordered_json rows = nlohmann::ordered_json::array();
    for (std::size_t r = 0; r < g; ++r) {
      rows.push_back(std::vector<std::string>(node.gpuLinks.begin() + static_cast<long>(r * g),
                                              node.gpuLinks.begin() + static_cast<long>((r + 1) * g)));
    }
    j["topology"]["nodes"][i]["gpu_links"] = std::move(rows);
  }
  // "inventory": {"nics": [...], "pcie": [...], "node": [...], "counters": [...]}, the tables' last names
  forEachInventoryTable([&](const char* path, const char*, const auto& columns, auto member) {
    const std::string_view table(path);
    j["inventory"][std::string(table.substr(table.rfind('/') + 1))] = arrayOf(columns, file.topology.inventory.*member);
  });
  // "fabric": {"devices": [...], "links": [...]} (--fabric; empty arrays without)
  forEachFabricTable([&](const char* path, const char*, const auto& columns, auto member) {
    const std::string_view table(path);
    j["fabric"][std::string(table.substr(table.rfind('/') + 1))] = arrayOf(columns, file.topology.fabric.*member);
  });
  j["scopes"] = arrayOf(scopeColumns(), file.scopes);
  j["steps"] = arrayOf(stepColumns(), file.steps);
  j["collectives"] = arrayOf(collectiveColumns(), file.collectives);
  j["copies"] = arrayOf(copyColumns(), file.copies);
  j["pairs"] = arrayOf(pairColumns(), file.pairs);
  j["patterns"]["layout"] = file.layout.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(file.layout);
  j["patterns"]["layout_places"] = arrayOf(layoutColumns(), file.layoutPlaces);
  j["patterns"]["training"] = arrayOf(trainingColumns(), file.training);
  j["patterns"]["scaling"] = arrayOf(scalingColumns(), file.scaling);
  j["storage"] = arrayOf(storageColumns(), file.storage);
  j["matrices"] = file.hasMatrices ? matricesJson(file.matrices) : nlohmann::ordered_json(nullptr);
  j["findings"] = arrayOf(findingColumns(), file.findings);
  return j;
}

}  // namespace fabricmap::results
