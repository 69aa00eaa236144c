// GpuTopology + Classification -> JSON (see topology_json.h and README.md "JSON").
#include "topologies/topology_json.h"

#include "topologies/specs.h"

namespace fabricmap::topologies {
namespace {

using Json = nlohmann::ordered_json;

Json orNull(const std::string& value) { return value.empty() ? Json(nullptr) : Json(value); }
Json orNull(int value) { return value < 0 ? Json(nullptr) : Json(value); }

Json tristate(Tristate value) {
  if (value == Tristate::kUnknown) return "unknown";
  return value == Tristate::kYes;
}

Json memoryHealth(const GpuMemoryHealth& h) {
  return {{"ecc", tristate(h.ecc)},
          {"ecc_pending", tristate(h.eccPending)},
          {"retired_pages_single_bit", orNull(h.retiredSingleBit)},
          {"retired_pages_double_bit", orNull(h.retiredDoubleBit)},
          {"retire_pending", tristate(h.retirePending)},
          {"remapped_rows_correctable", orNull(h.remappedCorrectable)},
          {"remapped_rows_uncorrectable", orNull(h.remappedUncorrectable)},
          {"remap_pending", tristate(h.remapPending)},
          {"remap_failed", tristate(h.remapFailed)}};
}

Json nicName(const GpuTopology& topo, int nic) {
  return nic < 0 ? Json(nullptr) : Json(topo.nics[static_cast<std::size_t>(nic)].name);
}

Json pathName(const NearestNic& nic) {
  return nic.nic < 0 ? Json(nullptr) : Json(std::string(linkKindName(nic.path)));
}

}  // namespace

Json topologyToJson(const GpuTopology& topo, const Classification& c) {
  Json out;
  out["schema"] = kTopologyJsonSchema;
  out["source"] = sourcesName(topo.sources);
  out["hostname"] = orNull(topo.hostname);
  out["class"] = std::string(className(c.topologyClass));
  out["summary"] = c.summary;
  out["nvswitch"] = tristate(c.nvswitch);
  out["nvswitch_evidence"] = c.nvswitchEvidence;
  out["degraded"] = c.degraded;
  out["gpus"] = topo.gpuCount();

  Json gpus = Json::array();
  for (const GpuInfo& gpu : topo.gpus) {
    const NearestNic& near = c.nearestNics.at(static_cast<std::size_t>(gpu.index));
    const std::optional<GpuSpec> spec = gpu.name.empty() ? std::nullopt : gpuSpecForName(gpu.name);
    gpus.push_back({{"index", gpu.index},
                    {"name", orNull(gpu.name)},
                    {"model", spec ? Json(std::string(spec->model)) : Json(nullptr)},
                    {"uuid", orNull(gpu.uuid)},
                    {"pci_bus_id", orNull(gpu.pciBusId)},
                    {"memory_bytes", gpu.memoryBytes == 0 ? Json(nullptr) : Json(gpu.memoryBytes)},
                    {"numa_node", orNull(gpu.numaNode)},
                    {"gpu_numa_id", orNull(gpu.gpuNumaId)},
                    {"cpu_affinity", orNull(gpu.cpuAffinity)},
                    {"nvlinks_inactive", gpu.nvlinksInactive},
                    {"memory_health", memoryHealth(gpu.health)},
                    {"nearest_nic", nicName(topo, near.nic)},
                    {"nic_path", pathName(near)},
                    {"gpudirect_rdma", near.gpuDirect}});
  }
  out["gpu_list"] = gpus;

  Json pairs = Json::array();
  for (int a = 0; a < topo.gpuCount(); ++a) {
    for (int b = a + 1; b < topo.gpuCount(); ++b) {
      const Link& link = topo.gpuLinks[a][b];
      pairs.push_back({{"a", a},
                       {"b", b},
                       {"link", std::string(linkKindName(link.kind))},
                       {"nvlinks", link.nvlinks},
                       {"code", linkCode(link)},
                       {"p2p", tristate(link.p2p)}});
    }
  }
  out["pairs"] = pairs;

  Json nics = Json::array();
  for (const NicInfo& nic : topo.nics) {
    nics.push_back(
        {{"name", nic.name},
         {"label", orNull(nic.label)},
         {"netdev", orNull(nic.netdev)},
         {"pci_bus_id", orNull(nic.pciBusId)},
         {"rate_gbps", nic.rateGbps > 0 ? Json(nic.rateGbps) : Json(nullptr)},
         {"rate_gbytes_per_s", nic.rateGbps > 0 ? Json(nicGBps(nic.rateGbps)) : Json(nullptr)},
         {"link_layer", nic.linkLayer == LinkLayer::kUnknown
                            ? Json(nullptr)
                            : Json(std::string(linkLayerName(nic.linkLayer)))},
         {"state", orNull(nic.state)},
         {"numa_node", orNull(nic.numaNode)},
         {"rdma", nic.rdma}});
  }
  out["nics"] = nics;

  Json nearest = Json::array();
  for (const NearestNic& near : c.nearestNics) {
    nearest.push_back({{"gpu", near.gpu},
                       {"nic", nicName(topo, near.nic)},
                       {"path", pathName(near)},
                       {"gpudirect_rdma", near.gpuDirect}});
  }
  out["nearest_nics"] = nearest;
  out["nvlink_groups"] = c.nvlinkGroups;
  out["warnings"] = c.warnings;
  return out;
}

}  // namespace fabricmap::topologies
