// What a finding is: its severity and its kind, each an enum with one name table
// (core/findings.cpp); and the lookups every name table of core uses (a step's kind has its
// table beside its record in core/records.h).
// The names are the contract of the results file, the JSON and the console (README.md lists the
// kinds); inside the code a finding's kind and severity are these enums.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string_view>
#include <utility>

namespace fabricmap::core {

// A name table's lookups: the name of `value` ("?" when the table lacks it), the value of a name.
template <class E, std::size_t N>
constexpr std::string_view nameIn(const std::array<std::pair<E, std::string_view>, N>& table, E value) {
  for (const auto& [e, text] : table) {
    if (e == value) return text;
  }
  return "?";
}
template <class E, std::size_t N>
constexpr std::optional<E> parseIn(const std::array<std::pair<E, std::string_view>, N>& table, std::string_view text) {
  for (const auto& [e, name] : table) {
    if (name == text) return e;
  }
  return std::nullopt;
}

// Most severe first: sorting by the enum sorts by severity.
enum class Severity : std::uint8_t { kError, kWarning, kInfo };

enum class FindingKind : std::uint8_t {
  kNode,               // a node slow both ways
  kNodeEgress,         // a node slow sending
  kNodeIngress,        // a node slow receiving
  kLink,               // a route between two nodes
  kRank,               // a rank (its NIC or rail)
  kIntraNode,          // a path inside a node
  kNodeLatency,        // a node with high latency to most peers
  kLinkLatency,        // a node pair with high latency
  kClaimedVsMeasured,  // GPU links that do not move what they claim
  kTopology,           // what a node's topology class means
  kNoise,              // a class whose healthy pairs differ widely
  kOversubscribed,     // a host with more ranks than CPUs
  kNoisy,              // pairs left unjudged
  kDataCorruption,     // wrong data in a checked transfer
  kHang,               // a step that overran its deadline
  kScaling,            // a full node's scaling efficiency
  kLayout,             // a training layout's groups
  kNicDown,            // an RDMA port not active or its link not up
  kNicRateMismatch,    // RDMA ports of one link layer at different rates or widths
  kPcieDowntrained,    // a GPU's or NIC's PCIe link below what it and its slot can do
  kNoGpuDirect,        // GPUs and RDMA NICs without a way for the NIC to reach GPU memory
  kLinkErrors,         // RDMA port error counters that grew
  kGpuMemory,          // a GPU with less memory than its model's others, or than asked for
  kBelowLineRate,      // a node's inter-node bandwidth below what its NICs carry
  kBinding,            // a rank allowed to run on CPUs away from its GPU
  kSwitch,             // a switch the slow node pairs cross (--fabric)
  kUplink,             // a switch's cables to the level above, as a group (--fabric)
  kSwitchPort,         // one cable between two switches, its two ports (--fabric)
  kSharedHost,         // nodes that are one machine (one kernel's boot id)
};

std::string_view name(Severity severity);
std::string_view name(FindingKind kind);
// The enum of a name; nullopt for a name that is none of them.
std::optional<Severity> parseSeverity(std::string_view text);
std::optional<FindingKind> parseFindingKind(std::string_view text);

// For test output and logs: the name.
inline std::ostream& operator<<(std::ostream& out, Severity s) { return out << name(s); }
inline std::ostream& operator<<(std::ostream& out, FindingKind k) { return out << name(k); }

}  // namespace fabricmap::core
