// The GPUs' and ranks' inventory rules: memory size and health, and where each rank may run
// (see inventory_rules.h).
#include <algorithm>
#include <cctype>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "core/units.h"
#include "orchestrator/analysis/inventory_rules.h"
#include "topologies/node_records.h"

namespace fabricmap::orchestrator {

using core::Finding;
using core::FindingKind;
using core::Severity;

namespace {

// A GPU's model without its memory size: "NVIDIA A100-SXM4-40GB" and "-80GB" are one model.
std::string modelOf(const std::string& name) {
  std::string out;
  for (std::size_t i = 0; i < name.size();) {
    std::size_t j = i;
    while (j < name.size() && std::isdigit(static_cast<unsigned char>(name[j])) != 0) ++j;
    if (j > i && name.compare(j, 2, "GB") == 0) {
      i = j + 2;
      continue;
    }
    out += name.substr(i, std::max<std::size_t>(j - i, 1));
    i = std::max(j, i + 1);
  }
  return out;
}

}  // namespace

std::vector<Finding> gpuMemoryFindings(const core::Topology& topology, double minimumGiB) {
  // every GPU once (ranks may share one), by model
  std::map<std::string, std::vector<const core::RankRecord*>> byModel;
  std::map<std::string, bool> seen;
  for (const core::RankRecord& r : topology.ranks) {
    if (r.gpuMemoryBytes == 0 || r.gpuName.empty()) continue;
    const std::string id = r.gpuUuid.empty() ? fmt::format("{}/{}", r.node, r.gpuIndex) : r.gpuUuid;
    if (seen.emplace(id, true).second) byModel[modelOf(r.gpuName)].push_back(&r);
  }
  constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
  std::vector<Finding> out;
  for (const auto& [model, gpus] : byModel) {
    std::uint64_t most = 0;
    for (const auto* g : gpus) most = std::max(most, g->gpuMemoryBytes);
    const auto full = std::count_if(gpus.begin(), gpus.end(), [&](const auto* g) { return g->gpuMemoryBytes == most; });
    for (const auto* g : gpus) {
      const double gib = static_cast<double>(g->gpuMemoryBytes) / kGiB;
      const bool belowOthers = static_cast<double>(g->gpuMemoryBytes) < 0.9 * static_cast<double>(most);
      const bool belowMinimum = minimumGiB > 0 && gib < minimumGiB;
      if (!belowOthers && !belowMinimum) continue;
      const std::string node = g->node < static_cast<int>(topology.nodes.size())
                                   ? topology.nodes[static_cast<std::size_t>(g->node)].name
                                   : g->hostname;
      Finding f = inventoryFinding(FindingKind::kGpuMemory, Severity::kWarning, {node, g->node}, fmt::format("GPU {}", g->gpuIndex));
      f.rank = g->rank;
      f.measured = gib;
      f.expected = belowMinimum ? minimumGiB : static_cast<double>(most) / kGiB;
      f.ratio = f.measured / f.expected;
      f.unit = "GiB";
      f.message = belowOthers ? fmt::format("{} ({}): {:.0f} GiB where {} of the run's {} GPUs of this model have {:.0f} GiB",
                                            f.subject, g->gpuName, gib, full, gpus.size(), f.expected)
                              : fmt::format("{} ({}): {:.0f} GiB, below the {:g} GiB asked for", f.subject, g->gpuName,
                                            gib, minimumGiB);
      out.push_back(std::move(f));
    }
  }
  return out;
}

namespace {

std::string nodeName(const core::Topology& topology, int node, const std::string& fallback) {
  return node >= 0 && node < static_cast<int>(topology.nodes.size()) ? topology.nodes[static_cast<std::size_t>(node)].name
                                                                      : fallback;
}

// One thing NVML says is wrong with a GPU's memory.
struct HealthIssue {
  Severity severity;
  std::string what;
};

std::string count(int n, const char* one, const char* many) { return fmt::format("{} {}", n, n == 1 ? one : many); }

// What is wrong with the GPU's memory, worst first; nothing where NVML could not say.
std::vector<HealthIssue> healthIssues(const core::GpuInventoryRecord& g) {
  std::vector<HealthIssue> out;
  if (g.remapFailed == "yes") {
    out.push_back({Severity::kError, "a memory row remap failed: a fault it cannot repair - replace the GPU"});
  }
  if (g.remapPending == "yes") {
    out.push_back({Severity::kWarning, "a memory row remap waits for a GPU reset - reset it before training"});
  }
  if (g.retirePending == "yes") {
    out.push_back({Severity::kWarning, "memory pages wait for a GPU reset to be retired - reset it before training"});
  }
  if (g.retiredDoubleBit > 0) {
    out.push_back({Severity::kWarning, count(g.retiredDoubleBit, "page", "pages") + " retired for double-bit ECC errors"});
  }
  if (g.ecc == "no") {
    out.push_back({Severity::kWarning, g.eccPending == "yes" ? "ECC is off until the next reset"
                                                             : "ECC is off: memory errors go undetected (nvidia-smi -e 1)"});
  }
  const int uncorrectable = std::max(g.remappedUncorrectable, 0);
  const int correctable = std::max(g.remappedCorrectable, 0);
  if (uncorrectable + correctable > 0) {
    out.push_back({Severity::kInfo, fmt::format("{} remapped ({} uncorrectable, {} correctable errors)",
                                                count(uncorrectable + correctable, "row", "rows"), uncorrectable,
                                                correctable)});
  }
  if (g.retiredSingleBit > 0) {
    out.push_back({Severity::kInfo, count(g.retiredSingleBit, "page", "pages") + " retired for single-bit ECC errors"});
  }
  // Severity orders worst first
  std::stable_sort(out.begin(), out.end(), [](const HealthIssue& a, const HealthIssue& b) { return a.severity < b.severity; });
  return out;
}

// A rank measuring with GPU `g`, or -1.
int rankOf(const core::Topology& topology, const core::GpuInventoryRecord& g) {
  for (const core::RankRecord& r : topology.ranks) {
    if (r.node == g.node && !r.gpuBusId.empty() && topologies::normalizeBusId(r.gpuBusId) == g.busId) return r.rank;
  }
  return -1;
}

}  // namespace

std::vector<Finding> gpuHealthFindings(const core::Topology& topology) {
  std::vector<Finding> out;
  for (const core::GpuInventoryRecord& g : topology.inventory.gpus) {
    const std::vector<HealthIssue> issues = healthIssues(g);
    if (issues.empty()) continue;
    const std::string node = nodeName(topology, g.node, "");
    Finding f = inventoryFinding(FindingKind::kGpuMemory, issues.front().severity, {node, g.node},
                                 fmt::format("GPU {}", g.index));
    f.rank = rankOf(topology, g);
    f.measured = std::max(g.remappedUncorrectable, 0) + std::max(g.retiredDoubleBit, 0);
    f.unit = "rows remapped or pages retired for uncorrectable errors";
    std::vector<std::string> parts;
    for (const HealthIssue& i : issues) parts.push_back(i.what);
    f.message = fmt::format("{} ({}{}): {}", f.subject, g.name.empty() ? "GPU" : g.name,
                            g.busId.empty() ? "" : ", " + g.busId, fmt::join(parts, "; "));
    out.push_back(std::move(f));
  }
  return out;
}

namespace {

// The PCIe record on node `node` of the GPU whose normalized bus id is `key`, or of the NIC named
// `key`; null when the inventory does not hold it.
const core::PcieRecord* pcieOf(const core::Topology& topology, int node, bool gpu, const std::string& key) {
  if (key.empty()) return nullptr;
  for (const core::PcieRecord& l : topology.inventory.pcie) {
    if (l.node != node || l.gpu != gpu) continue;
    if (gpu ? topologies::normalizeBusId(l.busId) == key : l.device == key) return &l;
  }
  return nullptr;
}

// How many of `allowed` (sorted) are in the cpulist `near`; nullopt when `near` is unknown.
std::optional<std::size_t> nearCount(const std::vector<int>& allowed, const std::string& near) {
  const auto cpus = core::parseRanks(near);
  if (!cpus || cpus->empty()) return std::nullopt;
  return static_cast<std::size_t>(std::count_if(allowed.begin(), allowed.end(), [&](int cpu) {
    return std::binary_search(cpus->begin(), cpus->end(), cpu);
  }));
}

std::string nearText(std::size_t near, std::size_t cpus) { return near == cpus ? "yes" : near == 0 ? "no" : "partly"; }

}  // namespace

std::vector<RankBinding> rankBindings(const core::Topology& topology) {
  std::vector<RankBinding> out;
  for (const core::RankRecord& r : topology.ranks) {
    const core::PcieRecord* gpu =
        pcieOf(topology, r.node, true, r.gpuBusId.empty() ? "" : topologies::normalizeBusId(r.gpuBusId));
    const auto allowed = core::parseRanks(r.cpus);
    if (gpu == nullptr || !allowed || allowed->empty()) continue;
    const auto near = nearCount(*allowed, gpu->localCpus);
    if (!near) continue;
    RankBinding b{&r, gpu, pcieOf(topology, r.node, false, r.nic), allowed->size(), *near, 0};
    const auto nearNic = b.nic != nullptr ? nearCount(*allowed, b.nic->localCpus) : std::nullopt;
    if (!nearNic) b.nic = nullptr;
    b.nearNic = nearNic.value_or(0);
    out.push_back(b);
  }
  return out;
}

void recordBindings(core::Topology& topology) {
  for (const RankBinding& b : rankBindings(topology)) {
    core::RankRecord& r = topology.ranks.at(static_cast<std::size_t>(b.rank - topology.ranks.data()));
    r.nearGpu = nearText(b.near, b.cpus);
    if (b.nic != nullptr) r.nearNic = nearText(b.nearNic, b.cpus);
  }
}

namespace {

std::string cpusOf(const core::PcieRecord& device) {
  return device.numaNode >= 0 ? fmt::format("{}, NUMA {}", device.localCpus, device.numaNode) : device.localCpus;
}

}  // namespace

std::vector<Finding> bindingFindings(const core::Topology& topology) {
  std::vector<Finding> out;
  for (const RankBinding& b : rankBindings(topology)) {
    const bool farFromNic = b.nic != nullptr && b.near > 0 && b.nearNic == 0;
    if (b.near == b.cpus && !farFromNic) continue;
    const core::RankRecord& r = *b.rank;
    Finding f = inventoryFinding(FindingKind::kBinding, b.near == 0 ? Severity::kWarning : Severity::kInfo,
                                 {nodeName(topology, r.node, r.hostname), r.node}, fmt::format("rank {}", r.rank));
    f.rank = r.rank;
    f.measured = static_cast<double>(b.near) / static_cast<double>(b.cpus);
    f.unit = "share of its CPUs near its GPU";
    const std::string nic = b.nic != nullptr ? fmt::format("; {} of them near its NIC {} ({})", b.nearNic,
                                                           b.nic->device, cpusOf(*b.nic))
                                             : "";
    const std::string advice =
        b.near == 0 ? "bind each rank to its GPU's NUMA node (srun --cpu-bind, mpirun --map-by numa --bind-to numa)"
        : b.near < b.cpus ? "not bound: the scheduler may move it to the far socket"
                          : "its GPU and NIC hang off different sockets: traffic staged in host memory crosses them";
    f.message = fmt::format("{}: may run on CPUs {} ({} of them near its GPU {}, whose CPUs are {}{}) - {}", f.subject,
                            r.cpus, b.near, b.gpu->busId, cpusOf(*b.gpu), nic, advice);
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace fabricmap::orchestrator
