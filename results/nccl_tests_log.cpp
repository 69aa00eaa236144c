// nccl-tests log importer (see nccl_tests_log.h). Tables are read by their column header, so every
// generation is one code path: 2.0-2.12 (a header per test, "error" = the largest deviation),
// 2.13+ (size count type redop root ... #wrong, a count), 2.19's per-iteration and timestamp
// columns, rccl-tests' in-place-only table. A line inside a table that starts with a number is a
// row; everything else is chatter (NCCL INFO, other programs, blank) and skipped.
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
#include "core/text.h"
#include "core/units.h"

namespace fabricmap::results {
namespace {

// nccl-tests collectives that core::Op does not measure: imported under their nccl-tests name.
constexpr std::array<std::string_view, 4> kOtherOps = {"gather", "scatter", "hypercube", "alltoallv"};

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
  constexpr std::array<std::pair<std::string_view, std::string_view>, 11> kNames = {{
      {"reducescatter", "reduce_scatter"}, {"allreduce", "all_reduce"}, {"allgather", "all_gather"},
      {"alltoallv", "alltoallv"}, {"alltoall", "alltoall"}, {"sendrecv", "sendrecv"}, {"broadcast", "broadcast"},
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

enum class Field {
  kSize, kCount, kType, kRedop, kRoot, kTime, kAlgbw, kBusbw, kWrong, kError,
  kIterMin, kIterMax, kIterCv, kTimestamp, kOther
};

struct Column {
  Field field = Field::kOther;
  int placement = -1;  // 0 out-of-place, 1 in-place, -1 neither
};

struct Layout {
  std::vector<Column> columns;
  std::array<bool, 2> placements{};  // which placements the table prints
  std::size_t tokens = 0;            // a full row's tokens (a timestamp is two: date and time)
  int blankable = 0;                 // redop and root: printed blank by some versions and ops
  NcclTestsCheck check = NcclTestsCheck::kCount;  // kMaxError: an "error" column
};

Field fieldNamed(std::string_view name) {
  static const std::map<std::string_view, Field> kNames = {
      {"size", Field::kSize},       {"count", Field::kCount},   {"type", Field::kType},
      {"redop", Field::kRedop},     {"root", Field::kRoot},     {"time", Field::kTime},
      {"cputime", Field::kTime},    {"algbw", Field::kAlgbw},   {"busbw", Field::kBusbw},
      {"#wrong", Field::kWrong},    {"wrong", Field::kWrong},   {"error", Field::kError},
      {"i_min", Field::kIterMin},   {"i_max", Field::kIterMax}, {"i_cv%", Field::kIterCv},
      {"timestamp", Field::kTimestamp}};
  const auto it = kNames.find(name);
  return it == kNames.end() ? Field::kOther : it->second;
}

bool perPlacement(Field f) {
  return f != Field::kSize && f != Field::kCount && f != Field::kType && f != Field::kRedop && f != Field::kRoot &&
         f != Field::kTimestamp;
}

// The column header "size count type redop root time algbw busbw #wrong time ..." (after "#"),
// or nothing when the line is not one. Each "time" (or "cputime") starts a placement: out-of-place,
// then in-place; a table with one, under an "in-place" title (rccl-tests), is in-place only.
std::optional<Layout> columnLayout(std::string_view header, bool inPlaceOnly) {
  const auto t = tokens(header);
  if (t.size() < 3 || t[0] != "size" || t[1] != "count") return std::nullopt;
  Layout l;
  std::map<Field, int> seen;
  int times = 0;
  for (std::string_view name : t) {
    const Field f = fieldNamed(name);
    times += f == Field::kTime ? 1 : 0;
    ++seen[f];
    int placement = -1;
    if (perPlacement(f) && times >= 1 && times <= 2) placement = times - 1 + (inPlaceOnly ? 1 : 0);
    if (placement > 1) placement = -1;
    if (placement >= 0) l.placements[static_cast<std::size_t>(placement)] = true;
    l.columns.push_back({f, placement});
    l.tokens += f == Field::kTimestamp ? 2 : 1;
    l.blankable += f == Field::kRedop || f == Field::kRoot ? 1 : 0;
  }
  for (Field needed : {Field::kType, Field::kTime, Field::kAlgbw, Field::kBusbw}) {
    if (seen[needed] == 0) return std::nullopt;
  }
  if (seen[Field::kWrong] + seen[Field::kError] == 0) return std::nullopt;
  l.check = seen[Field::kError] > 0 ? NcclTestsCheck::kMaxError : NcclTestsCheck::kCount;
  return l;
}

bool isInteger(std::string_view s) {
  if (s.starts_with('-')) s.remove_prefix(1);
  return allDigits(s);
}

// Each column's text in a row ("" for a redop or root printed blank: all_gather, alltoall,
// broadcast... of 2.9 to 2.13.3 print an empty redop), or nothing when the row does not fit the
// header. Redop and root sit between the type and the figures, so the tokens printed there are
// told apart by their form: a root is an integer, a redop a name.
std::optional<std::vector<std::string_view>> alignRow(const Layout& l, const std::vector<std::string_view>& t) {
  if (t.size() > l.tokens || l.tokens - t.size() > static_cast<std::size_t>(l.blankable)) return std::nullopt;
  int present = l.blankable - static_cast<int>(l.tokens - t.size());
  int blankableLeft = l.blankable;
  std::vector<std::string_view> out;
  std::size_t k = 0;
  for (const Column& c : l.columns) {
    if (c.field == Field::kRedop || c.field == Field::kRoot) {
      const bool fits = k < t.size() && (c.field == Field::kRoot) == isInteger(t[k]);
      const bool take = present > 0 && (present == blankableLeft || fits);
      --blankableLeft;
      out.push_back(take ? t[k++] : std::string_view());
      present -= take ? 1 : 0;
      continue;
    }
    if (c.field == Field::kTimestamp) {  // "2026-07-10 14:03:21": date and time
      out.push_back(t[k]);
      k += 2;
      continue;
    }
    out.push_back(t[k++]);
  }
  return out;
}

// "-a 3", "-a3", "--average 3", "--average=3" in an echoed command; -1 when absent.
int averageOption(std::string_view command) {
  const auto t = tokens(command);
  for (std::size_t i = 0; i < t.size(); ++i) {
    std::string_view value;
    if ((t[i] == "-a" || t[i] == "--average") && i + 1 < t.size()) value = t[i + 1];
    else if (t[i].starts_with("--average=")) value = t[i].substr(10);
    else if (t[i].starts_with("-a") && t[i].size() > 2 && !t[i].starts_with("--")) value = t[i].substr(2);
    if (const auto n = number<int>(value); n && *n >= 0 && *n <= 3) return *n;
  }
  return -1;
}

// The verdict of "0 OK" / "3 FAILED": true when failed; nothing when absent or unreadable.
std::optional<bool> failedVerdict(std::string_view outOfBounds) {
  const auto t = tokens(outOfBounds);
  if (t.size() < 2 || !number<long long>(t[0])) return std::nullopt;
  if (t[1] == "OK") return false;
  if (t[1] == "FAILED") return true;
  return std::nullopt;
}

// Ops whose in-place results nccl-tests never judges (reportErrors = in_place ? 0 : 1): it prints
// a count or error there (2.0 to 2.13.0) or N/A (later), and leaves it out of its verdict.
bool inPlaceNeverJudged(std::string_view op) { return op == "alltoall" || op == "sendrecv" || op == "alltoallv"; }

// Half a unit of the one digit "%5.0le" keeps ("7e-05" is 6.5e-05..7.5e-05): how far above its
// printed value a max error may have been.
double halfPrintedDigit(double v) {
  if (!(v > 0) || !std::isfinite(v)) return 0;
  return 0.5 * std::pow(10.0, std::floor(std::log10(v)));
}

// Judges one placement as nccl-tests did (see judgeTable); counts in `notJudged` the results the
// rule calls wrong that the log's "0 OK" passed.
void judgeFigures(NcclTestsFigures& f, const NcclTestsTable& t, const NcclTestsRow& row, bool inPlace,
                  std::optional<bool> failed, int& notJudged) {
  f.checked = false;
  f.wrong = 0;
  if (!f.printed || !f.printedWrong || (inPlace && inPlaceNeverJudged(t.op))) return;
  const double v = *f.printedWrong;
  const bool counts = t.check == NcclTestsCheck::kCount;
  const double bound = counts ? 0 : ncclTestsErrorBound(row.dtype, static_cast<int>(t.ranks.size()));
  // NaN (results that were NaN) passes nccl-tests' "v > bound" but is no right result
  const bool byRule = f.flagged || v > bound || std::isnan(v);
  // a printed max error keeps one digit: under a FAILED verdict, one that may have been above counts
  const bool mayBe = byRule || (!counts && v + halfPrintedDigit(v) > bound);
  if (failed && !*failed && byRule) {
    ++notJudged;  // the log passed it: nccl-tests did not judge this result
    return;
  }
  f.checked = true;
  if (!(failed ? (*failed && mayBe) : byRule)) return;
  f.wrong = counts ? static_cast<std::uint64_t>(std::llround(std::min(v, 9.0e18))) : 1;
}

// Judges every result of a table the way its log does: by the log's "Out of bounds values" verdict
// when it has one (OK: nothing wrong; FAILED: the results nccl-tests' rule, within the printed
// precision, calls wrong), else by the rule itself. A "#wrong" column holding fractions is a
// max-error column whatever its header says.
void judgeTable(NcclTestsTable& t, const std::string& name, std::vector<std::string>& warnings) {
  bool whole = true;
  for (const auto& r : t.rows) {
    for (const auto* f : {&r.outOfPlace, &r.inPlace}) {
      if (f->printedWrong && *f->printedWrong != std::floor(*f->printedWrong)) whole = false;
    }
  }
  if (!whole) t.check = NcclTestsCheck::kMaxError;
  const std::optional<bool> failed = failedVerdict(t.outOfBounds);
  int notJudged = 0;
  t.wrongResults = 0;
  for (auto& r : t.rows) {
    judgeFigures(r.outOfPlace, t, r, false, failed, notJudged);
    judgeFigures(r.inPlace, t, r, true, failed, notJudged);
    t.wrongResults += (r.outOfPlace.wrong > 0 ? 1 : 0) + (r.inPlace.wrong > 0 ? 1 : 0);
  }
  if (notJudged > 0) {
    warnings.push_back(fmt::format("{}:{}: {} result{} beyond nccl-tests' bound where the log says 'Out of bounds "
                                   "values : {}': imported as unchecked", name, t.headerLine, notJudged,
                                   notJudged == 1 ? "" : "s", t.outOfBounds));
  }
  if (failed && *failed && t.wrongResults == 0) {
    warnings.push_back(fmt::format("{}:{}: the log says 'Out of bounds values : {}' but no row's #wrong/error "
                                   "shows which result failed: no row is marked wrong", name, t.headerLine,
                                   t.outOfBounds));
  }
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
    const auto t = tokens(s);
    // a row first: a row cut short and finished by someone else's output ("... 164.3nid01: NCCL
    // INFO ...") is a broken row, not chatter
    if (table_ && (allDigits(t.front()) || (t.front().starts_with('-') && allDigits(t.front().substr(1))))) {
      row(t);
      return;
    }
    if (isNcclChatter(s)) {
      ncclVersion(s);
      return;
    }
    if (s.starts_with('#')) {
      comment(trim(s.substr(1)), s);
      return;
    }
    if (!table_) {
      // a command line echoed before the table names the binary (and maybe -a)
      if (std::string op = opOfCommand(s); !op.empty()) {
        pendingOp_ = {op, "command"};
        pendingAverage_ = averageOption(s);
      }
    }
  }

  NcclTestsLog finish() {
    line_ = 0;
    closeTable();
    if (log_.tables.empty()) {
      if (emptyTableLine_ > 0) {
        throw core::UsageError(fmt::format("{}:{}: the table has no rows (the log ends before its first whole row)",
                                           log_.name, emptyTableLine_));
      }
      throw core::UsageError(fmt::format("{}: no nccl-tests result table (a '#  size  count  type ...' header "
                                         "followed by rows) in the log", log_.name));
    }
    for (auto& t : log_.tables) {
      if (t.op.empty()) nameOp(t);
      judgeTable(t, log_.name, log_.warnings);
    }
    return std::move(log_);
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw core::UsageError(fmt::format("{}:{}: {}", log_.name, line_, what));
  }
  [[noreturn]] void failAt(int line, const std::string& what) const {
    throw core::UsageError(fmt::format("{}:{}: {}", log_.name, line, what));
  }

  void nameOp(NcclTestsTable& t) const {
    if (std::string op = ncclTestsOp(opHint_); !op.empty()) {
      t.op = op;
      t.opSource = "--op";
    } else if (std::string fromName = opOfFileName(log_.name); !fromName.empty()) {
      t.op = fromName;
      t.opSource = "file name";
    } else {
      failAt(t.headerLine, "cannot tell which collective this table measured (no '# Collective test starting' "
                           "line, no *_perf command before it, no op in the file name): name it with --op");
    }
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
    if (auto layout = columnLayout(c, inPlaceTitle_)) {
      openTable(std::move(*layout));
      return;
    }
    if (c.find("in-place") != std::string_view::npos) {
      // the title above the column header: "out-of-place ... in-place", or "in-place" alone
      inPlaceTitle_ = c.find("out-of-place") == std::string_view::npos;
      return;
    }
    if (table_) footer(c, whole);
  }

  void footer(std::string_view c, std::string_view whole) {
    const bool verdict = c.starts_with("Out of bounds values");
    const bool average = c.starts_with("Avg bus bandwidth");
    if (!verdict && !average) return;
    // the test ran to its end: a row that could not be read was not cut short by a kill
    if (badRow_) failAt(badRow_->first, badRow_->second);
    const std::size_t colon = c.find(':');
    const std::string_view value = trim(colon == std::string_view::npos ? "" : c.substr(colon + 1));
    if (verdict) {
      table_->outOfBounds = std::string(value);
      return;
    }
    // "68.4048", or "68.4048 OK|FAILED" under NCCL_TESTS_MIN_BW
    const auto t = tokens(value);
    const auto bw = t.empty() ? std::nullopt : number<double>(t.front());
    if (!bw) fail("cannot read the 'Avg bus bandwidth' value");
    table_->avgBusBandwidth = *bw;
    table_->avgBusBandwidthLine = std::string(whole);
    closeTable();
  }

  void openTable(Layout layout) {
    closeTable();
    NcclTestsTable t;
    t.parameters = header_.parameters;
    t.iters = header_.iters;
    t.warmup = header_.warmup;
    t.ranks = header_.ranks;
    t.headerLine = line_;
    t.op = pendingOp_.first;
    t.opSource = pendingOp_.second;
    t.average = pendingAverage_;
    if (t.ranks.empty()) {
      fail("no '#  Rank N ... on HOST device D' lines before the table: cannot tell how many ranks measured it");
    }
    checkRankOrder(t.ranks);
    layout_ = std::move(layout);
    table_ = std::move(t);
    inPlaceTitle_ = false;
  }

  void checkRankOrder(const std::vector<NcclTestsRank>& ranks) {
    for (std::size_t r = 0; r < ranks.size(); ++r) {
      if (ranks[r].rank == static_cast<int>(r)) continue;
      line_ = ranks[r].line;
      const auto twice = std::find_if(ranks.begin(), ranks.begin() + static_cast<std::ptrdiff_t>(r),
                                      [&](const NcclTestsRank& x) { return x.rank == ranks[r].rank; });
      if (twice != ranks.begin() + static_cast<std::ptrdiff_t>(r)) {
        fail(fmt::format("rank {} is listed again (first at line {}): every process ran a test of its own, as "
                         "an nccl-tests built without MPI=1 does under mpirun or srun; import one such log per "
                         "process, or rebuild with MPI=1", ranks[r].rank, twice->line));
      }
      fail(fmt::format("rank {} where rank {} belongs: the rank lines must list ranks 0..{} once each",
                       ranks[r].rank, r, ranks.size() - 1));
    }
  }

  // "Rank  0 Group  0 Pid 204199 on  nid005471 device  0 [0009:01:00] NVIDIA GH200 120GB" (2.13.4
  // and later), "Rank  0 Pid 112424 on localhost device  0 [0x00] A100-SXM4-40GB" (2.0 to 2.13.3).
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

  // A table line that starts with a number. One that cannot be read is kept back: the next row or
  // the footer makes it an error, the end of the log (or of the test) makes it a row cut short.
  void row(const std::vector<std::string_view>& t) {
    if (badRow_) failAt(badRow_->first, badRow_->second);
    Problem why;
    if (auto r = readRow(t, why)) {
      table_->rows.push_back(std::move(*r));
    } else if (why.impossible) {
      fail(why.what);  // a whole row no measurement could print: not a row cut short
    } else {
      badRow_ = {line_, why.what};
    }
  }

  // What is wrong with a row: unreadable (perhaps cut short, judged by what follows) or impossible
  // (a negative, infinite or NaN figure, a size below zero, a reduction no collective has).
  struct Problem {
    std::string what;
    bool impossible = false;
  };

  std::optional<NcclTestsRow> readRow(const std::vector<std::string_view>& t, Problem& why) const {
    const auto values = alignRow(layout_, t);
    if (!values) {
      why.what = fmt::format("table row has {} columns where the header has {} (cut short or mixed with other output)",
                             t.size(), layout_.columns.size());
      return std::nullopt;
    }
    NcclTestsRow r;
    r.line = line_;
    r.redop = "none";
    r.outOfPlace.printed = layout_.placements[0];
    r.inPlace.printed = layout_.placements[1];
    for (std::size_t i = 0; i < values->size(); ++i) {
      const Column& c = layout_.columns[i];
      NcclTestsFigures& side = c.placement == 1 ? r.inPlace : r.outOfPlace;
      why = readValue(c, (*values)[i], r, side);
      if (!why.what.empty()) return std::nullopt;
    }
    return r;
  }

  // Sets the column's value in `r`; what is wrong with it, or "".
  static Problem readValue(const Column& c, std::string_view v, NcclTestsRow& r, NcclTestsFigures& side) {
    const auto real = [&](const char* what, double& to) -> Problem {
      const auto x = number<double>(v);
      if (!x) return {fmt::format("cannot read {} '{}'", what, v)};
      if (!std::isfinite(*x) || *x < 0) return {fmt::format("{} '{}' is not a figure a measurement gives", what, v), true};
      to = *x;
      return {};
    };
    switch (c.field) {
      case Field::kSize:
      case Field::kCount: {
        const char* what = c.field == Field::kSize ? "size" : "count";
        if (v.starts_with('-')) return {fmt::format("{} '{}' is negative", what, v), true};
        const auto x = number<std::uint64_t>(v);
        if (!x) return {fmt::format("cannot read {} '{}'", what, v)};
        (c.field == Field::kSize ? r.bytes : r.count) = *x;
        return {};
      }
      case Field::kType: r.dtype = std::string(v); return {};
      case Field::kRedop:
        if (!std::all_of(v.begin(), v.end(), [](char ch) { return (ch >= 'a' && ch <= 'z') || ch == '_'; })) {
          return {fmt::format("'{}' is not a reduction op", core::printable(v, 40)), true};
        }
        r.redop = v.empty() ? "none" : std::string(v);
        return {};
      case Field::kRoot: {
        const auto x = v.empty() ? std::optional<int>(-1) : number<int>(v);
        if (!x) return {fmt::format("cannot read root '{}'", v)};
        r.root = *x;
        return {};
      }
      case Field::kTime: return real("time", side.timeUs);
      case Field::kAlgbw: return real("algbw", side.algbw);
      case Field::kBusbw: return real("busbw", side.busbw);
      case Field::kIterMin: return real("i_min", side.iterMinUs);
      case Field::kIterMax: return real("i_max", side.iterMaxUs);
      case Field::kIterCv: return real("i_cv%", side.iterCvPercent);
      case Field::kWrong:
      case Field::kError: return {readWrong(c.field == Field::kWrong ? "#wrong" : "error", v, side)};
      case Field::kTimestamp:
      case Field::kOther: return {};
    }
    return {};
  }

  // "0", "1.04858e+06" (a count, %g), "1e-07" (a max error), "2e+00*" (old rccl-tests: beyond its
  // bound), "N/A" (not checked).
  static std::string readWrong(const char* what, std::string_view v, NcclTestsFigures& side) {
    if (v == "N/A") return "";
    side.flagged = v.ends_with('*');
    const auto x = number<double>(side.flagged ? v.substr(0, v.size() - 1) : v);
    if (!x || *x < 0) return fmt::format("cannot read {} '{}'", what, v);
    side.printedWrong = *x;
    return "";
  }

  void closeTable() {
    if (!table_) return;
    NcclTestsTable& t = *table_;
    t.truncated = t.avgBusBandwidthLine.empty();
    t.check = layout_.check;
    const std::string partial =
        badRow_ ? fmt::format(" (the row cut short at line {} is left out)", badRow_->first) : std::string();
    badRow_.reset();
    if (t.rows.empty()) {
      emptyTableLine_ = t.headerLine;
      log_.warnings.push_back(fmt::format("{}:{}: a table without a whole row is left out{}", log_.name,
                                          t.headerLine, partial));
    } else {
      if (t.truncated) {
        log_.warnings.push_back(fmt::format("{}:{}: the log ends inside this table (killed or cut short: no 'Avg bus "
                                            "bandwidth' line); its {} whole row{} are imported{}", log_.name,
                                            t.headerLine, t.rows.size(), t.rows.size() == 1 ? "" : "s", partial));
      }
      log_.tables.push_back(std::move(t));
    }
    table_.reset();
    pendingOp_ = {};
    pendingAverage_ = -1;
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
  int pendingAverage_ = -1;
  bool inPlaceTitle_ = false;
  Layout layout_;
  std::optional<NcclTestsTable> table_;
  std::optional<std::pair<int, std::string>> badRow_;  // a row that could not be read: line, why
  int emptyTableLine_ = 0;                             // the last table without a whole row
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

core::ImportRecord importRecord(const NcclTestsLog& log, const NcclTestsTable& table, int nodes) {
  core::ImportRecord imported;
  imported.file = log.name;
  imported.format = "nccl-tests";
  imported.op = table.op;
  imported.toolVersion = log.ncclTestsVersion;
  imported.ncclVersion = log.ncclVersion;
  imported.parameters = table.parameters;
  imported.ranks = static_cast<int>(table.ranks.size());
  imported.nodes = nodes;
  imported.rows = static_cast<int>(table.rows.size());
  imported.outOfBounds = table.outOfBounds;
  imported.avgBusBandwidth = table.avgBusBandwidth;
  imported.avgBusBandwidthLine = table.avgBusBandwidthLine;
  return imported;
}

// One placement of a table row as a step with its one "world" row, figures as printed.
std::pair<core::StepRecord, std::vector<core::CollectiveRecord>> stepOf(const NcclTestsTable& table,
                                                                          const NcclTestsRow& row, bool inPlace,
                                                                          int step, const std::string& members) {
  const NcclTestsFigures& f = inPlace ? row.inPlace : row.outOfPlace;
  core::StepRecord s;
  s.step = step;
  s.kind = core::StepKind::kCollective;
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
  c.ranks = members;
  c.nranks = static_cast<int>(table.ranks.size());
  c.op = table.op;
  c.dtype = row.dtype;
  c.redop = row.redop;
  c.root = row.root;
  c.inPlace = inPlace;
  c.bytes = row.bytes;
  c.count = row.count;
  c.iters = table.iters;
  c.warmup = table.warmup;
  // one time figure per row (nccl-tests' mean iteration time, over ranks as its -a says): the mean
  // and the median; -I 1 adds the per-iteration min, max and spread; the rest is NaN
  const double nan = std::numeric_limits<double>::quiet_NaN();
  c.timeUs = core::TimeStats{f.iterMinUs, f.timeUs, f.timeUs, f.iterMaxUs, nan, f.iterCvPercent / 100};
  c.algbw = f.algbw;
  c.busbw = f.busbw;
  c.algbwMedian = f.algbw;
  c.busbwMedian = f.busbw;
  c.checked = f.checked;
  c.wrong = f.wrong;
  return {std::move(s), {std::move(c)}};
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

double ncclTestsErrorBound(std::string_view dtype, int nranks) {
  double perRank = 1e-200;  // nccl-tests' value for the integer types and any type it does not list
  if (dtype == "half" || dtype == "bfloat16") perRank = 1e-2;
  else if (dtype == "float") perRank = 1e-5;
  else if (dtype == "double") perRank = 1e-12;
  return perRank * (nranks - 1);
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
      std::vector<int> all(table.ranks.size());
      for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int>(i);
      const std::string members = core::formatRanks(all);
      core::ImportRecord imported = importRecord(log, table, static_cast<int>(out.topology.nodes.size()));
      imported.firstStep = step;
      for (const auto& row : table.rows) {
        for (const bool inPlace : {false, true}) {
          if ((inPlace ? row.inPlace : row.outOfPlace).printed) {
            out.steps.push_back(stepOf(table, row, inPlace, step++, members));
          }
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
