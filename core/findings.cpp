// The name tables of finding severities and kinds, and of step kinds (see findings.h).
#include "core/findings.h"

#include <array>
#include <utility>

namespace fabricmap::core {
namespace {

constexpr std::array<std::pair<Severity, std::string_view>, 3> kSeverities{{
    {Severity::kError, "error"},
    {Severity::kWarning, "warning"},
    {Severity::kInfo, "info"},
}};

constexpr std::array<std::pair<FindingKind, std::string_view>, 17> kKinds{{
    {FindingKind::kNode, "node"},
    {FindingKind::kNodeEgress, "node_egress"},
    {FindingKind::kNodeIngress, "node_ingress"},
    {FindingKind::kLink, "link"},
    {FindingKind::kRank, "rank"},
    {FindingKind::kIntraNode, "intra_node"},
    {FindingKind::kNodeLatency, "node_latency"},
    {FindingKind::kLinkLatency, "link_latency"},
    {FindingKind::kClaimedVsMeasured, "claimed_vs_measured"},
    {FindingKind::kTopology, "topology"},
    {FindingKind::kNoise, "noise"},
    {FindingKind::kOversubscribed, "oversubscribed"},
    {FindingKind::kNoisy, "noisy"},
    {FindingKind::kDataCorruption, "data_corruption"},
    {FindingKind::kHang, "hang"},
    {FindingKind::kScaling, "scaling"},
    {FindingKind::kLayout, "layout"},
}};

constexpr std::array<std::pair<StepKind, std::string_view>, 5> kStepKinds{{
    {StepKind::kCollective, "collective"},
    {StepKind::kCopy, "copy"},
    {StepKind::kPairwise, "pairwise"},
    {StepKind::kScaling, "scaling"},
    {StepKind::kTraining, "training"},
}};

template <class E, std::size_t N>
std::string_view nameIn(const std::array<std::pair<E, std::string_view>, N>& table, E value) {
  for (const auto& [e, text] : table) {
    if (e == value) return text;
  }
  return "?";
}

template <class E, std::size_t N>
std::optional<E> parseIn(const std::array<std::pair<E, std::string_view>, N>& table, std::string_view text) {
  for (const auto& [e, name] : table) {
    if (name == text) return e;
  }
  return std::nullopt;
}

}  // namespace

std::string_view name(Severity severity) { return nameIn(kSeverities, severity); }
std::string_view name(FindingKind kind) { return nameIn(kKinds, kind); }
std::optional<Severity> parseSeverity(std::string_view text) { return parseIn(kSeverities, text); }
std::optional<FindingKind> parseFindingKind(std::string_view text) { return parseIn(kKinds, text); }
std::string_view name(StepKind kind) { return nameIn(kStepKinds, kind); }
std::optional<StepKind> parseStepKind(std::string_view text) { return parseIn(kStepKinds, text); }

}  // namespace fabricmap::core
