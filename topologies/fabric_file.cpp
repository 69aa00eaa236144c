// Fabric topology file parser (see fabric_file.h). Both formats are read line by line into plain
// records first and joined after the last line: ibnetdiscover prints every cable from both ends, so
// the ends are matched and checked against each other, and the text form learns which names are
// switches only from the whole file.
#include "topologies/fabric_file.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "core/files.h"
#include "core/text.h"
#include "core/error.h"

namespace fabricmap::topologies {
namespace {

using core::FabricDevice;
using core::FabricDeviceKind;
using core::FabricGraph;
using core::FabricLink;

// Inputs larger than this are not a fabric description; refusing them keeps a wrong --fabric from
// reading a disk image into memory. ibnetdiscover prints some 80 bytes per cabled port, so this is
// a fabric of about 200,000 ports.
constexpr std::size_t kMaxInputBytes = 16u << 20;
constexpr std::size_t kMaxLineBytes = 4096;
constexpr int kMaxIbPort = 255;  // InfiniBand port numbers are 8 bits
constexpr int kMaxTextPort = 65535;
constexpr std::size_t kCycleNamesShown = 8;

// A line with content: its number from 1, trimmed, never empty, never a whole-line comment.
struct Line {
  std::size_t number = 0;
  std::string_view text;
};

// Text from a hostile file, safe to print (core/text.h).
std::string shown(std::string_view text, std::size_t limit = 60) { return core::printable(text, limit); }

bool isBlank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && isBlank(s.front())) s.remove_prefix(1);
  while (!s.empty() && isBlank(s.back())) s.remove_suffix(1);
  return s;
}

// Every message reads FILE:LINE: what is wrong.
class FileErrors {
 public:
  explicit FileErrors(std::string file) : file_(std::move(file)) {}
  [[noreturn]] void fail(std::size_t line, const std::string& what) const {
    throw core::UsageError(fmt::format("{}:{}: {}", file_, line, what));
  }

 private:
  std::string file_;
};

std::vector<Line> contentLines(std::string_view text, const FileErrors& errors) {
  std::vector<Line> out;
  std::size_t number = 0;
  while (!text.empty()) {
    ++number;
    const std::size_t newline = text.find('\n');
    const std::string_view raw = text.substr(0, newline);
    text = newline == std::string_view::npos ? std::string_view() : text.substr(newline + 1);
    if (raw.size() > kMaxLineBytes) {
      errors.fail(number, fmt::format("line longer than {} bytes", kMaxLineBytes));
    }
    const std::string_view line = trimmed(raw);
    if (line.empty() || line.front() == '#') continue;
    if (std::any_of(line.begin(), line.end(),
                    [](char c) { return static_cast<unsigned char>(c) < 0x20 && c != '\t'; })) {
      errors.fail(number, "control character in the line");
    }
    out.push_back({number, line});
  }
  return out;
}

// Reads a line left to right; each step consumes what it recognises and says whether it did.
class Cursor {
 public:
  explicit Cursor(std::string_view text) : rest_(text) {}
  bool done() const { return rest_.empty(); }
  std::string_view rest() const { return rest_; }
  void skipSpace() {
    while (!rest_.empty() && isBlank(rest_.front())) rest_.remove_prefix(1);
  }
  bool eat(std::string_view token) {
    if (rest_.substr(0, token.size()) != token) return false;
    rest_.remove_prefix(token.size());
    return true;
  }
  // A decimal number of at most 9 digits, no sign.
  std::optional<int> number() {
    std::size_t n = 0;
    while (n < rest_.size() && std::isdigit(static_cast<unsigned char>(rest_[n]))) ++n;
    if (n == 0 || n > 9) return std::nullopt;
    int value = 0;
    std::from_chars(rest_.data(), rest_.data() + n, value);
    rest_.remove_prefix(n);
    return value;
  }
  // 1 to 16 hex digits, optionally after 0x; returns the digits.
  std::optional<std::string_view> hex() {
    std::string_view r = rest_;
    if (r.substr(0, 2) == "0x") r.remove_prefix(2);
    std::size_t n = 0;
    while (n < r.size() && std::isxdigit(static_cast<unsigned char>(r[n]))) ++n;
    if (n == 0 || n > 16) return std::nullopt;
    rest_ = r.substr(n);
    return r.substr(0, n);
  }
  // "text" -> text
  std::optional<std::string_view> quoted() {
    if (rest_.size() < 2 || rest_.front() != '"') return std::nullopt;
    const std::size_t close = rest_.find('"', 1);
    if (close == std::string_view::npos) return std::nullopt;
    const std::string_view inside = rest_.substr(1, close - 1);
    rest_.remove_prefix(close + 1);
    return inside;
  }

 private:
  std::string_view rest_;
};

// ---------------------------------------------------------------------------------------------
// ibnetdiscover (infiniband-diags/ibnetdiscover.c in linux-rdma/rdma-core prints it)

// `Switch`, `Ca`, `Rt` and ibsim's `Hca`, followed by a blank.
std::optional<FabricDeviceKind> nodeKeyword(Cursor& c) {
  static constexpr std::array<std::pair<std::string_view, FabricDeviceKind>, 4> kKeywords = {{
      {"Switch", FabricDeviceKind::kSwitch},
      {"Ca", FabricDeviceKind::kHost},
      {"Hca", FabricDeviceKind::kHost},
      {"Rt", FabricDeviceKind::kSwitch},  // a router joins subnets: not a host
  }};
  for (const auto& [word, kind] : kKeywords) {
    Cursor probe = c;
    if (!probe.eat(word) || probe.done() || !isBlank(probe.rest().front())) continue;
    c = probe;
    return kind;
  }
  return std::nullopt;
}

bool isIbnetdiscoverLine(const Line& line) {
  Cursor c(line.text);
  return nodeKeyword(c) || c.eat("switchguid=") || c.eat("caguid=");
}

// -g: `Chassis 1 (guid 0x...)`, `Non-Chassis Nodes`, `Hostname: ...` (a Xsigo chassis).
bool isGroupingLine(std::string_view text) {
  Cursor c(text);
  if (c.eat("Non-Chassis Nodes")) return c.done();
  if (c.eat("Hostname:")) return true;
  if (!c.eat("Chassis ") || !c.number()) return false;
  c.skipSpace();
  return c.done() || c.eat("(");
}

// "0x2c9030002847c" -> "0x0002c9030002847c"
std::string guidText(std::string_view digits) {
  std::string out = "0x" + std::string(16 - digits.size(), '0');
  for (const char c : digits) out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// The GUID in an ibnetdiscover node id ("S-0002c90000ff2d80"), "" when the id is not of that form.
std::string guidOfId(std::string_view id) {
  Cursor c(id);
  if (!(c.eat("S-") || c.eat("H-") || c.eat("R-"))) return "";
  const std::optional<std::string_view> digits = c.hex();
  return digits && c.done() && digits->size() == 16 ? guidText(*digits) : "";
}

// "4xQDR", "2xNDR", "12xEDR", "4xFDR10" (unknown widths and speeds print as ?? and ???: no rate)
bool isRate(std::string_view token) {
  const std::size_t x = token.find('x');
  if (x == 0 || x == std::string_view::npos || x > 2 || x + 1 >= token.size()) return false;
  const std::string_view width = token.substr(0, x);
  const std::string_view speed = token.substr(x + 1);
  const auto digit = [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; };
  return std::all_of(width.begin(), width.end(), digit) &&
         std::isupper(static_cast<unsigned char>(speed.front())) &&
         std::all_of(speed.begin(), speed.end(),
                     [&](char c) { return digit(c) || std::isupper(static_cast<unsigned char>(c)); });
}

// A port line's comment ends with the link's width and speed after the far end's quoted
// description (`# "node01 HCA-1" lid 3 4xQDR`, `# lid 3 lmc 0 "leaf1" lid 1 4xQDR s=4 w=2 v=4`).
std::string rateIn(std::string_view comment) {
  const std::size_t quote = comment.rfind('"');
  Cursor c(quote == std::string_view::npos ? comment : comment.substr(quote + 1));
  while (c.skipSpace(), !c.done()) {
    const std::string_view rest = c.rest();
    const std::string_view token = rest.substr(0, std::min(rest.find_first_of(" \t"), rest.size()));
    if (isRate(token)) return std::string(token);
    c.eat(token);
  }
  return "";
}

// The quoted node description at the start of a node line's comment; nullopt when the quote is
// not closed.
std::optional<std::string> descriptionIn(std::string_view comment) {
  comment = trimmed(comment);
  if (comment.empty() || comment.front() != '"') return std::string();
  const std::size_t close = comment.rfind('"');
  if (close == 0) return std::nullopt;
  return std::string(comment.substr(1, close - 1));
}

// An adapter's description before its host sets one: empty, or the firmware's default
// ("MT4123 ConnectX6   Mellanox Technologies", "MT23108 InfiniHost Mellanox Technologies",
// "Mellanox Technologies Aggregation Node" of a switch's SHARP engine).
bool isDefaultDescription(std::string_view description) {
  description = trimmed(description);
  if (description.empty() || description.find("Mellanox Technologies") != std::string_view::npos) {
    return true;
  }
  Cursor c(description);
  return c.eat("MT") && c.number() && (c.done() || isBlank(c.rest().front()));
}

// "HCA-1": the old OFED init script's numbering, not a device name the run knows.
bool isOfedNumbering(std::string_view word) {
  Cursor c(word);
  return c.eat("HCA-") && c.number() && c.done();
}

// "node01 mlx5_0" -> host node01, nic mlx5_0; "node01 HCA-1" -> host node01, no nic.
void nameAdapter(FabricDevice& device, std::string_view description) {
  description = trimmed(description);
  const std::size_t blank = std::min(description.find_first_of(" \t"), description.size());
  device.name = std::string(description.substr(0, blank));
  const std::string_view rest = trimmed(description.substr(blank));
  const std::string_view second = rest.substr(0, std::min(rest.find_first_of(" \t"), rest.size()));
  if (!isOfedNumbering(second)) device.nic = std::string(second);
}

// One node line: `Switch 36 "S-0002c90000ff2d80"  # "desc" enhanced port 0 lid 1 lmc 0`.
struct IbNode {
  std::string id;  // the quoted node id: "S-<guid>" ("Switch1" in an ibsim file)
  FabricDeviceKind kind = FabricDeviceKind::kSwitch;
  int ports = 0;
  std::string guid;
  std::string description;
  std::size_t line = 0;
};

// One port line: this port's cable leads to the far node's port.
struct CableEnd {
  int node = -1;
  int port = 0;
  std::string farId;
  int farPort = 0;
  std::string rate;
  std::size_t line = 0;
};

class IbnetdiscoverReader {
 public:
  explicit IbnetdiscoverReader(const FileErrors& errors) : errors_(errors) {}

  FabricGraph read(const std::vector<Line>& lines) {
    for (const Line& line : lines) readLine(line);
    FabricGraph graph;
    graph.source = "ibnetdiscover";
    graph.devices = devices(graph.warnings);
    graph.links = cables(graph.warnings);
    return graph;
  }

 private:
  void readLine(const Line& line) {
    if (readIds(line) || readNode(line) || readPort(line) || isGroupingLine(line.text)) return;
    errors_.fail(line.number, fmt::format("not a line of ibnetdiscover output: '{}'", shown(line.text)));
  }

  // vendid=0x2c9, devid=, sysimgguid=, switchguid=0x...(port guid), caguid=, rtguid=; -g appends
  // a comment naming the chassis. The node GUIDs name the node line that follows.
  bool readIds(const Line& line) {
    struct Key {
      std::string_view text;
      bool nodeGuid;
    };
    static constexpr std::array<Key, 6> kKeys = {{{"vendid=", false},
                                                  {"devid=", false},
                                                  {"sysimgguid=", false},
                                                  {"switchguid=", true},
                                                  {"caguid=", true},
                                                  {"rtguid=", true}}};
    Cursor c(line.text);
    const auto key = std::find_if(kKeys.begin(), kKeys.end(), [&](const Key& k) { return c.eat(k.text); });
    if (key == kKeys.end()) return false;
    const std::optional<std::string_view> value = c.hex();
    if (!value) errors_.fail(line.number, fmt::format("'{}' is not a hex number", shown(c.rest())));
    skipPortGuid(c, line);
    c.skipSpace();
    if (!c.done() && !c.eat("#")) errors_.fail(line.number, "unexpected text after the value");
    if (key->nodeGuid) nodeGuid_ = guidText(*value);
    return true;
  }

  bool readNode(const Line& line) {
    Cursor c(line.text);
    const std::optional<FabricDeviceKind> kind = nodeKeyword(c);
    if (!kind) return false;
    c.skipSpace();
    const std::optional<int> ports = c.number();
    if (!ports || *ports < 1 || *ports > kMaxIbPort) {
      errors_.fail(line.number, "expected the node's port count (1..255) after its type");
    }
    c.skipSpace();
    const std::optional<std::string_view> id = c.quoted();
    if (!id || id->empty()) {
      errors_.fail(line.number, "expected the node id in quotes, e.g. \"S-0002c90000ff2d80\"");
    }
    c.skipSpace();
    if (!c.done() && !c.eat("#")) errors_.fail(line.number, "unexpected text after the node id");
    std::optional<std::string> description = descriptionIn(c.rest());
    if (!description) errors_.fail(line.number, "the node description's quote is not closed");
    addNode({std::string(*id), *kind, *ports, nodeGuidFor(*id), std::move(*description), line.number});
    return true;
  }

  std::string nodeGuidFor(std::string_view id) {
    std::string guid = guidOfId(id);
    if (guid.empty()) guid = nodeGuid_;  // an ibsim id ("Switch1") after a switchguid= line
    nodeGuid_.clear();
    return guid;
  }

  void addNode(IbNode node) {
    const auto [at, fresh] = byId_.emplace(node.id, static_cast<int>(nodes_.size()));
    if (!fresh) {
      errors_.fail(node.line, fmt::format("node \"{}\" is described twice (first on line {})", shown(node.id),
                                          nodes_[static_cast<std::size_t>(at->second)].line));
    }
    nodes_.push_back(std::move(node));
  }

  // A switch's port: [1]  "H-0002c903000c6d00"[1](2c903000c6d01)  # "node01 HCA-1" lid 3 4xQDR
  // A CA's port:     [1](2c903000c6d01)  "S-0002c90000ff2d80"[1]  # lid 3 lmc 0 "leaf1" lid 1 4xQDR
  // -g adds [ext N] after either port number.
  bool readPort(const Line& line) {
    Cursor c(line.text);
    if (!c.eat("[")) return false;
    if (nodes_.empty()) errors_.fail(line.number, "a port line before any Switch or Ca line");
    CableEnd end;
    end.node = static_cast<int>(nodes_.size()) - 1;
    end.line = line.number;
    end.port = portNumber(c, line);
    if (end.port > nodes_.back().ports) {
      errors_.fail(line.number, fmt::format("port {} of \"{}\", which has {} ports", end.port,
                                            shown(nodes_.back().id), nodes_.back().ports));
    }
    readFarEnd(c, line, end);
    end.rate = rateIn(c.rest());
    addCableEnd(std::move(end));
    return true;
  }

  void readFarEnd(Cursor& c, const Line& line, CableEnd& end) const {
    c.skipSpace();
    skipPortGuid(c, line);
    c.skipSpace();
    const std::optional<std::string_view> far = c.quoted();
    if (!far || far->empty()) errors_.fail(line.number, "expected the far end's node id in quotes");
    end.farId = std::string(*far);
    if (!c.eat("[")) errors_.fail(line.number, "expected [PORT] after the far end's node id");
    end.farPort = portNumber(c, line);
    c.skipSpace();
    skipPortGuid(c, line);
    c.skipSpace();
    if (!c.done() && !c.eat("#")) errors_.fail(line.number, "unexpected text after the far end");
  }

  // N] after the opening bracket, then an optional [ext N]
  int portNumber(Cursor& c, const Line& line) const {
    const std::optional<int> port = c.number();
    if (!port || *port < 1 || *port > kMaxIbPort || !c.eat("]")) {
      errors_.fail(line.number, "expected a port number 1..255 in [ ]");
    }
    if (c.eat("[ext ") && !(c.number() && c.eat("]"))) errors_.fail(line.number, "malformed [ext N]");
    return *port;
  }

  void skipPortGuid(Cursor& c, const Line& line) const {
    if (c.eat("(") && !(c.hex() && c.eat(")"))) errors_.fail(line.number, "malformed port GUID in ( )");
  }

  void addCableEnd(CableEnd end) {
    const std::pair<int, int> key(end.node, end.port);
    const auto [at, fresh] = ends_.emplace(key, end);
    if (!fresh) {
      errors_.fail(end.line,
                   fmt::format("{} is listed twice (first on line {})", portName(key), at->second.line));
    }
  }

  std::string portName(std::pair<int, int> port) const {
    return fmt::format("\"{}\"[{}]", shown(nodes_[static_cast<std::size_t>(port.first)].id), port.second);
  }

  std::vector<FabricDevice> devices(std::vector<std::string>& warnings) const {
    std::map<std::string_view, int> switchDescriptions;
    for (const IbNode& node : nodes_) {
      if (node.kind == FabricDeviceKind::kSwitch && !node.description.empty())
        ++switchDescriptions[node.description];
    }
    std::vector<FabricDevice> out;
    for (const IbNode& node : nodes_) {
      FabricDevice device{.kind = node.kind,
                          .name = node.id,
                          .nic = "",
                          .guid = node.guid,
                          .description = node.description,
                          .level = 0};
      if (node.kind == FabricDeviceKind::kSwitch) {
        const auto named = switchDescriptions.find(node.description);
        if (named != switchDescriptions.end() && named->second == 1) device.name = node.description;
      } else if (isDefaultDescription(node.description)) {
        warnings.push_back(unnamedAdapterWarning(node));
      } else {
        nameAdapter(device, node.description);
      }
      out.push_back(std::move(device));
    }
    warnSameDescriptions(warnings);
    return out;
  }

  static std::string unnamedAdapterWarning(const IbNode& node) {
    const std::string said =
        trimmed(node.description).empty()
            ? std::string("no node description")
            : fmt::format("the default node description \"{}\"", shown(node.description));
    return fmt::format("line {}: host adapter \"{}\" has {}: no host name, named by its node id", node.line,
                       shown(node.id), said);
  }

  // Two hosts named alike ("localhost mlx5_0") cannot be told apart by name.
  void warnSameDescriptions(std::vector<std::string>& warnings) const {
    std::map<std::string_view, std::size_t> firstLine;
    for (const IbNode& node : nodes_) {
      if (node.kind != FabricDeviceKind::kHost || isDefaultDescription(node.description)) continue;
      const auto [at, fresh] = firstLine.emplace(node.description, node.line);
      if (fresh) continue;
      warnings.push_back(
          fmt::format("line {}: host adapter \"{}\" has the node description \"{}\" of line {} too",
                      node.line, shown(node.id), shown(node.description), at->second));
    }
  }

  std::vector<FabricLink> cables(std::vector<std::string>& warnings) const {
    std::vector<FabricLink> links;
    for (const auto& [key, end] : ends_) {
      const int far = farNode(end);
      const CableEnd& back = backEnd(end, far);
      if (std::pair(far, end.farPort) < key) continue;  // counted from its other end
      if (&back == &end) errors_.fail(end.line, fmt::format("{} is cabled to itself", portName(key)));
      if (far == end.node) {
        warnings.push_back(fmt::format("line {}: {} and port {} are cabled to each other", end.line,
                                       portName(key), end.farPort));
      }
      if (!end.rate.empty() && !back.rate.empty() && end.rate != back.rate) {
        warnings.push_back(fmt::format("lines {} and {}: the ends of a cable read {} and {}", end.line,
                                       back.line, end.rate, back.rate));
      }
      links.push_back({.a = end.node,
                       .portA = end.port,
                       .b = far,
                       .portB = end.farPort,
                       .rate = end.rate.empty() ? back.rate : end.rate});
    }
    return links;
  }

  int farNode(const CableEnd& end) const {
    const auto far = byId_.find(end.farId);
    if (far == byId_.end()) {
      errors_.fail(end.line, fmt::format("\"{}\" has no Switch or Ca line in this file (a truncated output?)",
                                         shown(end.farId)));
    }
    return far->second;
  }

  // The line for the cable's other end, which must name this end back.
  const CableEnd& backEnd(const CableEnd& end, int far) const {
    const std::pair<int, int> farPort(far, end.farPort);
    const auto back = ends_.find(farPort);
    if (back == ends_.end()) {
      errors_.fail(end.line, fmt::format("{} leads to {}, which the block of line {} does not list",
                                         portName({end.node, end.port}), portName(farPort),
                                         nodes_[static_cast<std::size_t>(far)].line));
    }
    const CableEnd& other = back->second;
    if (other.farId != nodes_[static_cast<std::size_t>(end.node)].id || other.farPort != end.port) {
      errors_.fail(
          std::max(end.line, other.line),
          fmt::format("the ends of a cable disagree: line {} says {} leads to \"{}\"[{}], line {} says "
                      "{} leads to \"{}\"[{}]",
                      end.line, portName({end.node, end.port}), shown(end.farId), end.farPort, other.line,
                      portName(farPort), shown(other.farId), other.farPort));
    }
    return other;
  }

  const FileErrors& errors_;
  std::vector<IbNode> nodes_;
  std::map<std::string, int, std::less<>> byId_;
  std::map<std::pair<int, int>, CableEnd> ends_;  // by (node, port)
  std::string nodeGuid_;                          // from the switchguid=/caguid= line before a node
};

// ---------------------------------------------------------------------------------------------
// The text form: CHILD -> PARENT

// `node01`, `node01:mlx5_1`, `leaf2:7`, `node01:mlx5_0:1`
struct TextEnd {
  std::string name;
  std::string nic;
  int port = 0;
};

struct TextCable {
  TextEnd child;
  TextEnd parent;
  std::size_t line = 0;
};

std::string endName(const TextEnd& end) {
  std::string out = shown(end.name);
  if (!end.nic.empty()) out += ":" + shown(end.nic);
  if (end.port > 0) out += fmt::format(":{}", end.port);
  return out;
}

std::vector<std::string_view> colonParts(std::string_view spec) {
  std::vector<std::string_view> parts;
  for (std::size_t start = 0;;) {
    const std::size_t colon = spec.find(':', start);
    parts.push_back(spec.substr(start, colon - start));
    if (colon == std::string_view::npos) return parts;
    start = colon + 1;
  }
}

// A part that starts like a number is a port, and must be one.
bool startsLikeNumber(std::string_view part) {
  return std::isdigit(static_cast<unsigned char>(part.front())) || part.front() == '-' || part.front() == '+';
}

int textPort(std::string_view part, std::string_view spec, std::size_t line, const FileErrors& errors) {
  int port = 0;
  const auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), port);
  if (ec != std::errc() || end != part.data() + part.size() || port < 1 || port > kMaxTextPort) {
    errors.fail(line, fmt::format("bad port number '{}' in '{}' (ports are 1..{})", shown(part), shown(spec),
                                  kMaxTextPort));
  }
  return port;
}

// CHILD: name[:nic][:port]; PARENT: name[:port]
TextEnd textEnd(std::string_view spec, bool child, std::size_t line, const FileErrors& errors) {
  const std::string_view side = child ? "left of ->" : "right of ->";
  if (spec.empty()) errors.fail(line, fmt::format("no name {}", side));
  if (spec.find_first_of(" \t") != std::string_view::npos) {
    errors.fail(line, fmt::format("'{}' {}: a name has no blanks", shown(spec), side));
  }
  const std::vector<std::string_view> parts = colonParts(spec);
  if (parts.size() > (child ? 3u : 2u)) errors.fail(line, fmt::format("too many ':' in '{}'", shown(spec)));
  TextEnd end{.name = std::string(parts[0]), .nic = "", .port = 0};
  if (end.name.empty()) errors.fail(line, fmt::format("empty name in '{}'", shown(spec)));
  for (std::size_t i = 1; i < parts.size(); ++i) {
    if (parts[i].empty()) errors.fail(line, fmt::format("nothing after ':' in '{}'", shown(spec)));
    const bool last = i + 1 == parts.size();
    if (startsLikeNumber(parts[i]) || !child || i == 2) {
      if (!last) errors.fail(line, fmt::format("'{}': the port comes last", shown(spec)));
      end.port = textPort(parts[i], spec, line, errors);
    } else {
      end.nic = std::string(parts[i]);
    }
  }
  return end;
}

TextCable textCable(const Line& line, const FileErrors& errors) {
  const std::string_view text = trimmed(line.text.substr(0, line.text.find('#')));
  const std::size_t arrow = text.find("->");
  if (arrow == std::string_view::npos) {
    errors.fail(line.number,
                fmt::format("expected CHILD -> PARENT (e.g. node01 -> leaf1), got '{}'", shown(text)));
  }
  if (text.find("->", arrow + 2) != std::string_view::npos) {
    errors.fail(line.number, "more than one '->': one cable per line");
  }
  return {textEnd(trimmed(text.substr(0, arrow)), true, line.number, errors),
          textEnd(trimmed(text.substr(arrow + 2)), false, line.number, errors), line.number};
}

// A name with a nic left of -> (a host) that is also right of one (a switch), told at the later line.
std::string roleContradiction(std::string_view name, std::size_t hostLine, std::size_t switchLine) {
  if (hostLine < switchLine) {
    return fmt::format("\"{}\" is a host on line {} and a switch here", shown(name), hostLine);
  }
  if (hostLine > switchLine) {
    return fmt::format("\"{}\" is a switch on line {} and a host here", shown(name), switchLine);
  }
  return fmt::format("\"{}\" is on both sides of ->", shown(name));
}

class TextFabric {
 public:
  explicit TextFabric(const FileErrors& errors) : errors_(errors) {}

  FabricGraph build(const std::vector<TextCable>& cables) {
    findSwitches(cables);
    for (const TextCable& cable : cables) addCable(cable);
    checkNoCycle();
    FabricGraph graph;
    graph.source = "text";
    graph.devices = std::move(devices_);
    graph.links = std::move(links_);
    return graph;
  }

 private:
  // Names on a right-hand side are switches; a name with a nic on the left is a host.
  void findSwitches(const std::vector<TextCable>& cables) {
    std::map<std::string_view, std::size_t> switchLine;
    std::map<std::string_view, std::size_t> hostLine;
    for (const TextCable& cable : cables) {
      switchLine.emplace(cable.parent.name, cable.line);
      if (!cable.child.nic.empty()) hostLine.emplace(cable.child.name, cable.line);
    }
    std::optional<std::pair<std::size_t, std::string>> first;  // the earliest contradiction
    for (const auto& [name, host] : hostLine) {
      const auto sw = switchLine.find(name);
      if (sw == switchLine.end()) continue;
      const std::size_t line = std::max(host, sw->second);
      if (first && first->first <= line) continue;
      first.emplace(line, roleContradiction(name, host, sw->second));
    }
    if (first) errors_.fail(first->first, first->second);
    for (const auto& entry : switchLine) switches_.emplace(entry.first);
  }

  void addCable(const TextCable& cable) {
    const bool fromHost = switches_.count(cable.child.name) == 0;
    if (fromHost) checkAdapterPort(cable);
    const int child = fromHost ? hostDevice(cable.child) : switchDevice(cable.child.name);
    const int parent = switchDevice(cable.parent.name);
    usePort(child, cable.child, cable.line);
    usePort(parent, cable.parent, cable.line);
    links_.push_back(
        {.a = child, .portA = cable.child.port, .b = parent, .portB = cable.parent.port, .rate = ""});
    linkLines_.push_back(cable.line);
  }

  // An adapter port hangs off one switch: the same host[:nic] again is an error unless both lines
  // name different ports of it.
  void checkAdapterPort(const TextCable& cable) {
    std::vector<const TextCable*>& earlier = adapterCables_[{cable.child.name, cable.child.nic}];
    for (const TextCable* before : earlier) {
      const int p = before->child.port;
      const int q = cable.child.port;
      if (p != 0 && q != 0 && p != q) continue;
      if (p == q && before->parent.name == cable.parent.name && before->parent.port == cable.parent.port) {
        errors_.fail(cable.line, fmt::format("repeats line {}", before->line));
      }
      errors_.fail(
          cable.line,
          fmt::format("\"{}\" hangs off \"{}\" on line {} and off \"{}\" here (two ports of one "
                      "adapter need a :PORT each)",
                      endName(cable.child), endName(before->parent), before->line, endName(cable.parent)));
    }
    earlier.push_back(&cable);
  }

  int switchDevice(const std::string& name) {
    const auto [at, fresh] = switchIndex_.emplace(name, static_cast<int>(devices_.size()));
    if (fresh) {
      devices_.push_back({.kind = FabricDeviceKind::kSwitch,
                          .name = name,
                          .nic = "",
                          .guid = "",
                          .description = "",
                          .level = 0});
    }
    return at->second;
  }

  int hostDevice(const TextEnd& end) {
    const auto [at, fresh] =
        hostIndex_.emplace(std::pair(end.name, end.nic), static_cast<int>(devices_.size()));
    if (fresh) {
      devices_.push_back({.kind = FabricDeviceKind::kHost,
                          .name = end.name,
                          .nic = end.nic,
                          .guid = "",
                          .description = "",
                          .level = 0});
    }
    return at->second;
  }

  void usePort(int device, const TextEnd& end, std::size_t line) {
    if (end.port == 0) return;
    const auto [at, fresh] = portLines_.emplace(std::pair(device, end.port), line);
    if (!fresh) {
      errors_.fail(line, fmt::format("\"{}\" is cabled on line {} already: one cable per port", endName(end),
                                     at->second));
    }
  }

  // A switch must not hang off itself, directly or through others: depth-first over the uplinks,
  // without recursion (a chain of 100,000 switches is a valid file).
  void checkNoCycle() const {
    std::vector<std::vector<std::size_t>> uplinks(devices_.size());
    for (std::size_t l = 0; l < links_.size(); ++l) {
      const auto a = static_cast<std::size_t>(links_[l].a);
      if (devices_[a].kind == FabricDeviceKind::kSwitch) uplinks[a].push_back(l);
    }
    std::vector<char> state(devices_.size(), kUnseen);
    for (std::size_t start = 0; start < devices_.size(); ++start) {
      if (state[start] == kUnseen) walkUp(start, uplinks, state);
    }
  }

  static constexpr char kUnseen = 0;
  static constexpr char kOnPath = 1;
  static constexpr char kDone = 2;

  using Path = std::vector<std::pair<std::size_t, std::size_t>>;  // device, uplinks taken so far

  void walkUp(std::size_t start, const std::vector<std::vector<std::size_t>>& uplinks,
              std::vector<char>& state) const {
    Path path{{start, 0}};
    state[start] = kOnPath;
    while (!path.empty()) {
      const std::size_t device = path.back().first;
      if (path.back().second == uplinks[device].size()) {
        state[device] = kDone;
        path.pop_back();
        continue;
      }
      const std::size_t link = uplinks[device][path.back().second++];
      const auto up = static_cast<std::size_t>(links_[link].b);
      if (state[up] == kOnPath) failCycle(path, uplinks, up);
      if (state[up] == kUnseen) {
        state[up] = kOnPath;
        path.emplace_back(up, 0);
      }
    }
  }

  // The cycle is the path from `closing` on; it is told ending with the uplink of the highest line,
  // the one that closed it in file order.
  [[noreturn]] void failCycle(const Path& path, const std::vector<std::vector<std::size_t>>& uplinks,
                              std::size_t closing) const {
    auto from = path.begin();
    while (from->first != closing) ++from;
    std::vector<std::size_t> cycle;  // each switch hangs off the next, the last off the first
    std::vector<std::size_t> lines;  // the line of each of those uplinks
    for (auto step = from; step != path.end(); ++step) {
      cycle.push_back(step->first);
      lines.push_back(linkLines_[uplinks[step->first][step->second - 1]]);
    }
    const auto last = static_cast<std::size_t>(std::max_element(lines.begin(), lines.end()) - lines.begin());
    std::vector<std::string> names;
    for (std::size_t i = 0; i < std::min(cycle.size(), kCycleNamesShown); ++i) {
      names.push_back(shown(devices_[cycle[(last + 1 + i) % cycle.size()]].name));
    }
    if (cycle.size() > kCycleNamesShown) names.push_back("...");
    names.push_back(names.front());
    errors_.fail(lines[last], fmt::format("a cycle among switches: {}", fmt::join(names, " -> ")));
  }

  const FileErrors& errors_;
  std::set<std::string, std::less<>> switches_;
  std::vector<FabricDevice> devices_;
  std::vector<FabricLink> links_;
  std::vector<std::size_t> linkLines_;  // per link, its line
  std::map<std::string, int> switchIndex_;
  std::map<std::pair<std::string, std::string>, int> hostIndex_;
  std::map<std::pair<std::string, std::string>, std::vector<const TextCable*>> adapterCables_;
  std::map<std::pair<int, int>, std::size_t> portLines_;  // (device, port) -> line
};

FabricGraph readTextForm(const std::vector<Line>& lines, const FileErrors& errors) {
  std::vector<TextCable> cables;
  cables.reserve(lines.size());
  for (const Line& line : lines) cables.push_back(textCable(line, errors));
  return TextFabric(errors).build(cables);
}

FabricGraph readEitherFormat(const std::vector<Line>& lines, const FileErrors& errors) {
  if (std::any_of(lines.begin(), lines.end(), isIbnetdiscoverLine)) {
    return IbnetdiscoverReader(errors).read(lines);
  }
  if (std::any_of(lines.begin(), lines.end(),
                  [](const Line& l) { return l.text.find("->") != std::string_view::npos; })) {
    return readTextForm(lines, errors);
  }
  errors.fail(lines.front().number,
              fmt::format("neither ibnetdiscover output nor \"child -> parent\" lines: '{}'",
                          shown(lines.front().text)));
}

}  // namespace

FabricGraph parseFabric(std::string_view text, const std::string& fileName) {
  const FileErrors errors(fileName);
  if (text.size() > kMaxInputBytes) {
    throw core::UsageError(
        fmt::format("{}: {} bytes is too large for a fabric topology file", fileName, text.size()));
  }
  const std::vector<Line> lines = contentLines(text, errors);
  if (lines.empty()) errors.fail(1, "no devices: the file is empty or holds only comments");
  FabricGraph graph = readEitherFormat(lines, errors);
  if (graph.devices.empty()) errors.fail(lines.back().number, "no devices: no Switch or Ca line");
  core::assignLevels(graph);
  return graph;
}

FabricGraph readFabricFile(const std::string& path) {
  return parseFabric(core::readUserFile(path, "fabric file", kMaxInputBytes), path);
}

}  // namespace fabricmap::topologies
