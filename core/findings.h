// What a finding is: its severity and its kind, and what a step is: its kind; each an enum with one
// name table (core/findings.cpp).
// The names are the contract of the results file, the JSON and the console (README.md lists the
// kinds); inside the code a finding's kind and severity are these enums.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string_view>

namespace fabricmap::core {

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
};

// The kind of a planned step, one per row type of core::StepRows.
enum class StepKind : std::uint8_t { kCollective, kCopy, kPairwise, kScaling, kTraining };

std::string_view name(Severity severity);
std::string_view name(FindingKind kind);
// The enum of a name; nullopt for a name that is none of them.
std::optional<Severity> parseSeverity(std::string_view text);
std::optional<FindingKind> parseFindingKind(std::string_view text);
std::string_view name(StepKind kind);
std::optional<StepKind> parseStepKind(std::string_view text);

// For test output and logs: the name.
inline std::ostream& operator<<(std::ostream& out, Severity s) { return out << name(s); }
inline std::ostream& operator<<(std::ostream& out, FindingKind k) { return out << name(k); }
inline std::ostream& operator<<(std::ostream& out, StepKind k) { return out << name(k); }

}  // namespace fabricmap::core
