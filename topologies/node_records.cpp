// Node descriptions into run records (see node_records.h).
#include "topologies/node_records.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "topologies/topology_json.h"

namespace fabricmap::topologies {
namespace {

std::string textOr(const nlohmann::json& j, const char* key, std::string fallback = "") {
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : fallback;
}

int intOr(const nlohmann::json& j, const char* key, int fallback = -1) {
  const auto it = j.find(key);
  return it != j.end() && it->is_number_integer() ? it->get<int>() : fallback;
}

// true/false/"unknown" (topology_json's tristate) -> "yes"/"no"/"unknown"
std::string tristateText(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_boolean()) return "unknown";
  return it->get<bool>() ? "yes" : "no";
}

}  // namespace

std::vector<core::GpuInventoryRecord> gpuInventoryRows(const nlohmann::json& description, int node) {
  std::vector<core::GpuInventoryRecord> out;
  const auto gpus = description.value("gpu_list", nlohmann::json::array());
  if (!gpus.is_array()) return out;
  for (const auto& gpu : gpus) {
    if (!gpu.is_object()) continue;
    core::GpuInventoryRecord r;
    r.node = node;
    r.index = intOr(gpu, "index");
    r.busId = normalizeBusId(textOr(gpu, "pci_bus_id"));
    r.name = textOr(gpu, "name");
    if (const auto m = gpu.find("memory_bytes"); m != gpu.end() && m->is_number_unsigned()) {
      r.memoryBytes = m->get<std::uint64_t>();
    }
    r.numaNode = intOr(gpu, "numa_node");
    r.nic = textOr(gpu, "nearest_nic");
    r.nicPath = textOr(gpu, "nic_path");
    const auto found = gpu.find("memory_health");
    const nlohmann::json h = found != gpu.end() && found->is_object() ? *found : nlohmann::json::object();
    r.ecc = tristateText(h, "ecc");
    r.eccPending = tristateText(h, "ecc_pending");
    r.retiredSingleBit = intOr(h, "retired_pages_single_bit");
    r.retiredDoubleBit = intOr(h, "retired_pages_double_bit");
    r.retirePending = tristateText(h, "retire_pending");
    r.remappedCorrectable = intOr(h, "remapped_rows_correctable");
    r.remappedUncorrectable = intOr(h, "remapped_rows_uncorrectable");
    r.remapPending = tristateText(h, "remap_pending");
    r.remapFailed = tristateText(h, "remap_failed");
    out.push_back(std::move(r));
  }
  return out;
}

nlohmann::ordered_json describeNode(const GpuTopology& topo, const Classification& classification) {
  return topologyToJson(topo, classification);
}

std::string normalizeBusId(std::string_view busId) {
  std::string id(busId);
  std::transform(id.begin(), id.end(), id.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  // NVML writes an 8-digit domain: keep the last 12 characters, "dddd:bb:dd.f"
  if (id.size() > 12) id = id.substr(id.size() - 12);
  return id;
}

void applyNodeDescription(core::Topology& topology, int node, const nlohmann::json& description,
                          const std::vector<std::string>& rankBusIds) {
  core::NodeRecord& rec = topology.nodes.at(static_cast<std::size_t>(node));
  const int discovered = description.value("gpus", 0);
  rec.topologyClass = textOr(description, "class", "UNCLASSIFIED");
  for (core::GpuInventoryRecord& g : gpuInventoryRows(description, node)) topology.inventory.gpus.push_back(std::move(g));
  if (discovered == 0 && rec.gpus > 0) rec.topologyClass = "UNCLASSIFIED";
  if (discovered > 0) rec.gpus = discovered;
  const auto& nvswitch = description.value("nvswitch", nlohmann::json("unknown"));
  rec.nvswitch = nvswitch.is_boolean() ? (nvswitch.get<bool>() ? "yes" : "no") : "unknown";

  std::vector<std::string> warnings;
  for (const auto& w : description.value("warnings", nlohmann::json::array())) {
    if (w.is_string()) warnings.push_back(w.get<std::string>());
  }
  rec.topologyWarnings = fmt::format("{}", fmt::join(warnings, "; "));

  std::vector<std::string> nics;
  for (const auto& nic : description.value("nics", nlohmann::json::array())) {
    std::string text = textOr(nic, "name");
    if (nic.contains("rate_gbps") && nic["rate_gbps"].is_number()) {
      text += fmt::format(" {:g}G", nic["rate_gbps"].get<double>());
    }
    if (const std::string layer = textOr(nic, "link_layer"); !layer.empty()) text += " " + layer;
    nics.push_back(std::move(text));
  }
  rec.nics = fmt::format("{}", fmt::join(nics, ", "));

  // G x G link codes, the diagonal X
  const auto g = static_cast<std::size_t>(std::max(discovered, 0));
  rec.gpuLinks.assign(g * g, "?");
  for (std::size_t i = 0; i < g; ++i) rec.gpuLinks[i * g + i] = "X";
  for (const auto& p : description.value("pairs", nlohmann::json::array())) {
    const auto a = p.value("a", std::size_t{0});
    const auto b = p.value("b", std::size_t{0});
    if (a >= g || b >= g) continue;
    rec.gpuLinks[a * g + b] = rec.gpuLinks[b * g + a] = textOr(p, "code", "?");
  }

  // each rank of the node: the GPU its backend uses, by bus id
  const auto gpus = description.value("gpu_list", nlohmann::json::array());
  for (core::RankRecord& rank : topology.ranks) {
    if (rank.node != node) continue;
    const std::string bus = static_cast<std::size_t>(rank.rank) < rankBusIds.size()
                                ? normalizeBusId(rankBusIds[static_cast<std::size_t>(rank.rank)])
                                : "";
    if (bus.empty()) continue;
    for (const auto& gpu : gpus) {
      if (normalizeBusId(textOr(gpu, "pci_bus_id")) != bus) continue;
      rank.gpuIndex = gpu.value("index", -1);
      rank.gpuName = textOr(gpu, "name");
      rank.gpuUuid = textOr(gpu, "uuid");
      rank.gpuBusId = bus;
      if (gpu.contains("memory_bytes") && gpu["memory_bytes"].is_number()) {
        rank.gpuMemoryBytes = gpu["memory_bytes"].get<std::uint64_t>();
      }
      rank.nic = textOr(gpu, "nearest_nic");
      rank.nicPath = textOr(gpu, "nic_path");
      break;
    }
  }
}

}  // namespace fabricmap::topologies
