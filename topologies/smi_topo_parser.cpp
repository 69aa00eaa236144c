// `nvidia-smi topo -m` text parser (see smi_topo_parser.h). The format has no grammar: columns are
// aligned with tabs or spaces, multi-word headers ("CPU Affinity") hold single-token values, and
// real outputs get truncated and decorated when pasted, so the parser works on whitespace tokens
// and checks every matrix cell instead of trusting column positions.
#include "topologies/smi_topo_parser.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <map>
#include <sstream>

#include "core/error.h"
#include "core/files.h"
#include "core/text.h"

namespace fabricmap::topologies {
namespace {

// Inputs larger than this are not a topology printout; refusing them keeps a wrong --file from
// reading a disk image into memory.
constexpr std::size_t kMaxInputBytes = 16u << 20;

enum class ColumnKind { kGpu, kNic, kCpuAffinity, kNumaAffinity, kGpuNumaId, kOther };

struct Column {
  ColumnKind kind;
  std::string label;
};

std::vector<std::string> tokens(std::string_view line) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    const std::size_t start = i;
    while (i < line.size() && !std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    if (i > start) out.emplace_back(line.substr(start, i - start));
  }
  return out;
}

std::optional<int> numberAfter(std::string_view token, std::string_view prefix) {
  if (token.size() <= prefix.size() || token.substr(0, prefix.size()) != prefix)
    return std::nullopt;
  int value = 0;
  const char* end = token.data() + token.size();
  const auto [ptr, ec] = std::from_chars(token.data() + prefix.size(), end, value);
  if (ec != std::errc() || ptr != end || value < 0) return std::nullopt;
  return value;
}

// A NIC column is named like a device: mlx5_0, mlx5_bond_0, NIC3 (letters first, digit last).
bool looksLikeDevice(std::string_view token) {
  if (token.empty() || !std::isalpha(static_cast<unsigned char>(token.front())) ||
      !std::isdigit(static_cast<unsigned char>(token.back()))) {
    return false;
  }
  return std::all_of(token.begin(), token.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
  });
}

int intOrUnknown(std::string_view token) {
  int value = -1;
  const char* end = token.data() + token.size();
  const auto [ptr, ec] = std::from_chars(token.data(), end, value);
  return (ec == std::errc() && ptr == end && value >= 0) ? value : -1;
}

class Parser {
 public:
  Parser(std::string_view text, std::string_view origin) : origin_(origin) {
    std::istringstream in(stripAnsi(text));
    std::string line;
    while (std::getline(in, line)) lines_.push_back(line);
  }

  GpuTopology parse() {
    const std::size_t header = findHeader();
    parseHeader(lines_[header], header);
    const std::size_t end = parseRows(header + 1);
    const std::map<std::string, std::string> legend = nicLegend(end);
    return build(legend);
  }

 private:
  [[noreturn]] void fail(std::size_t line, const std::string& what) const {
    throw core::UsageError(fmt::format("{} line {}: {}", origin_, line + 1, what));
  }

  // The header is the first line that starts with GPU0 (or NIC0 on a GPU-less matrix), holds no
  // "X" (every matrix row has its X on the diagonal, no header does) and is followed by the row of
  // its first column, so prose mentioning GPU0 above the matrix is skipped.
  std::size_t findHeader() const {
    const auto hasX = [](const std::vector<std::string>& t) {
      return std::find(t.begin(), t.end(), "X") != t.end();
    };
    for (std::size_t i = 0; i + 1 < lines_.size(); ++i) {
      const std::vector<std::string> t = tokens(lines_[i]);
      if (t.empty() || (t[0] != "GPU0" && t[0] != "NIC0") || hasX(t)) continue;
      const std::vector<std::string> next = tokens(lines_[i + 1]);
      if (!next.empty() && next[0] == t[0] && hasX(next)) return i;
    }
    throw core::UsageError(fmt::format(
        "{}: no `nvidia-smi topo -m` matrix found (expected a header line starting with GPU0)",
        origin_));
  }

  void parseHeader(const std::string& line, std::size_t lineNo) {
    const std::vector<std::string> t = tokens(line);
    bool inExtras = false;
    for (std::size_t i = 0; i < t.size(); ++i) {
      const bool hasNext = i + 1 < t.size();
      if (t[i] == "CPU" && hasNext && t[i + 1] == "Affinity") {
        columns_.push_back({ColumnKind::kCpuAffinity, "CPU Affinity"});
        ++i;
        inExtras = true;
      } else if (t[i] == "NUMA" && hasNext && t[i + 1] == "Affinity") {
        columns_.push_back({ColumnKind::kNumaAffinity, "NUMA Affinity"});
        ++i;
        inExtras = true;
      } else if (t[i] == "GPU" && i + 2 < t.size() && t[i + 1] == "NUMA" && t[i + 2] == "ID") {
        columns_.push_back({ColumnKind::kGpuNumaId, "GPU NUMA ID"});
        i += 2;
        inExtras = true;
      } else if (!inExtras && numberAfter(t[i], "GPU")) {
        if (nics_ > 0) fail(lineNo, fmt::format("GPU column {} after the NIC columns", t[i]));
        if (*numberAfter(t[i], "GPU") != gpus_) {
          fail(lineNo,
               fmt::format("GPU columns out of order: {} where GPU{} was expected", t[i], gpus_));
        }
        columns_.push_back({ColumnKind::kGpu, t[i]});
        ++gpus_;
      } else if (!inExtras && looksLikeDevice(t[i])) {
        columns_.push_back({ColumnKind::kNic, t[i]});
        ++nics_;
      } else {
        // A column this parser does not know (a future nvidia-smi): keep the positions right.
        columns_.push_back({ColumnKind::kOther, t[i]});
        inExtras = true;
      }
    }
    for (std::size_t i = 0; i < columns_.size(); ++i) {
      for (std::size_t j = 0; j < i; ++j) {
        if (columns_[i].kind <= ColumnKind::kNic && columns_[i].label == columns_[j].label) {
          fail(lineNo, fmt::format("column {} appears twice", columns_[i].label));
        }
      }
    }
    cells_.assign(static_cast<std::size_t>(gpus_ + nics_), {});
    extras_.assign(static_cast<std::size_t>(gpus_), {});
  }

  // Rows follow the header until a line that is not a device row; returns that line's index.
  std::size_t parseRows(std::size_t first) {
    const int devices = gpus_ + nics_;
    std::size_t i = first;
    for (; i < lines_.size(); ++i) {
      const std::vector<std::string> t = tokens(lines_[i]);
      if (t.empty()) break;
      int row = -1;
      for (int c = 0; c < devices; ++c) {
        if (columns_[c].label == t[0]) row = c;
      }
      if (row < 0) break;
      if (!cells_[row].empty()) fail(i, fmt::format("{} has two rows", t[0]));
      if (static_cast<int>(t.size()) - 1 < devices) {
        fail(i, fmt::format("the {} row has {} link cells, the header names {} devices", t[0],
                            t.size() - 1, devices));
      }
      for (int c = 0; c < devices; ++c) {
        const std::optional<Link> link = parseLinkCode(t[c + 1]);
        if (!link) {
          fail(i, fmt::format("'{}' in the {} row, column {}, is not a link code "
                              "(X, NV#, PIX, PXB, PHB, NODE, SYS)",
                              t[c + 1], t[0], columns_[c].label));
        }
        if ((link->kind == LinkKind::kSelf) != (c == row)) {
          fail(i, fmt::format("the {} row has '{}' in column {}: X belongs on the diagonal only",
                              t[0], t[c + 1], columns_[c].label));
        }
        cells_[row].push_back(*link);
      }
      if (row < gpus_) {
        extras_[row].assign(t.begin() + 1 + devices, t.end());
      }
    }
    for (int g = 0; g < gpus_; ++g) {
      if (cells_[g].empty()) {
        throw core::UsageError(
            fmt::format("{}: GPU{} is in the header but has no row", origin_, g));
      }
    }
    return i;
  }

  // "NIC0: mlx5_0" lines anywhere after the matrix (normally under "NIC Legend:").
  std::map<std::string, std::string> nicLegend(std::size_t from) const {
    std::map<std::string, std::string> legend;
    for (std::size_t i = from; i < lines_.size(); ++i) {
      const std::vector<std::string> t = tokens(lines_[i]);
      if (t.size() == 2 && t[0].size() > 1 && t[0].back() == ':' &&
          numberAfter(std::string_view(t[0]).substr(0, t[0].size() - 1), "NIC")) {
        legend.emplace(t[0].substr(0, t[0].size() - 1), t[1]);
      }
    }
    return legend;
  }

  GpuTopology build(const std::map<std::string, std::string>& legend) {
    GpuTopology topo = makeTopology(gpus_, nics_);
    topo.sources = {Source::kNvidiaSmiText};
    std::vector<std::string> unnamed;
    for (int n = 0; n < nics_; ++n) {
      NicInfo& nic = topo.nics[n];
      nic.label = columns_[gpus_ + n].label;
      const auto named = legend.find(nic.label);
      nic.name = named != legend.end() ? named->second : nic.label;
      if (named == legend.end() && numberAfter(nic.label, "NIC")) unnamed.push_back(nic.label);
      // nvidia-smi lists the RDMA devices it finds (ibverbs), not plain Ethernet ports.
      nic.rdma = true;
    }
    if (!unnamed.empty()) {
      topo.warnings.push_back(
          fmt::format("no NIC Legend: device names of {} unknown", fmt::join(unnamed, ", ")));
    }
    for (int a = 0; a < gpus_; ++a) {
      for (int b = 0; b < gpus_; ++b) topo.gpuLinks[a][b] = cells_[a][b];
      for (int n = 0; n < nics_; ++n) topo.gpuNic[a][n] = cells_[a][gpus_ + n].kind;
      fillExtras(topo.gpus[a], extras_[a]);
    }
    for (int a = 0; a < gpus_; ++a) {
      for (int b = a + 1; b < gpus_; ++b) {
        const Link& ab = topo.gpuLinks[a][b];
        const Link& ba = topo.gpuLinks[b][a];
        if (ab.kind != ba.kind || ab.nvlinks != ba.nvlinks) {
          topo.warnings.push_back(fmt::format("GPU{}-GPU{} reads {} in one row and {} in the other",
                                              a, b, linkCode(ab), linkCode(ba)));
        }
      }
    }
    return topo;
  }

  void fillExtras(GpuInfo& gpu, const std::vector<std::string>& values) const {
    std::size_t v = 0;
    for (std::size_t c = static_cast<std::size_t>(gpus_ + nics_); c < columns_.size(); ++c, ++v) {
      if (v >= values.size()) return;
      const std::string& value = values[v];
      switch (columns_[c].kind) {
        case ColumnKind::kCpuAffinity:
          if (value != "N/A") gpu.cpuAffinity = value;
          break;
        case ColumnKind::kNumaAffinity: gpu.numaNode = intOrUnknown(value); break;
        case ColumnKind::kGpuNumaId: gpu.gpuNumaId = intOrUnknown(value); break;
        default: break;
      }
    }
  }

  std::string origin_;
  std::vector<std::string> lines_;
  std::vector<Column> columns_;
  int gpus_ = 0;
  int nics_ = 0;
  std::vector<std::vector<Link>> cells_;          // per device row, the link cells
  std::vector<std::vector<std::string>> extras_;  // per GPU row, the affinity values
};

}  // namespace

std::string stripAnsi(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\r') continue;
    if (c != '\x1b') {
      out += c;
      continue;
    }
    if (i + 1 < text.size() && text[i + 1] == '[') {
      // CSI: parameters and intermediates, then one final byte in @..~
      i += 2;
      while (i < text.size() && !(text[i] >= '@' && text[i] <= '~')) ++i;
    } else if (i + 1 < text.size() &&
               std::string_view("()*+").find(text[i + 1]) != std::string_view::npos) {
      i += 2;  // character set selection, e.g. ESC ( B
    } else {
      ++i;  // two-byte escape
    }
  }
  return out;
}

GpuTopology parseSmiTopo(std::string_view text, std::string_view origin) {
  if (text.size() > kMaxInputBytes) {
    throw core::UsageError(fmt::format("{}: {} bytes is too large for `nvidia-smi topo -m` output",
                                       origin, text.size()));
  }
  return Parser(text, origin).parse();
}

GpuTopology readSmiTopoFile(const std::string& path) {
  return parseSmiTopo(core::readUserFile(path, "topology file", kMaxInputBytes), path);
}

}  // namespace fabricmap::topologies
