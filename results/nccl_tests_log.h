// Reads the text nccl-tests prints (old and new table layouts, mpirun/srun line prefixes, NCCL
// chatter in between) and turns it into fabricmap's records for `fabricmap import nccl-tests`.
// Pure: text in, values out; unreadable input is a UsageError naming "FILE:LINE".
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/records.h"

namespace fabricmap::results {

// One "#  Rank N [Group G] Pid P on HOST device D [BUSID] NAME" header line.
struct NcclTestsRank {
  int rank = 0;
  std::string hostname;
  int device = -1;
  std::string busId;  // as printed between the brackets ("0009:01:00", "0x00")
  std::string gpuName;
  int line = 0;
};

// What a table's #wrong (or, before 2.13, "error") column holds.
enum class NcclTestsCheck {
  kCount,     // wrong elements (nccl-tests 2.13 and later)
  kMaxError,  // the largest deviation from the expected value (2.0 to 2.12: "1e-07", "0e+00")
};

// One placement (out-of-place or in-place) of a table row, figures as printed.
struct NcclTestsFigures {
  bool printed = false;  // the table has this placement's columns (rccl-tests can print in-place only)
  double timeUs = 0;     // "time", or "cputime" with -C 1
  double algbw = 0;
  double busbw = 0;
  // -I 1 (2.19.2 and later): i_min, i_max and i_cv% of the per-iteration times; NaN when not printed
  double iterMinUs = std::numeric_limits<double>::quiet_NaN();
  double iterMaxUs = std::numeric_limits<double>::quiet_NaN();
  double iterCvPercent = std::numeric_limits<double>::quiet_NaN();
  std::optional<double> printedWrong;  // the #wrong/error value; nothing for "N/A" (-c 0)
  bool flagged = false;                // old rccl-tests marked an error beyond its bound with '*'
  bool checked = false;     // nccl-tests judged it: not for N/A, nor for in-place alltoall/sendrecv
  std::uint64_t wrong = 0;  // wrong elements; 1 where a max-error log's value is judged wrong
};

struct NcclTestsRow {
  int line = 0;
  std::uint64_t bytes = 0;  // the "size" column
  std::uint64_t count = 0;
  std::string dtype;
  std::string redop;  // "none" when the table has no redop column or prints it blank
  int root = -1;      // -1 when the table has no root column or prints it blank
  NcclTestsFigures outOfPlace;
  NcclTestsFigures inPlace;
};

// One test of a log: its header, table and footer (a log may hold several, one per binary run).
struct NcclTestsTable {
  std::string op;          // fabricmap's name: all_reduce, all_gather, ..., gather, scatter, hypercube
  std::string opSource;    // how the op was found: "log", "command", "--op", "file name"
  std::string parameters;  // the "nThread 1 nGpus 8 minBytes ..." line as given
  int iters = 0;           // from the parameters line; 0 when absent
  int warmup = 0;
  std::vector<NcclTestsRank> ranks;  // by rank
  int headerLine = 0;                // the column header line
  std::vector<NcclTestsRow> rows;
  int average = -1;  // -a of the echoed command (0 rank 0, 1 mean over ranks, 2 min, 3 max); -1: not echoed
  NcclTestsCheck check = NcclTestsCheck::kCount;
  std::string outOfBounds;           // "0 OK" as given; empty when the log ends before it
  bool truncated = false;            // the log ends (or the next test starts) before the footer
  int wrongResults = 0;              // placements judged wrong
  std::string avgBusBandwidthLine;   // "# Avg bus bandwidth    : 68.4048" as given (trailing blanks cut)
  double avgBusBandwidth = std::numeric_limits<double>::quiet_NaN();  // its value, GB/s
};

struct NcclTestsLog {
  std::string name;              // the file as named on the command line
  std::string ncclTestsVersion;  // "2.17.1" from "# nccl-tests version ..."; empty when not printed
  std::string ncclVersion;       // from "NCCL INFO NCCL version ..."; empty when not printed
  std::vector<NcclTestsTable> tables;
  std::vector<std::string> warnings;  // "NAME:LINE: ..." for what was imported but looks cut short
};

// fabricmap's name of an nccl-tests collective ("all_reduce_perf", "allreduce" -> "all_reduce";
// gather, scatter, hypercube and alltoallv, which fabricmap does not run, keep theirs); empty when
// unknown.
std::string ncclTestsOp(std::string_view name);

// nccl-tests' bound on a max-error value (2.0 to 2.12, common.cu: a check fails when the largest
// deviation exceeds DeltaMaxValue(type) x (nranks - 1)): 1e-2 for half and bfloat16, 1e-5 for
// float, 1e-12 for double, 1e-200 (any deviation) for the integer types and any other name.
double ncclTestsErrorBound(std::string_view dtype, int nranks);

// Parses one log. `name` prefixes every message; `opHint` (a name parseOp or nccl-tests knows) is
// the op of tables whose log names none (no "# Collective test starting" line, no *_perf command);
// without it the file name is tried. Results are judged wrong as the log judges them: by its
// "Out of bounds values : N OK|FAILED" line where it has one, otherwise by nccl-tests' rule (a
// #wrong count above 0, a max error above ncclTestsErrorBound). A table the log ends inside
// (killed, cut short) keeps its whole rows and gets a warning. Throws UsageError("NAME:LINE: what
// is wrong") for a table row that cannot be read and is followed by more of the table, a rank line
// that cannot be read, a table without rank lines, and "NAME: ..." for a log without any table
// row or whose op cannot be told.
NcclTestsLog parseNcclTestsLog(std::string_view text, const std::string& name, const std::string& opHint = "");

// What a set of logs becomes in a results file: one step per (table row, placement), numbered in
// log order, each with one "world" row.
struct NcclTestsImport {
  core::Topology topology;
  core::ScopeRecord scope;
  std::vector<std::pair<core::StepRecord, std::vector<core::CollectiveRecord>>> steps;
  std::vector<core::ImportRecord> imported;  // one per table of each log
  std::string ncclVersion;                   // the logs' NCCL versions, ", "-separated
};

// Throws UsageError naming both files when two tables were measured on different ranks (count,
// host or device of a rank): one results file describes one set of ranks.
NcclTestsImport importNcclTests(const std::vector<NcclTestsLog>& logs);

}  // namespace fabricmap::results
