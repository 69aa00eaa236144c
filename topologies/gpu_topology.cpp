// Names and codes of the topology model (see gpu_topology.h).
#include "topologies/gpu_topology.h"

#include <charconv>

namespace fabricmap::topologies {

GpuTopology makeTopology(int gpus, int nics) {
  GpuTopology topo;
  topo.gpus.resize(static_cast<std::size_t>(gpus));
  for (int g = 0; g < gpus; ++g) topo.gpus[g].index = g;
  topo.nics.resize(static_cast<std::size_t>(nics));
  topo.gpuLinks.assign(topo.gpus.size(), std::vector<Link>(topo.gpus.size()));
  for (int g = 0; g < gpus; ++g) topo.gpuLinks[g][g].kind = LinkKind::kSelf;
  topo.gpuNic.assign(topo.gpus.size(), std::vector<LinkKind>(topo.nics.size(), LinkKind::kUnknown));
  return topo;
}

int pcieRank(LinkKind kind) { return static_cast<int>(kind); }

std::string_view linkKindName(LinkKind kind) {
  switch (kind) {
    case LinkKind::kSelf: return "SELF";
    case LinkKind::kNvLink: return "NVLINK";
    case LinkKind::kPix: return "PIX";
    case LinkKind::kPxb: return "PXB";
    case LinkKind::kPhb: return "PHB";
    case LinkKind::kNode: return "NODE";
    case LinkKind::kSys: return "SYS";
    case LinkKind::kUnknown: break;
  }
  return "UNKNOWN";
}

std::string linkCode(const Link& link) {
  switch (link.kind) {
    case LinkKind::kSelf: return "X";
    case LinkKind::kNvLink: return "NV" + std::to_string(link.nvlinks);
    case LinkKind::kUnknown: return "?";
    default: return std::string(linkKindName(link.kind));
  }
}

std::optional<Link> parseLinkCode(std::string_view code) {
  Link link;
  if (code == "X") {
    link.kind = LinkKind::kSelf;
  } else if (code == "PIX") {
    link.kind = LinkKind::kPix;
  } else if (code == "PXB") {
    link.kind = LinkKind::kPxb;
  } else if (code == "PHB") {
    link.kind = LinkKind::kPhb;
  } else if (code == "NODE") {
    link.kind = LinkKind::kNode;
  } else if (code == "SYS" || code == "SOC") {
    link.kind = LinkKind::kSys;
  } else if (code.size() > 2 && code.substr(0, 2) == "NV") {
    int count = 0;
    const char* end = code.data() + code.size();
    const auto [ptr, ec] = std::from_chars(code.data() + 2, end, count);
    if (ec != std::errc() || ptr != end || count <= 0) return std::nullopt;
    link.kind = LinkKind::kNvLink;
    link.nvlinks = count;
  } else {
    return std::nullopt;
  }
  return link;
}

std::string_view linkLayerName(LinkLayer layer) {
  switch (layer) {
    case LinkLayer::kInfiniBand: return "IB";
    case LinkLayer::kRoce: return "RoCE";
    case LinkLayer::kEthernet: return "Ethernet";
    case LinkLayer::kUnknown: break;
  }
  return "unknown";
}

std::string_view tristateName(Tristate value) {
  switch (value) {
    case Tristate::kYes: return "yes";
    case Tristate::kNo: return "no";
    case Tristate::kUnknown: break;
  }
  return "unknown";
}

std::string_view sourceName(Source source) {
  switch (source) {
    case Source::kNvidiaSmiText: return "nvidia-smi";
    case Source::kNvml: return "nvml";
    case Source::kSysfs: return "sysfs";
  }
  return "unknown";
}

std::string sourcesName(const std::vector<Source>& sources) {
  if (sources.empty()) return "none";
  std::string joined;
  for (const Source s : sources) {
    if (!joined.empty()) joined += '+';
    joined += sourceName(s);
  }
  return joined;
}

}  // namespace fabricmap::topologies
