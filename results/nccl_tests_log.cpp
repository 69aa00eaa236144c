// nccl-tests log importer (see nccl_tests_log.h). Tables are read by their column header, so the
// old layout (size count type redop time algbw busbw error ...) and the new one (... redop root
// ... #wrong ...) are the same code path; every line a table cannot use is either chatter (NCCL
// INFO, other programs, blank) and skipped, or a row that starts with a number and must parse.
#include "results/nccl_tests_log.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <map>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.h"
#include "core/ops.h"
#include "core/units.h"

namespace fabricmap::results {
namespace {

// nccl-tests collectives that core::Op does not measure: imported under their nccl-tests name.
constexpr std::array<std::string_view, 3> kOtherOps = {"gather", "scatter", "hypercube"};

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> tokens(std::string_view s) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    const std::size_t start = i;
    while (i < s.size() && !std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    if (i > start) out.push_back(s.substr(start, i - start));
  }
  return out;
}

bool allDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

template <class T>
std::optional<T> number(std::string_view s) {
  T v{};
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

// Removes what launchers put before a process's output: Open MPI's --tag-output "[1,0]<stdout>:",
// Intel MPI's -prepend-rank "[0] " and Slurm's --label "0: ".
std::string_view stripLauncherPrefix(std::string_view line) {
  if (line.starts_with('[')) {
    const std::size_t close = line.find(']');
    if (close != std::string_view::npos) {
      const std::string_view inside = line.substr(1, close - 1);
      const std::size_t comma = inside.find(',');
      std::string_view rest = line.substr(close + 1);
      if (comma != std::string_view::npos && allDigits(inside.substr(0, comma)) &&
          allDigits(inside.substr(comma + 1)) && rest.starts_with('<')) {
        const std::size_t tagEnd = rest.find(">:");
        if (tagEnd != std::string_view::npos) return rest.substr(tagEnd + 2);
      }
      if (allDigits(inside) && rest.starts_with(' ')) return rest.substr(1);
    }
  }
  std::size_t i = 0;
  while (i < line.size() && line[i] == ' ') ++i;
  std::size_t digits = i;
  while (digits < line.size() && std::isdigit(static_cast<unsigned char>(line[digits]))) ++digits;
  if (digits > i && line.substr(digits).starts_with(": ")) return line.substr(digits + 2);
  return line;
}

// NCCL's own lines: "host:pid:tid [dev] NCCL INFO ...", "... NCCL WARN ...".
bool isNcclChatter(std::string_view line) {
  return line.find(" NCCL INFO") != std::string_view::npos || line.find(" NCCL WARN") != std::string_view::npos ||
         line.find(" NCCL TRACE") != std::string_view::npos || line.starts_with("NCCL ");
}

// The op a line names as an nccl-tests binary ("./build/all_reduce_perf -b 8 ..."); empty when none.
std::string opOfCommand(std::string_view line) {
  std::size_t at = 0;
  while ((at = line.find("_perf", at)) != std::string_view::npos) {
    // binary names are short: looking back further would only make long lines slow
    std::size_t start = at;
    while (start > 0 && at - start < 32 &&
           (std::isalnum(static_cast<unsigned char>(line[start - 1])) || line[start - 1] == '_')) {
      --start;
    }
    const std::size_t end = at + 5;
    const bool wordEnd = end == line.size() || !(std::isalnum(static_cast<unsigned char>(line[end])) || line[end] == '_');
    if (wordEnd) {
      std::string name = ncclTestsOp(line.substr(start, end - start));
      if (!name.empty()) return name;
    }
    at = end;
  }
  return {};
}

// The op a file name names ("a100-allreduce.txt", "nccl_all_gather_perf.log"); empty when none.
std::string opOfFileName(const std::string& path) {
  const std::size_t slash = path.find_last_of('/');
  std::string squashed;
  for (char c : path.substr(slash == std::string::npos ? 0 : slash + 1)) {
    if (std::isalnum(static_cast<unsigned char>(c))) squashed += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  // the longer names first: "allreduce" holds "reduce", "reducescatter" holds "scatter"
  constexpr std::array<std::pair<std::string_view, std::string_view>, 10> kNames = {{
      {"reducescatter", "reduce_scatter"}, {"allreduce", "all_reduce"}, {"allgather", "all_gather"},
      {"alltoall", "alltoall"}, {"sendrecv", "sendrecv"}, {"broadcast", "broadcast"},
      {"hypercube", "hypercube"}, {"gather", "gather"}, {"scatter", "scatter"}, {"reduce", "reduce"}}};
  for (const auto& [key, name] : kNames) {
    if (squashed.find(key) != std::string::npos) return std::string(name);
  }
  return {};
}

// "nThread 1 nGpus 8 ... warmup iters: 5 iters: 20 agg iters: 1 ...": the number after "iters:"
// preceded by `before` ("warmup"), or by neither "warmup" nor "agg" when `before` is empty; 0 when
// absent.
int iterations(std::string_view params, std::string_view before) {
  const auto t = tokens(params);
  for (std::size_t i = 0; i + 1 < t.size(); ++i) {
    if (t[i] != "iters:") continue;
    const std::string_view prev = i > 0 ? t[i - 1] : std::string_view();
    if (before.empty() ? (prev != "warmup" && prev != "agg") : prev == before) return number<int>(t[i + 1]).value_or(0);
  }
  return 0;
}

enum class Field { kSize, kCount, kType, kRedop, kRoot, kTime, kAlgbw, kBusbw, kWrong, kError, kOther };

struct Layout {
  std::vector<Field> fields;
  std::vector<int> placement;  // 0 out-of-place, 1 in-place, -1 neither
  bool inPlace = false;        // the table has in-place columns
};

// The column header "size count type redop root time algbw busbw #wrong time ..." (after "#"),
// or nothing when the line is not one.
std::optional<Layout> columnLayout(std::string_view header) {
  const auto t = tokens(header);
  if (t.size() < 3 || t[0] != "size" || t[1] != "count") return std::nullopt;
  Layout l;
  std::map<Field, int> seen;
  for (std::string_view name : t) {
    Field f = Field::kOther;
    if (name == "size") f = Field::kSize;
    else if (name == "count") f = Field::kCount;
    else if (name == "type") f = Field::kType;
    else if (name == "redop") f = Field::kRedop;
    else if (name == "root") f = Field::kRoot;
    else if (name == "time") f = Field::kTime;
    else if (name == "algbw") f = Field::kAlgbw;
    else if (name == "busbw") f = Field::kBusbw;
    else if (name == "#wrong" || name == "wrong") f = Field::kWrong;
    else if (name == "error") f = Field::kError;
    const int n = seen[f]++;
    const bool perPlacement = f == Field::kTime || f == Field::kAlgbw || f == Field::kBusbw || f == Field::kWrong || f == Field::kError;
    l.fields.push_back(f);
    l.placement.push_back(perPlacement ? (n < 2 ? n : -1) : -1);
    if (perPlacement && n == 1) l.inPlace = true;
  }
  for (Field needed : {Field::kSize, Field::kCount, Field::kType, Field::kTime, Field::kAlgbw, Field::kBusbw}) {
    if (seen[needed] == 0) return std::nullopt;
  }
  if (seen[Field::kWrong] + seen[Field::kError] == 0) return std::nullopt;
  return l;
}

class Parser {
 public:
  Parser(const std::string& name, std::string opHint) : opHint_(std::move(opHint)) { log_.name = name; }

  void line(std::string_view raw, int number) {
    line_ = number;
    std::string_view s = raw;
    if (number == 1 && s.starts_with("\xEF\xBB\xBF")) s.remove_prefix(3);  // a UTF-8 byte order mark
    s = trim(stripLauncherPrefix(s));
    if (s.empty()) return;
    if (isNcclChatter(s)) {
      ncclVersion(s);
      return;
    }
    if (s.starts_with('#')) {
      comment(trim(s.substr(1)), s);
      return;
    }
    const auto t = tokens(s);
    if (table_ && allDigits(t.front())) {
      row(t);
      return;
    }
    if (!table_) {
      // a command line echoed before the table names the binary
      if (std::string op = opOfCommand(s); !op.empty()) pendingOp_ = {op, "command"};
    }
  }

  NcclTestsLog finish() {
    closeTable();
    if (log_.tables.empty()) {
      throw core::UsageError(fmt::format("{}: no nccl-tests result table (a '#  size  count  type ...' header "
                                         "followed by rows) in the log", log_.name));
    }
    for (auto& t : log_.tables) {
      if (!t.op.empty()) continue;
      if (std::string op = ncclTestsOp(opHint_); !op.empty()) {
        t.op = op;
        t.opSource = "--op";
      } else if (std::string fromName = opOfFileName(log_.name); !fromName.empty()) {
        t.op = fromName;
        t.opSource = "file name";
      } else {
        throw core::UsageError(fmt::format(
            "{}:{}: cannot tell which collective this table measured (no '# Collective test starting' line, no "
            "*_perf command before it, no op in the file name): name it with --op", log_.name, t.headerLine));
      }
    }
    return std::move(log_);
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw core::UsageError(fmt::format("{}:{}: {}", log_.name, line_, what));
  }

  void ncclVersion(std::string_view s) {
    const std::size_t at = s.find("NCCL version ");
    if (at == std::string_view::npos || !log_.ncclVersion.empty()) return;
    const auto t = tokens(s.substr(at + 13));
    if (!t.empty()) log_.ncclVersion = std::string(t.front());
  }

  void comment(std::string_view c, std::string_view whole) {
    if (c.starts_with("Collective test starting:")) {
      closeTable();
      header_ = {};
      std::string op = ncclTestsOp(trim(c.substr(25)));
      if (op.empty()) fail(fmt::format("unknown collective '{}'", trim(c.substr(25))));
      pendingOp_ = {op, "log"};
      return;
    }
    if (c.starts_with("nccl-tests version")) {
      const auto t = tokens(c.substr(18));
      if (!t.empty()) log_.ncclTestsVersion = std::string(t.front());
      return;
    }
    if (c.starts_with("nThread ")) {
      closeTable();
      header_.parameters = std::string(c);
      header_.iters = iterations(c, "");
      header_.warmup = iterations(c, "warmup");
      header_.ranks.clear();
      return;
    }
    if (c == "Using devices") {
      header_.ranks.clear();
      return;
    }
    if (c.starts_with("Rank ")) {
      rank(c);
      return;
    }
    if (auto layout = columnLayout(c)) {
      closeTable();
      NcclTestsTable t;
      t.parameters = header_.parameters;
      t.iters = header_.iters;
      t.warmup = header_.warmup;
      t.ranks = header_.ranks;
      t.headerLine = line_;
      t.op = pendingOp_.first;
      t.opSource = pendingOp_.second;
      if (t.ranks.empty()) {
        fail("no '#  Rank N ... on HOST device D' lines before the table: cannot tell how many ranks measured it");
      }
      for (std::size_t r = 0; r < t.ranks.size(); ++r) {
        if (t.ranks[r].rank != static_cast<int>(r)) {
          line_ = t.ranks[r].line;
          fail(fmt::format("rank {} where rank {} belongs: the rank lines must list ranks 0..{} once each",
                           t.ranks[r].rank, r, t.ranks.size() - 1));
        }
      }
      layout_ = *layout;
      table_ = std::move(t);
      return;
    }
    if (!table_) return;
    if (c.starts_with("Out of bounds values")) {
      const std::size_t colon = c.find(':');
      table_->outOfBounds = std::string(trim(colon == std::string_view::npos ? "" : c.substr(colon + 1)));
      return;
    }
    if (c.starts_with("Avg bus bandwidth")) {
      const std::size_t colon = c.find(':');
      const auto value = colon == std::string_view::npos ? std::nullopt : number<double>(trim(c.substr(colon + 1)));
      if (!value) fail("cannot read the 'Avg bus bandwidth' value");
      table_->avgBusBandwidth = *value;
      table_->avgBusBandwidthLine = std::string(whole);
      closeTable();
    }
  }

  // "Rank  0 Group  0 Pid 204199 on  nid005471 device  0 [0009:01:00] NVIDIA GH200 120GB" (newer)
  // or "Rank  0 Pid 112424 on localhost device  0 [0x00] A100-SXM4-40GB" (older).
  void rank(std::string_view c) {
    const auto t = tokens(c);
    NcclTestsRank r;
    r.line = line_;
    const auto after = [&](std::string_view key) -> std::optional<std::string_view> {
      for (std::size_t i = 0; i + 1 < t.size(); ++i) {
        if (t[i] == key) return t[i + 1];
      }
      return std::nullopt;
    };
    const auto rank = t.size() > 1 ? number<int>(t[1]) : std::nullopt;
    const auto host = after("on");
    const auto device = after("device");
    if (!rank || *rank < 0 || !host || !device || !number<int>(*device)) {
      fail("cannot read the rank line (expected '#  Rank N [Group G] Pid P on HOST device D [BUS ID] GPU')");
    }
    if (const auto group = after("Group"); group && *group != "0") {
      fail("ranks in several groups (NCCL_TESTS_SPLIT or -m): the table's figures are per group, which "
           "import does not describe");
    }
    r.rank = *rank;
    r.hostname = std::string(*host);
    r.device = *number<int>(*device);
    const std::size_t open = c.find('[', c.find(" device "));
    const std::size_t close = open == std::string_view::npos ? open : c.find(']', open);
    if (close != std::string_view::npos) {
      r.busId = std::string(c.substr(open + 1, close - open - 1));
      r.gpuName = std::string(trim(c.substr(close + 1)));
    }
    header_.ranks.push_back(std::move(r));
  }

  void row(const std::vector<std::string_view>& t) {
    if (t.size() != layout_.fields.size()) {
      fail(fmt::format("table row has {} columns where the header has {} (cut short or mixed with other output)",
                       t.size(), layout_.fields.size()));
    }
    NcclTestsRow r;
    r.line = line_;
    r.redop = "none";
    for (std::size_t i = 0; i < t.size(); ++i) {
      const std::string_view v = t[i];
      NcclTestsFigures& side = layout_.placement[i] == 1 ? r.inPlace : r.outOfPlace;
      const auto real = [&](const char* what) {
        const auto x = number<double>(v);
        if (!x) fail(fmt::format("cannot read {} '{}'", what, v));
        return *x;
      };
      switch (layout_.fields[i]) {
        case Field::kSize:
        case Field::kCount: {
          const auto x = number<std::uint64_t>(v);
          if (!x) fail(fmt::format("cannot read {} '{}'", layout_.fields[i] == Field::kSize ? "size" : "count", v));
          (layout_.fields[i] == Field::kSize ? r.bytes : r.count) = *x;
          break;
        }
        case Field::kType: r.dtype = std::string(v); break;
        case Field::kRedop: r.redop = std::string(v); break;
        case Field::kRoot: {
          const auto x = number<int>(v);
          if (!x) fail(fmt::format("cannot read root '{}'", v));
          r.root = *x;
          break;
        }
        case Field::kTime: side.timeUs = real("time"); break;
        case Field::kAlgbw: side.algbw = real("algbw"); break;
        case Field::kBusbw: side.busbw = real("busbw"); break;
        case Field::kWrong:
        case Field::kError:
          if (v == "N/A") {
            side.checked = false;
          } else if (layout_.fields[i] == Field::kWrong) {
            const auto x = number<std::uint64_t>(v);
            if (!x) fail(fmt::format("cannot read #wrong '{}'", v));
            side.checked = true;
            side.wrong = *x;
          } else {
            // old logs print the largest deviation, not a count: any is at least one wrong element
            side.checked = true;
            side.wrong = real("error") != 0 ? 1 : 0;
          }
          break;
        case Field::kOther: break;
      }
    }
    r.hasInPlace = layout_.inPlace;
    table_->rows.push_back(std::move(r));
  }

  void closeTable() {
    if (!table_) return;
    if (table_->rows.empty()) {
      line_ = table_->headerLine;
      fail("the table has no rows");
    }
    if (table_->avgBusBandwidthLine.empty()) {
      log_.warnings.push_back(fmt::format("{}:{}: the table has no 'Avg bus bandwidth' line (the log is cut short); "
                                          "its {} rows are imported", log_.name, table_->headerLine,
                                          table_->rows.size()));
    }
    log_.tables.push_back(std::move(*table_));
    table_.reset();
    pendingOp_ = {};
  }

  struct Header {
    std::string parameters;
    int iters = 0;
    int warmup = 0;
    std::vector<NcclTestsRank> ranks;
  };

  NcclTestsLog log_;
  std::string opHint_;
  int line_ = 0;
  Header header_;
  std::pair<std::string, std::string> pendingOp_;  // op and where it came from
  Layout layout_;
  std::optional<NcclTestsTable> table_;
};

bool sameRanks(const std::vector<NcclTestsRank>& a, const std::vector<NcclTestsRank>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const NcclTestsRank& x, const NcclTestsRank& y) {
    return x.hostname == y.hostname && x.device == y.device && x.busId == y.busId;
  });
}

std::string describeRanks(const std::vector<NcclTestsRank>& ranks) {
  std::vector<std::string> hosts;
  for (const auto& r : ranks) {
    if (std::find(hosts.begin(), hosts.end(), r.hostname) == hosts.end()) hosts.push_back(r.hostname);
  }
  return fmt::format("{} rank{} on {}", ranks.size(), ranks.size() == 1 ? "" : "s", fmt::join(hosts, ","));
}

core::Topology topologyOf(const std::vector<NcclTestsRank>& ranks) {
  core::Topology topo;
  std::map<std::string, int> nodeOf;
  for (const auto& r : ranks) {
    auto [it, added] = nodeOf.emplace(r.hostname, static_cast<int>(topo.nodes.size()));
    if (added) {
      core::NodeRecord n;
      n.node = it->second;
      n.name = r.hostname;
      n.hostname = r.hostname;
      n.topologyClass = "UNCLASSIFIED";
      n.nvswitch = "unknown";
      n.topologyWarnings = "imported from an nccl-tests log: no link information";
      topo.nodes.push_back(std::move(n));
    }
    core::NodeRecord& node = topo.nodes[static_cast<std::size_t>(it->second)];
    core::RankRecord rr;
    rr.rank = r.rank;
    rr.node = node.node;
    rr.localRank = node.ranks++;
    rr.hostname = r.hostname;
    rr.gpuIndex = r.device;
    rr.gpuName = r.gpuName;
    rr.gpuBusId = r.busId;
    topo.ranks.push_back(std::move(rr));
  }
  for (auto& node : topo.nodes) {
    std::vector<int> devices;
    for (const auto& r : topo.ranks) {
      if (r.node == node.node && std::find(devices.begin(), devices.end(), r.gpuIndex) == devices.end()) {
        devices.push_back(r.gpuIndex);
      }
    }
    node.gpus = static_cast<int>(devices.size());
  }
  return topo;
}

}  // namespace

std::string ncclTestsOp(std::string_view name) {
  if (name.ends_with("_perf")) name.remove_suffix(5);
  if (auto op = core::parseOp(name)) return std::string(core::traits(*op).name);
  for (std::string_view other : kOtherOps) {
    if (name == other) return std::string(other);
  }
  return {};
}

NcclTestsLog parseNcclTestsLog(std::string_view text, const std::string& name, const std::string& opHint) {
  Parser parser(name, opHint);
  int number = 0;
  std::size_t from = 0;
  while (from < text.size()) {
    const std::size_t end = std::min(text.find('\n', from), text.size());
    parser.line(text.substr(from, end - from), ++number);
    from = end + 1;
  }
  return parser.finish();
}

NcclTestsImport importNcclTests(const std::vector<NcclTestsLog>& logs) {
  NcclTestsImport out;
  const NcclTestsTable* first = nullptr;
  const NcclTestsLog* firstLog = nullptr;
  std::vector<std::string> versions;
  int step = 0;
  for (const auto& log : logs) {
    if (!log.ncclVersion.empty() && std::find(versions.begin(), versions.end(), log.ncclVersion) == versions.end()) {
      versions.push_back(log.ncclVersion);
    }
    for (const auto& table : log.tables) {
      if (first == nullptr) {
        first = &table;
        firstLog = &log;
        out.topology = topologyOf(table.ranks);
      } else if (!sameRanks(first->ranks, table.ranks)) {
        throw core::UsageError(fmt::format(
            "{}:{} and {}:{} were measured on different ranks ({} against {}): import them into separate files",
            firstLog->name, first->headerLine, log.name, table.headerLine, describeRanks(first->ranks),
            describeRanks(table.ranks)));
      }
      const int nranks = static_cast<int>(table.ranks.size());
      std::vector<int> all(table.ranks.size());
      for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int>(i);
      const std::string members = core::formatRanks(all);
      core::ImportRecord imported;
      imported.file = log.name;
      imported.format = "nccl-tests";
      imported.op = table.op;
      imported.toolVersion = log.ncclTestsVersion;
      imported.ncclVersion = log.ncclVersion;
      imported.parameters = table.parameters;
      imported.ranks = nranks;
      imported.nodes = static_cast<int>(out.topology.nodes.size());
      imported.rows = static_cast<int>(table.rows.size());
      imported.firstStep = step;
      imported.outOfBounds = table.outOfBounds;
      imported.avgBusBandwidth = table.avgBusBandwidth;
      imported.avgBusBandwidthLine = table.avgBusBandwidthLine;
      for (const auto& row : table.rows) {
        for (const bool inPlace : {false, true}) {
          if (inPlace && !row.hasInPlace) continue;
          const NcclTestsFigures& f = inPlace ? row.inPlace : row.outOfPlace;
          core::StepRecord s;
          s.step = step;
          s.kind = "collective";
          s.scope = "world";
          s.op = table.op;
          s.dtype = row.dtype;
          s.redop = row.redop;
          s.bytes = row.bytes;
          s.inPlace = inPlace;
          s.groups = 1;
          s.status = !f.checked ? "unchecked" : f.wrong > 0 ? "wrong" : "ok";
          s.seconds = std::numeric_limits<double>::quiet_NaN();  // the log does not say
          core::CollectiveRecord c;
          c.step = step;
          c.scope = "world";
          c.group = 0;
          c.ranks = members;
          c.nranks = nranks;
          c.op = table.op;
          c.dtype = row.dtype;
          c.redop = row.redop;
          c.root = row.root;
          c.inPlace = inPlace;
          c.bytes = row.bytes;
          c.count = row.count;
          c.iters = table.iters;
          c.warmup = table.warmup;
          // one time figure per row (nccl-tests prints the mean of the slowest rank's iterations):
          // it is the mean and the median; what the log does not give is NaN
          const double nan = std::numeric_limits<double>::quiet_NaN();
          c.timeUs = core::TimeStats{nan, f.timeUs, f.timeUs, nan, nan, nan};
          c.algbw = f.algbw;
          c.busbw = f.busbw;
          c.algbwMedian = f.algbw;
          c.busbwMedian = f.busbw;
          c.checked = f.checked;
          c.wrong = f.wrong;
          out.steps.emplace_back(std::move(s), std::vector<core::CollectiveRecord>{std::move(c)});
          ++step;
        }
      }
      imported.lastStep = step - 1;
      out.imported.push_back(std::move(imported));
      out.scope = core::ScopeRecord{"world", 1, members, "active", ""};
    }
  }
  if (first == nullptr) throw core::UsageError("no nccl-tests tables to import");
  out.ncclVersion = fmt::format("{}", fmt::join(versions, ", "));
  return out;
}

}  // namespace fabricmap::results
