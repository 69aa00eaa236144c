// Reads the text nccl-tests prints (old and new table layouts, mpirun/srun line prefixes, NCCL
// chatter in between) and turns it into fabricmap's records for `fabricmap import nccl-tests`.
// Pure: text in, values out; unreadable input is a UsageError naming "FILE:LINE".
#pragma once

#include <cstdint>
#include <limits>
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

// One placement (out-of-place or in-place) of a table row, figures as printed.
struct NcclTestsFigures {
  double timeUs = 0;
  double algbw = 0;
  double busbw = 0;
  bool checked = false;     // false: "N/A" (run with -c 0)
  std::uint64_t wrong = 0;  // #wrong; old logs print the largest error instead: 1 when not 0
};

struct NcclTestsRow {
  int line = 0;
  std::uint64_t bytes = 0;  // the "size" column
  std::uint64_t count = 0;
  std::string dtype;
  std::string redop;  // "none" when the table has no redop column
  int root = -1;      // -1 when the table has no root column
  NcclTestsFigures outOfPlace;
  bool hasInPlace = false;
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
  std::string outOfBounds;           // "0 OK" as given; empty when the log ends before it
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
// gather, scatter and hypercube, which fabricmap does not run, keep theirs); empty when unknown.
std::string ncclTestsOp(std::string_view name);

// Parses one log. `name` prefixes every message; `opHint` (a name parseOp or nccl-tests knows) is
// the op of tables whose log names none (no "# Collective test starting" line, no *_perf command);
// without it the file name is tried. Throws UsageError("NAME:LINE: what is wrong") for a table
// line that cannot be read, a rank line that cannot be read, a table without rank lines, and
// "NAME: ..." for a log without any table row or whose op cannot be told.
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
