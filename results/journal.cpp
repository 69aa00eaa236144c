// The results journal (see journal.h). Each line is {"t": type, ...columns}; types: provenance,
// rank, node (with gpu_links), scope, row (a /collectives row), copy, pair, step, planned, finding.
#include "results/journal.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <span>
#include <tuple>
#include <type_traits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "results/schema.h"

namespace fabricmap::results {
namespace {

using json = nlohmann::json;

json valueJson(const h5::Value& v) {
  return std::visit(
      [](const auto& x) -> json {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, double>) {
          if (!std::isfinite(x)) return nullptr;  // JSON has no NaN: null reads back as NaN
        }
        return x;
      },
      v);
}

// A journal number as the integer column wants it; a fraction or a value out of the column's range
// is not something fabricmap wrote.
template <class I>
I integerOf(const json& j) {
  if (j.is_number_integer() && (std::is_signed_v<I> || j.is_number_unsigned() || j.get<std::int64_t>() >= 0)) {
    return j.get<I>();
  }
  throw core::UsageError("a journal line holds " + j.dump(-1, ' ', false, json::error_handler_t::replace) +
                         " where an integer belongs");
}

h5::Value fromJson(const json& j, h5::ColumnType type) {
  switch (type) {
    case h5::ColumnType::kInt: return j.is_null() ? std::int64_t{0} : integerOf<std::int64_t>(j);
    case h5::ColumnType::kUInt: return j.is_null() ? std::uint64_t{0} : integerOf<std::uint64_t>(j);
    case h5::ColumnType::kFloat: return j.is_number() ? j.get<double>() : std::nan("");
    case h5::ColumnType::kBool: return j.is_boolean() && j.get<bool>();
    case h5::ColumnType::kText: return j.is_string() ? j.get<std::string>() : std::string();
  }
  return std::int64_t{0};
}

template <class R>
std::string line(const char* type, const std::vector<Column<R>>& columns, const R& record,
                 const json& extra = json::object()) {
  json j = extra;
  j["t"] = type;
  for (const auto& c : columns) j[c.name] = valueJson(c.get(record));
  // text from the command line or the driver is not always UTF-8: replaced, never fatal
  return j.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
}

template <class R>
R recordOf(const std::vector<Column<R>>& columns, const json& j) {
  h5::Row row;
  for (const auto& c : columns) {
    // a journal of an older schema has the column under its former name
    const char* name = !j.contains(c.name) && c.formerName != nullptr && j.contains(c.formerName) ? c.formerName : c.name;
    row.push_back(fromJson(j.contains(name) ? j[name] : json(), c.type));
  }
  return fromRow(columns, row);
}

// A journal's row lines waiting for their step line, one vector per step kind.
class PendingRows {
 public:
  // Keeps the row when `type` is a step kind's journal line type; false otherwise.
  bool add(const std::string& type, const json& j) {
    bool kept = false;
    core::forEachRowType([&]<class R>(std::type_identity<R>) {
      const RowTable<R> table = rowTable<R>();
      if (kept || type != table.journalType) return;
      std::get<std::vector<R>>(rows_).push_back(recordOf(table.columns, j));
      kept = true;
    });
    return kept;
  }
  // The step line came: its rows join the run.
  void moveInto(ResultsFile& out) {
    core::forEachRowType([&]<class R>(std::type_identity<R>) {
      std::vector<R>& rows = std::get<std::vector<R>>(rows_);
      std::vector<R>& to = rowsIn<R>(out);
      to.insert(to.end(), rows.begin(), rows.end());
      rows.clear();
    });
  }

 private:
  template <class V>
  struct VectorsOf;
  template <class... S>
  struct VectorsOf<std::variant<S...>> {
    using type = std::tuple<std::vector<typename S::value_type>...>;
  };
  VectorsOf<core::StepRows>::type rows_;
};

// An inventory line (a row of an /inventory table) joins `rows`; false for any other line type.
bool inventoryLine(const std::string& type, const json& j, core::InventoryRows& rows) {
  bool kept = false;
  forEachInventoryTable([&](const char*, const char* lineType, const auto& columns, auto member) {
    if (kept || type != lineType) return;
    (rows.*member).push_back(recordOf(columns, j));
    kept = true;
  });
  return kept;
}

// A fabric line (a row of a /fabric table) joins `graph`; false for any other line type.
bool fabricLine(const std::string& type, const json& j, core::FabricGraph& graph) {
  bool kept = false;
  forEachFabricTable([&](const char*, const char* lineType, const auto& columns, auto member) {
    if (kept || type != lineType) return;
    (graph.*member).push_back(recordOf(columns, j));
    kept = true;
  });
  return kept;
}

}  // namespace

std::string journalPath(const std::string& resultsPath) { return resultsPath + ".journal"; }

JournalSink::JournalSink(const std::string& resultsPath, Publish when)
    : path_(journalPath(resultsPath)), when_(when) {}

JournalSink::~JournalSink() {
  if (fd_ >= 0) ::close(fd_);
}

void JournalSink::append(const std::string& lines) {
  // one write per record batch: a kill loses it whole or not at all, up to the last line, which
  // the reader drops when it has no newline
  std::size_t done = 0;
  while (fd_ >= 0 && done < lines.size()) {
    const ssize_t n = ::write(fd_, lines.data() + done, lines.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw FM_FAULT("cannot write the results journal '" + path_ + "': " + std::strerror(errno));
    done += static_cast<std::size_t>(n);
  }
}

void JournalSink::begin(const core::Provenance& provenance, const core::Topology& topology,
                        const std::vector<core::ScopeRecord>& scopes) {
  // created now, after the results file has its name (sinks begin in order): a journal never
  // stands beside a results file that does not exist yet
  published_ = when_ == Publish::kAtBegin;
  const std::string path = published_ ? path_ : unpublishedPath(path_);
  // replaced, not opened: a FIFO at the journal's name would block this open until a reader came
  ::unlink(path.c_str());
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0) throw FM_FAULT("cannot create the results journal '" + path + "': " + std::strerror(errno));
  core::Provenance stamped = provenance;  // as the HDF5 file: this schema
  stamped.schemaVersion = kSchemaVersion;
  std::string out = line("provenance", provenanceColumns(), stamped);
  for (const auto& r : topology.ranks) out += line("rank", rankColumns(), r);
  for (const auto& n : topology.nodes) out += line("node", nodeColumns(), n, json{{"gpu_links", n.gpuLinks}});
  forEachInventoryTable([&](const char*, const char* type, const auto& columns, auto member) {
    for (const auto& r : topology.inventory.*member) out += line(type, columns, r);
  });
  forEachFabricTable([&](const char*, const char* type, const auto& columns, auto member) {
    for (const auto& r : topology.fabric.*member) out += line(type, columns, r);
  });
  for (const auto& s : scopes) out += line("scope", scopeColumns(), s);
  append(out);
}

// A step's rows, then its step line: one write, kept by a reader only when the last line is whole.
void JournalSink::step(const core::StepRecord& step, const core::StepRows& rows) {
  std::string out;
  std::visit(
      [&]<class R>(std::span<const R> records) {
        const RowTable<R> table = rowTable<R>();
        for (const R& r : records) out += line(table.journalType, table.columns, r);
      },
      rows);
  append(out + line("step", stepColumns(), step));
}

void JournalSink::layout(const std::string& layout, const std::vector<core::LayoutPlace>& places) {
  std::string out = json{{"t", "layout"}, {"layout", layout}}.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
  for (const auto& p : places) out += line("place", layoutColumns(), p);
  append(out);
}

void JournalSink::planExtended(int plannedSteps) { append(json{{"t", "planned"}, {"steps", plannedSteps}}.dump() + "\n"); }

void JournalSink::finding(const core::Finding& finding) { append(line("finding", findingColumns(), finding)); }

void JournalSink::analysis(const core::Matrices&, const std::vector<core::Finding>& findings) {
  std::string out;
  for (const auto& f : findings) out += line("finding", findingColumns(), f);
  append(out);
}

void JournalSink::inventoryEnd(const core::InventoryRows& end) {
  std::string out;
  forEachInventoryTable([&](const char*, const char* type, const auto& columns, auto member) {
    for (const auto& r : end.*member) out += line(type, columns, r);
  });
  append(out);
}

void JournalSink::publish() {
  if (published_ || fd_ < 0) return;
  // synced first: the journal replaces what readers saw (the file being finished)
  if (::fsync(fd_) != 0 || ::rename(unpublishedPath(path_).c_str(), path_.c_str()) != 0) {
    throw FM_FAULT("cannot publish the results journal '" + path_ + "': " + std::strerror(errno));
  }
  published_ = true;
}

void JournalSink::finish(bool complete) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (complete) ::unlink((published_ ? path_ : unpublishedPath(path_)).c_str());
}

namespace {

// The longest line fabricmap writes is a provenance or node line of a large run: tens of KiB.
constexpr std::size_t kMaxJournalLine = std::size_t{16} << 20;

// The next line of `in` without its newline: kWhole, kCut for a last line without a newline (a
// write cut short by a kill), kEnd at the end. A line longer than any fabricmap writes is damage
// (a sparse or foreign file), refused before it is read into memory.
enum class LineEnd { kWhole, kCut, kEnd };
LineEnd nextLine(std::streambuf& in, std::string& line, int number, const std::string& journal) {
  line.clear();
  for (;;) {
    const auto c = in.sbumpc();
    if (c == std::char_traits<char>::eof()) return line.empty() ? LineEnd::kEnd : LineEnd::kCut;
    if (c == '\n') return LineEnd::kWhole;
    if (line.size() == kMaxJournalLine) {
      throw core::UsageError(fmt::format("'{}' is not a fabricmap results journal: line {} is longer than {} bytes",
                                         journal, number, kMaxJournalLine));
    }
    line.push_back(std::char_traits<char>::to_char_type(c));
  }
}

}  // namespace

std::optional<ResultsFile> readJournal(const std::string& journal, const std::string& resultsPath) {
  std::ifstream in(journal, std::ios::binary);
  if (!in) return std::nullopt;
  ResultsFile out;
  out.path = resultsPath;
  out.recoveredFrom = journal;
  // rows wait for their step line: a step is kept only when its step line is whole
  PendingRows pending;
  bool started = false;
  std::string text;
  for (int number = 1; nextLine(*in.rdbuf(), text, number, journal) == LineEnd::kWhole; ++number) {
    const json j = json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("t") || !j["t"].is_string()) {
      throw core::UsageError("'" + journal + "' is not a fabricmap results journal (or is damaged before its end)");
    }
    try {
      const std::string t = j["t"].get<std::string>();
      if (t == "provenance") {
        out.provenance = recordOf(provenanceColumns(), j);
        started = true;
      } else if (t == "rank") {
        out.topology.ranks.push_back(recordOf(rankColumns(), j));
      } else if (t == "node") {
        core::NodeRecord n = recordOf(nodeColumns(), j);
        if (j.contains("gpu_links")) n.gpuLinks = j["gpu_links"].get<std::vector<std::string>>();
        out.topology.nodes.push_back(std::move(n));
      } else if (t == "scope") {
        out.scopes.push_back(recordOf(scopeColumns(), j));
      } else if (inventoryLine(t, j, out.topology.inventory) || fabricLine(t, j, out.topology.fabric)) {
        continue;
      } else if (pending.add(t, j)) {
        continue;  // a step kind's row: kept until its step line
      } else if (t == "layout") {
        out.layout = j.value("layout", std::string());
      } else if (t == "place") {
        out.layoutPlaces.push_back(recordOf(layoutColumns(), j));
      } else if (t == "step") {
        out.steps.push_back(recordOf(stepColumns(), j));
        pending.moveInto(out);
      } else if (t == "planned") {
        if (j.contains("steps")) out.provenance.plannedSteps = static_cast<int>(integerOf<std::int64_t>(j["steps"]));
      } else if (t == "finding") {
        out.findings.push_back(recordOf(findingColumns(), j));
      }
    } catch (const json::exception& e) {
      throw core::UsageError(fmt::format("'{}' is damaged at line {}: {}", journal, number, e.what()));
    } catch (const core::UsageError& e) {
      throw core::UsageError(fmt::format("'{}' is damaged at line {}: {}", journal, number, e.what()));
    }
  }
  if (!started) return std::nullopt;  // cut off before its first record: the HDF5 file says as much
  out.topology.emulated = out.provenance.emulated;
  out.topology.ranksPerNode = out.provenance.ranksPerNode;
  out.complete = false;  // a complete run removes its journal
  return out;
}

}  // namespace fabricmap::results
