// The name tables of finding severities and kinds (see findings.h).
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

constexpr std::array<std::pair<FindingKind, std::string_view>, 29> kKinds{{
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
    {FindingKind::kNicDown, "nic_down"},
    {FindingKind::kNicRateMismatch, "nic_rate_mismatch"},
    {FindingKind::kPcieDowntrained, "pcie_downtrained"},
    {FindingKind::kNoGpuDirect, "no_gpudirect"},
    {FindingKind::kLinkErrors, "link_errors"},
    {FindingKind::kGpuMemory, "gpu_memory"},
    {FindingKind::kBelowLineRate, "below_line_rate"},
    {FindingKind::kBinding, "binding"},
    {FindingKind::kSwitch, "switch"},
    {FindingKind::kUplink, "uplink"},
    {FindingKind::kSwitchPort, "switch_port"},
    {FindingKind::kSharedHost, "shared_host"},
}};

}  // namespace

std::string_view name(Severity severity) { return nameIn(kSeverities, severity); }
std::string_view name(FindingKind kind) { return nameIn(kKinds, kind); }
std::optional<Severity> parseSeverity(std::string_view text) { return parseIn(kSeverities, text); }
std::optional<FindingKind> parseFindingKind(std::string_view text) { return parseIn(kKinds, text); }

}  // namespace fabricmap::core
