// Local node discovery (see discovery.h).
#include "topologies/discovery.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <map>

#include "topologies/sysfs.h"

namespace fabricmap::topologies {
namespace {

// What each entry point's absence leaves unknown, for the warning that names it.
std::string missingMeaning(const std::string& symbol) {
  static const std::map<std::string, std::string> meaning = {
      {"nvmlDeviceGetNvLinkState", "NVLinks unknown, pairs may be NVLink where PCIe is shown"},
      {"nvmlDeviceGetNvLinkRemotePciInfo_v2", "NVLink peers unknown"},
      {"nvmlDeviceGetNvLinkRemoteDeviceType",
       "NVLinks to non-GPU devices are taken as NVSwitch links"},
      {"nvmlDeviceGetTopologyCommonAncestor", "GPU PCIe paths from sysfs instead"},
      {"nvmlDeviceGetP2PStatus", "peer-to-peer support unknown"},
      {"nvmlDeviceGetPciInfo_v3", "PCI bus ids, NUMA nodes and NIC paths unknown"},
      {"nvmlDeviceGetEccMode", "ECC mode unknown"},
      {"nvmlDeviceGetRetiredPages", "retired pages unknown"},
      {"nvmlDeviceGetRetiredPagesPendingStatus", "pages waiting for retirement unknown"},
      {"nvmlDeviceGetRemappedRows", "remapped memory rows unknown"},
  };
  const auto it = meaning.find(symbol);
  return it != meaning.end() ? it->second : "its fields unknown";
}

struct NvLinkCounts {
  std::vector<std::vector<int>> peer;  // [a][b]: active links from a whose far end is GPU b
  std::vector<int> toSwitch;           // active links to an NVSwitch
  bool complete = true;                // every GPU's link states were readable
};

NvLinkCounts countNvLinks(NvmlApi& nvml, const GpuTopology& topo,
                          std::vector<std::string>& warnings) {
  const int n = topo.gpuCount();
  NvLinkCounts counts;
  counts.peer.assign(static_cast<std::size_t>(n), std::vector<int>(static_cast<std::size_t>(n), 0));
  counts.toSwitch.assign(static_cast<std::size_t>(n), 0);
  std::map<std::string, int> gpuByBus;
  for (const GpuInfo& gpu : topo.gpus) {
    if (!gpu.pciBusId.empty()) gpuByBus[gpu.pciBusId] = gpu.index;
  }
  bool guessedSwitch = false;
  for (int g = 0; g < n; ++g) {
    for (int link = 0; link < kNvmlMaxNvLinks; ++link) {
      const NvmlApi::LinkState state = nvml.nvlinkState(g, link);
      if (state == NvmlApi::LinkState::kAbsent) continue;
      if (state == NvmlApi::LinkState::kUnknown) {
        counts.complete = false;
        continue;
      }
      if (state == NvmlApi::LinkState::kInactive) {
        // per-link hardware, not a topology fact; the GPU's count goes into its record below
        continue;
      }
      const NvmlApi::RemoteType type = nvml.nvlinkRemoteType(g, link);
      const std::optional<std::string> remote = nvml.nvlinkRemoteBusId(g, link);
      const auto peer = remote ? gpuByBus.find(sysfsBusId(*remote)) : gpuByBus.end();
      if (type == NvmlApi::RemoteType::kSwitch) {
        ++counts.toSwitch[g];
      } else if (peer != gpuByBus.end() &&
                 (type == NvmlApi::RemoteType::kGpu || type == NvmlApi::RemoteType::kUnknown)) {
        if (peer->second != g) ++counts.peer[g][peer->second];
      } else if (type == NvmlApi::RemoteType::kUnknown && remote) {
        // On x86 an NVLink ends at a GPU or an NVSwitch; a far end that is no GPU of ours is a
        // switch.
        ++counts.toSwitch[g];
        guessedSwitch = true;
      } else if (type == NvmlApi::RemoteType::kGpu) {
        warnings.push_back(fmt::format("GPU{} NVLink {} goes to GPU {} that NVML does not list", g,
                                       link, remote.value_or("?")));
      }
    }
  }
  if (guessedSwitch) {
    warnings.push_back("NVLink far ends of unknown type were counted as NVSwitch links");
  }
  return counts;
}

int countInactive(NvmlApi& nvml, int gpu) {
  int inactive = 0;
  for (int link = 0; link < kNvmlMaxNvLinks; ++link) {
    if (nvml.nvlinkState(gpu, link) == NvmlApi::LinkState::kInactive) ++inactive;
  }
  return inactive;
}

void addNics(GpuTopology& topo, const std::filesystem::path& sysfsRoot,
             const std::vector<std::optional<PciLocation>>& gpuLocations) {
  const std::vector<NicInfo> nics = scanNics(sysfsRoot);
  topo.nics = nics;
  topo.gpuNic.assign(topo.gpus.size(), std::vector<LinkKind>(nics.size(), LinkKind::kUnknown));
  for (std::size_t n = 0; n < nics.size(); ++n) {
    if (nics[n].pciBusId.empty()) continue;
    const std::optional<PciLocation> nicLocation = pciLocation(sysfsRoot, nics[n].pciBusId);
    if (!nicLocation) continue;
    for (std::size_t g = 0; g < topo.gpus.size(); ++g) {
      if (gpuLocations[g]) topo.gpuNic[g][n] = pciPath(*gpuLocations[g], *nicLocation);
    }
  }
}

// A node without NVML: no GPUs listed (a warning counts those on the PCI bus), NICs from sysfs.
GpuTopology withoutNvml(const std::string& nvmlError, const std::filesystem::path& sysfsRoot,
                        const std::vector<std::string>& warnings) {
  GpuTopology topo = makeTopology(0, 0);
  topo.sources = {Source::kSysfs};
  topo.warnings.push_back(
      fmt::format("NVML not available ({}): GPUs and NVLinks unknown, NICs from sysfs only", nvmlError));
  const std::vector<std::string> pciGpus = nvidiaPciGpus(sysfsRoot);
  if (!pciGpus.empty()) {
    topo.warnings.push_back(fmt::format(
        "{} NVIDIA GPU(s) on the PCI bus ({}) could not be queried without NVML: not listed", pciGpus.size(),
        fmt::join(pciGpus, ", ")));
  }
  topo.warnings.insert(topo.warnings.end(), warnings.begin(), warnings.end());
  addNics(topo, sysfsRoot, {});
  return topo;
}

// What joins GPUs a and b: NVLinks (direct, or both on NVSwitches), else the PCIe path NVML or
// sysfs gives; and whether they can read each other's memory.
Link gpuLink(NvmlApi& nvml, const NvLinkCounts& links, const std::vector<std::optional<PciLocation>>& locations,
             int a, int b) {
  Link link;
  int nvlinks = std::max(links.peer[a][b], links.peer[b][a]);
  if (links.toSwitch[a] > 0 && links.toSwitch[b] > 0) nvlinks += std::min(links.toSwitch[a], links.toSwitch[b]);
  if (nvlinks > 0) {
    link.kind = LinkKind::kNvLink;
    link.nvlinks = nvlinks;
  } else if (const std::optional<LinkKind> path = nvml.commonAncestor(a, b)) {
    link.kind = *path;
  } else if (locations[a] && locations[b]) {
    link.kind = pciPath(*locations[a], *locations[b]);
  }
  link.p2p = nvml.p2pRead(a, b);
  return link;
}

}  // namespace

GpuTopology discoverNode(NvmlApi* nvml, const std::string& nvmlError,
                         const std::filesystem::path& sysfsRoot) {
  std::error_code ec;
  const bool haveSysfs = std::filesystem::is_directory(sysfsRoot / "bus/pci/devices", ec) ||
                         std::filesystem::is_directory(sysfsRoot / "class/net", ec);
  std::vector<std::string> warnings;
  if (!haveSysfs) {
    warnings.push_back(
        fmt::format("no sysfs at {}: NICs, NUMA nodes and PCIe paths unknown", sysfsRoot.string()));
  }

  if (nvml == nullptr) return withoutNvml(nvmlError, sysfsRoot, warnings);

  const int n = nvml->deviceCount();
  GpuTopology topo = makeTopology(n, 0);
  topo.sources = {Source::kNvml, Source::kSysfs};
  for (const std::string& symbol : nvml->missingSymbols()) {
    warnings.push_back(fmt::format("NVML lacks {}: {}", symbol, missingMeaning(symbol)));
  }

  std::vector<std::optional<PciLocation>> locations(static_cast<std::size_t>(n));
  for (int g = 0; g < n; ++g) {
    GpuInfo& gpu = topo.gpus[g];
    if (const std::string why = nvml->deviceError(g); !why.empty()) {
      warnings.push_back(fmt::format("GPU{} cannot be queried: {}", g, why));
      continue;
    }
    gpu.name = nvml->name(g).value_or("");
    gpu.uuid = nvml->uuid(g).value_or("");
    gpu.pciBusId = sysfsBusId(nvml->pciBusId(g).value_or(""));
    gpu.memoryBytes = nvml->memoryBytes(g).value_or(0);
    gpu.nvlinksInactive = countInactive(*nvml, g);
    gpu.health = nvml->memoryHealth(g);
    if (gpu.pciBusId.empty()) continue;
    locations[g] = pciLocation(sysfsRoot, gpu.pciBusId);
    if (locations[g]) gpu.numaNode = locations[g]->numaNode;
    gpu.cpuAffinity = pciLocalCpus(sysfsRoot, gpu.pciBusId);
  }

  const NvLinkCounts links = countNvLinks(*nvml, topo, warnings);
  for (int a = 0; a < n; ++a) {
    for (int b = a + 1; b < n; ++b) {
      const Link link = gpuLink(*nvml, links, locations, a, b);
      topo.gpuLinks[a][b] = link;
      topo.gpuLinks[b][a] = link;
    }
  }
  const bool anySwitch = std::any_of(links.toSwitch.begin(), links.toSwitch.end(),
                                     [](int count) { return count > 0; });
  topo.nvswitch =
      anySwitch ? Tristate::kYes : (links.complete ? Tristate::kNo : Tristate::kUnknown);
  if (!links.complete) warnings.push_back("some NVLink states could not be read");

  addNics(topo, sysfsRoot, locations);
  topo.warnings.insert(topo.warnings.end(), warnings.begin(), warnings.end());
  return topo;
}

GpuTopology discoverLocalNode(const DiscoveryOptions& options) {
  NvmlLoad nvml = loadNvml(options.nvmlLibrary);
  GpuTopology topo = discoverNode(nvml.api.get(), nvml.error, options.sysfsRoot);
  std::array<char, 256> host{};
  if (gethostname(host.data(), host.size() - 1) == 0) topo.hostname = host.data();
  return topo;
}

}  // namespace fabricmap::topologies
