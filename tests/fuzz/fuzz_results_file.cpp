// Fuzz target (CI): hostile but well-formed results files, as `fabricmap show` reads them. The
// input is a program of edits applied to a real results file (tests/fuzz/templates) through the
// HDF5 API: objects deleted, tables and matrices replaced by others of any shape and type, rows
// with hostile values appended, attributes rewritten with other types and values. The file is then
// read, printed as text and as JSON: every outcome must be a result or a UsageError, never a crash,
// an out-of-bounds access or a hang. This steers by fabricmap's own reader, which byte flips
// (fuzz_results_bytes) rarely reach past libhdf5's parser.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "results/console.h"
#include "results/h5.h"
#include "results/h5_reader.h"
#include "results/json.h"
#include "results/report.h"
#include "results/schema.h"
#include "tests/fuzz/fuzz_input.h"

namespace {

using namespace fabricmap::results;
namespace fs = std::filesystem;

// Every object of a template, and the attributes a reader looks at.
struct Template {
  std::string path;
  std::vector<std::string> objects;
};

herr_t collect(hid_t, const char* name, const H5O_info_t*, void* data) {
  if (std::string(name) != ".") static_cast<std::vector<std::string>*>(data)->push_back("/" + std::string(name));
  return 0;
}

const std::vector<Template>& templates() {
  static const std::vector<Template> all = [] {
    std::vector<Template> out;
    for (const auto& entry : fs::directory_iterator(FABRICMAP_FUZZ_TEMPLATES)) {
      Template t{entry.path().string(), {}};
      h5::Handle f = h5::openFile(t.path, false);
      H5Ovisit2(f.get(), H5_INDEX_NAME, H5_ITER_NATIVE, collect, &t.objects, H5O_INFO_BASIC);
      out.push_back(std::move(t));
    }
    std::sort(out.begin(), out.end(), [](const Template& a, const Template& b) { return a.path < b.path; });
    return out;
  }();
  return all;
}

// Attribute names readers look up: provenance columns, `complete`, and the matrix attributes.
std::vector<std::string> attributeNames() {
  std::vector<std::string> names{kCompleteAttribute, "units", "message_bytes", "iterations", "window", "mode",
                                 "methods", "measured", "latency_iterations", "latency_bytes", "expected_bw",
                                 "expected_latency", "expected_bw_spread", "expected_NVLINK_bw", "hostname",
                                 "expected_NVLINK_bw_from", "n", "classes", "expected_bw_gap_bar"};
  for (const auto& c : provenanceColumns()) names.emplace_back(c.name);
  return names;
}

const std::string& pick(FuzzedDataProvider& in, const std::vector<std::string>& from) {
  return from.at(in.ConsumeIntegralInRange<std::size_t>(0, from.size() - 1));
}

std::string hostileText(FuzzedDataProvider& in) {
  switch (in.ConsumeIntegralInRange(0, 3)) {
    case 0: return in.ConsumeRandomLengthString(64);  // any bytes, invalid UTF-8 included
    case 1: return std::to_string(in.ConsumeIntegral<std::int64_t>());
    case 2: return std::string(in.ConsumeIntegralInRange<std::size_t>(0, 2000), ',');
    default: return "ce,sm,host,x";
  }
}

h5::Value hostileValue(FuzzedDataProvider& in, std::optional<h5::ColumnType> type = std::nullopt) {
  const int kind = type ? static_cast<int>(*type) : in.ConsumeIntegralInRange(0, 4);
  switch (kind) {
    case 0: {
      static const std::int64_t kEdges[] = {0, -1, 1, 2, 3, 7, 255, 1 << 20, INT32_MAX, INT32_MIN, INT64_MAX, INT64_MIN};
      return in.ConsumeBool() ? in.PickValueInArray(kEdges) : in.ConsumeIntegral<std::int64_t>();
    }
    case 1: return in.ConsumeIntegral<std::uint64_t>();
    case 2: {
      static const double kEdges[] = {0.0, -0.0, 1.0, -1.0, 1e300, -1e300, 1e-300, NAN, INFINITY, -INFINITY};
      return in.ConsumeBool() ? in.PickValueInArray(kEdges) : in.ConsumeFloatingPoint<double>();
    }
    case 3: return in.ConsumeBool();
    default: return hostileText(in);
  }
}

std::vector<h5::ColumnSpec> tableSpecs(const std::string& path) {
  if (path == kRanksTable) return specsOf(rankColumns());
  if (path == kNodesTable) return specsOf(nodeColumns());
  if (path == kScopesTable) return specsOf(scopeColumns());
  if (path == kStepsTable) return specsOf(stepColumns());
  if (path == kCollectivesTable) return specsOf(collectiveColumns());
  if (path == kPairsTable) return specsOf(pairColumns());
  if (path == kCopiesTable) return specsOf(copyColumns());
  if (path == kFindingsTable) return specsOf(findingColumns());
  if (path == kLayoutTable) return specsOf(layoutColumns());
  if (path == kTrainingTable) return specsOf(trainingColumns());
  if (path == kScalingTable) return specsOf(scalingColumns());
  if (path == kStorageTable) return specsOf(storageColumns());
  if (path.starts_with("/matrix/")) {  // a sparse matrix of quick mode: its cells
    return {{"row", h5::ColumnType::kInt}, {"col", h5::ColumnType::kInt}, {"value", h5::ColumnType::kFloat}};
  }
  return {};
}

void edit(hid_t f, const Template& t, FuzzedDataProvider& in) {
  const std::string& target = t.objects.empty() ? std::string("/steps") : pick(in, t.objects);
  switch (in.ConsumeIntegralInRange(0, 7)) {
    case 0:  // the object is missing
      H5Ldelete(f, target.c_str(), H5P_DEFAULT);
      break;
    case 1: {  // a matrix of another shape, any values
      const int rows = in.ConsumeIntegralInRange(0, 12);
      const int cols = in.ConsumeBool() ? rows : in.ConsumeIntegralInRange(0, 12);
      std::vector<float> values(static_cast<std::size_t>(rows * cols));
      for (auto& v : values) v = static_cast<float>(std::get<double>(hostileValue(in, h5::ColumnType::kFloat)));
      H5Ldelete(f, target.c_str(), H5P_DEFAULT);
      if (rows > 0 && cols > 0) h5::writeArray(f, target, values, rows, cols);
      break;
    }
    case 2: {  // text where numbers belong, or the other way round
      const int rows = in.ConsumeIntegralInRange(1, 6);
      const int cols = in.ConsumeIntegralInRange(1, 6);
      std::vector<std::string> values(static_cast<std::size_t>(rows * cols));
      for (auto& v : values) v = hostileText(in);
      H5Ldelete(f, target.c_str(), H5P_DEFAULT);
      h5::writeTextArray(f, target, values, rows, cols);
      break;
    }
    case 3: {  // a table with other columns, of other types
      std::vector<h5::ColumnSpec> specs = tableSpecs(target);
      if (specs.empty()) specs = specsOf(stepColumns());
      const std::size_t keep = in.ConsumeIntegralInRange<std::size_t>(1, specs.size());
      specs.resize(keep);
      for (auto& s : specs) {
        if (in.ConsumeBool()) s.type = static_cast<h5::ColumnType>(in.ConsumeIntegralInRange(0, 4));
      }
      std::vector<h5::Row> rows(in.ConsumeIntegralInRange<std::size_t>(0, 5));
      for (auto& row : rows) {
        for (const auto& s : specs) row.push_back(hostileValue(in, s.type));
      }
      H5Ldelete(f, target.c_str(), H5P_DEFAULT);
      h5::createTable(f, target, specs);
      h5::appendRows(f, target, specs, rows);
      break;
    }
    case 4: {  // rows of the right columns with hostile values (steps, ranks, nodes out of range)
      const std::vector<h5::ColumnSpec> specs = tableSpecs(target);
      if (specs.empty()) break;
      std::vector<h5::Row> rows(in.ConsumeIntegralInRange<std::size_t>(1, 4));
      for (auto& row : rows) {
        for (const auto& s : specs) row.push_back(hostileValue(in, s.type));
      }
      h5::appendRows(f, target, specs, rows);
      break;
    }
    case 5: {  // a root attribute of another type or value
      static const std::vector<std::string> names = attributeNames();
      const std::string& name = pick(in, names);
      H5Adelete(f, name.c_str());
      if (in.ConsumeBool()) h5::writeAttribute(f, name, hostileValue(in));
      break;
    }
    case 6: {  // a root attribute holding several values (h5py writes a list so): read as one, never past it
      static const std::vector<std::string> names = attributeNames();
      const std::string& name = pick(in, names);
      H5Adelete(f, name.c_str());
      const hsize_t n = in.ConsumeIntegralInRange<hsize_t>(0, 5);
      std::vector<std::int64_t> values(n);
      for (auto& v : values) v = in.ConsumeIntegral<std::int64_t>();
      const h5::Handle space(H5Screate_simple(1, &n, nullptr), H5Sclose);
      const h5::Handle attr(H5Acreate2(f, name.c_str(), H5T_STD_I64LE, space.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
      if (attr.valid() && n > 0) H5Awrite(attr.get(), H5T_NATIVE_INT64, values.data());
      break;
    }
    default: {  // an attribute of a group or dataset (matrix sizes, methods, expected figures)
      static const std::vector<std::string> names = attributeNames();
      const std::string& name = pick(in, names);
      H5Adelete_by_name(f, target.c_str(), name.c_str(), H5P_DEFAULT);
      h5::writeAttributeAt(f, target, name, hostileValue(in));
      break;
    }
  }
}

// What the reader promises of a file it accepts: every figure a measurement can give (NaN is
// "not measured"). A file that breaks it was accepted damaged: the fuzzer stops on it.
void checkFigures(const ResultsFile& file) {
  const auto figure = [](double v) { return std::isnan(v) || (std::isfinite(v) && v >= 0); };
  for (const auto& r : file.collectives) {
    if (!figure(r.busbw) || !figure(r.algbw) || !figure(r.timeUs.median)) __builtin_trap();
  }
  for (const auto& r : file.pairs) {
    if (!figure(r.bwAB) || !figure(r.latencyUs)) __builtin_trap();
  }
  file.matrices.rankUnidir.forEachCell([&](int, int, float v) {
    if (!figure(v)) __builtin_trap();
  });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string path = fabricmap::fuzz::scratch("run.h5");
  h5::silenceErrorStack();
  FuzzedDataProvider in(data, size);
  const Template& t = templates().at(in.ConsumeIntegralInRange<std::size_t>(0, templates().size() - 1));
  fs::copy_file(t.path, path, fs::copy_options::overwrite_existing);
  {
    h5::Handle f = h5::openFile(path, true);
    for (int edits = in.ConsumeIntegralInRange(1, 8); edits > 0 && in.remaining_bytes() > 0; --edits) {
      try {
        edit(f.get(), t, in);
      } catch (const fabricmap::core::Error&) {
        // an edit HDF5 refused (a name in use, a group where a dataset was): the file stays valid
      }
    }
  }
  try {
    const ResultsFile file = readResults(path);
    checkFigures(file);
    printResults(fabricmap::fuzz::sink(), file);
    (void)toJson(file).dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
    (void)renderReport(file);
  } catch (const fabricmap::core::UsageError&) {
  }
  return 0;
}
