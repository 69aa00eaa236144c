// JSON output built from the schema's column lists, so names match the HDF5 file exactly.
#include "results/json.h"

#include <cmath>

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

}  // namespace

nlohmann::ordered_json toJson(const ResultsFile& file) {
  nlohmann::ordered_json j;
  j["file"] = file.path;
  j["schema_version"] = file.provenance.schemaVersion;
  j["complete"] = file.complete;
  j["provenance"] = objectOf(provenanceColumns(), file.provenance);
  j["topology"]["ranks"] = arrayOf(rankColumns(), file.topology.ranks);
  j["topology"]["nodes"] = arrayOf(nodeColumns(), file.topology.nodes);
  j["scopes"] = arrayOf(scopeColumns(), file.scopes);
  j["steps"] = arrayOf(stepColumns(), file.steps);
  j["collectives"] = arrayOf(collectiveColumns(), file.collectives);
  return j;
}

}  // namespace fabricmap::results
