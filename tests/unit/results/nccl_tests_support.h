// Helpers of the nccl-tests import tests: the fixtures and their labels, line edits, and the
// figures of a parse.
#pragma once

#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "core/error.h"
#include "orchestrator/commands.h"
#include "orchestrator/verdicts/compare.h"
#include "results/console.h"
#include "results/h5_reader.h"
#include "results/json.h"
#include "results/nccl_tests_log.h"


namespace fabricmap::results {

namespace fs = std::filesystem;


inline const fs::path kData = fs::path(FABRICMAP_TEST_DATA) / "nccl-tests";

inline std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

inline std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : text) {
    if (c == sep) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

// labels.tsv: a header row, then one row per fixture (fields may be quoted with "" escapes).
inline std::vector<std::map<std::string, std::string>> labels() {
  std::vector<std::map<std::string, std::string>> out;
  std::vector<std::string> header;
  for (std::string line : split(slurp(kData / "labels.tsv"), '\n')) {
    if (line.empty()) continue;
    auto fields = split(line, '\t');
    if (header.empty()) {
      header = fields;
      continue;
    }
    std::map<std::string, std::string> row;
    for (std::size_t i = 0; i < fields.size() && i < header.size(); ++i) row[header[i]] = fields[i];
    out.push_back(row);
  }
  return out;
}

inline NcclTestsLog parseFixture(const std::string& file) { return parseNcclTestsLog(slurp(kData / file), file); }

// Applies `edit` to every line of `text` (lines without their '\n').
inline std::string eachLine(const std::string& text, const std::function<std::string(const std::string&)>& edit) {
  std::string out;
  auto lines = split(text, '\n');
  if (!lines.empty() && lines.back().empty()) lines.pop_back();
  for (const auto& l : lines) out += edit(l) + "\n";
  return out;
}

// The message of the UsageError `f` throws ("" when it throws none).
template <class F>
inline std::string usageError(F f) {
  try {
    f();
  } catch (const core::UsageError& e) {
    return e.what();
  }
  return "";
}

// What matters of a parse for comparing a hostile variant with the plain log.
inline std::string summary(const NcclTestsLog& log) {
  std::string s;
  for (const auto& t : log.tables) {
    s += t.op + " " + std::to_string(t.ranks.size()) + " " + t.avgBusBandwidthLine + " " + t.outOfBounds + "\n";
    for (const auto& r : t.ranks) s += r.hostname + "/" + std::to_string(r.device) + "/" + r.busId + "/" + r.gpuName + "\n";
    for (const auto& r : t.rows) {
      s += fmt::format("{} {} {} {} {} {} {} {} {} {} {} {}\n", r.bytes, r.count, r.dtype, r.redop, r.root,
                       r.outOfPlace.timeUs, r.outOfPlace.busbw, r.outOfPlace.checked, r.inPlace.timeUs,
                       r.inPlace.algbw, r.inPlace.busbw, r.inPlace.wrong);
    }
  }
  return s;
}

inline const std::string kGh200 = "gh200-2node-8gpu-allreduce-slingshot-cscs-alps.txt";
inline const std::string kA100 = "a100-sxm4-8gpu-allreduce-superbench-testdata.txt";

// ---- one fixture per output generation (tests/data/nccl-tests/generations/README.md); every
// expected figure below is read off the fixture by hand, every bound worked out from nccl-tests'
// rule (common.cu of 2.0-2.12: wrong when the largest error > DeltaMaxValue(type) x (nranks - 1))

inline const fs::path kGenerations = kData / "generations";

inline NcclTestsLog parseGeneration(const std::string& file) { return parseNcclTestsLog(slurp(kGenerations / file), file); }

// One placement's figures as the fixture prints them.
inline void expectFigures(const NcclTestsFigures& f, double timeUs, double algbw, double busbw) {
  EXPECT_TRUE(f.printed);
  EXPECT_DOUBLE_EQ(f.timeUs, timeUs);
  EXPECT_DOUBLE_EQ(f.algbw, algbw);
  EXPECT_DOUBLE_EQ(f.busbw, busbw);
}

// (checked, wrong) of every row's out-of-place or in-place result, in row order.
inline std::vector<std::pair<bool, std::uint64_t>> verdicts(const NcclTestsTable& t, bool inPlace) {
  std::vector<std::pair<bool, std::uint64_t>> out;
  for (const auto& r : t.rows) {
    const NcclTestsFigures& f = inPlace ? r.inPlace : r.outOfPlace;
    out.emplace_back(f.checked, f.wrong);
  }
  return out;
}

inline std::vector<std::pair<bool, std::uint64_t>> all(std::size_t n, bool checked, std::uint64_t wrong = 0) {
  return std::vector<std::pair<bool, std::uint64_t>>(n, {checked, wrong});
}

inline std::vector<core::CollectiveRecord> records(const NcclTestsImport& imported) {
  std::vector<core::CollectiveRecord> out;
  for (const auto& [step, rows] : imported.steps) out.insert(out.end(), rows.begin(), rows.end());
  return out;
}

// `compare`'s peaks of a single-table log: (busbw, bytes) out-of-place and in-place.
inline orchestrator::CollectivePeak peakOfLog(const NcclTestsLog& log) {
  return orchestrator::peakOf(records(importNcclTests({log})), "world", log.tables.at(0).op);
}

inline void expectPeak(const orchestrator::PlacementPeak& p, double busbw, std::uint64_t bytes) {
  EXPECT_DOUBLE_EQ(p.busbw, busbw);
  EXPECT_EQ(p.bytes, bytes);
}

// Removes everything from `marker` on (a log killed before its footer).
inline std::string cutAt(std::string text, const std::string& marker) {
  const std::size_t at = text.find(marker);
  EXPECT_NE(at, std::string::npos) << marker;
  return text.substr(0, at);
}

inline constexpr std::uint64_t kMiB = 1ull << 20;
inline constexpr std::uint64_t kGiB = 1ull << 30;

}  // namespace fabricmap::results
