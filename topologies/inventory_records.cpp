// The node inventory as JSON and as results-file rows (see inventory_records.h).
#include "topologies/inventory_records.h"

#include <algorithm>

namespace fabricmap::topologies {
namespace {

using Json = nlohmann::ordered_json;

// The value under `key` when it has T's JSON type; else `fallback`.
template <class T>
T valueOr(const nlohmann::json& j, const char* key, T fallback) {
  if (!j.is_object() || !j.contains(key)) return fallback;
  const nlohmann::json& v = j[key];
  if constexpr (std::is_same_v<T, std::string>) {
    return v.is_string() ? v.get<std::string>() : fallback;
  } else if constexpr (std::is_same_v<T, bool>) {
    return v.is_boolean() ? v.get<bool>() : fallback;
  } else if constexpr (std::is_floating_point_v<T>) {
    return v.is_number() ? v.get<T>() : fallback;
  } else {
    if (!v.is_number_integer()) return fallback;
    if constexpr (std::is_unsigned_v<T>) {
      if (!v.is_number_unsigned()) return fallback;
    }
    return v.get<T>();
  }
}

const nlohmann::json& arrayAt(const nlohmann::json& j, const char* key) {
  static const nlohmann::json kEmpty = nlohmann::json::array();
  return j.is_object() && j.contains(key) && j[key].is_array() ? j[key] : kEmpty;
}

Json portJson(const NicPort& p) {
  Json counters = Json::object();
  for (const auto& [name, value] : p.counters) counters[name] = value;
  return {{"device", p.device},       {"port", p.port},         {"state", p.state},
          {"phys_state", p.physState}, {"rate_gbps", p.rateGbps}, {"width", p.width},
          {"speed", p.speed},         {"link_layer", linkLayerName(p.linkLayer)},
          {"netdev", p.netdev},       {"pci_bus_id", p.pciBusId}, {"numa_node", p.numaNode},
          {"counters", std::move(counters)}};
}

NicPort portOf(const nlohmann::json& j) {
  NicPort p;
  p.device = valueOr<std::string>(j, "device", "");
  p.port = valueOr(j, "port", 0);
  p.state = valueOr<std::string>(j, "state", "");
  p.physState = valueOr<std::string>(j, "phys_state", "");
  p.rateGbps = valueOr(j, "rate_gbps", 0.0);
  p.width = valueOr(j, "width", 0);
  p.speed = valueOr<std::string>(j, "speed", "");
  p.linkLayer = linkLayerOf(valueOr<std::string>(j, "link_layer", ""));
  p.netdev = valueOr<std::string>(j, "netdev", "");
  p.pciBusId = valueOr<std::string>(j, "pci_bus_id", "");
  p.numaNode = valueOr(j, "numa_node", -1);
  if (j.contains("counters") && j["counters"].is_object()) {
    for (const auto& [name, value] : j["counters"].items()) {
      if (value.is_number_unsigned()) p.counters[name] = value.get<std::uint64_t>();
    }
  }
  return p;
}

Json pcieJson(const PcieLink& l) {
  return {{"device", l.device},
          {"bus_id", l.busId},
          {"gpu", l.gpu},
          {"speed_gts", l.speedGTs},
          {"max_speed_gts", l.maxSpeedGTs},
          {"width", l.width},
          {"max_width", l.maxWidth},
          {"slot_max_speed_gts", l.slotMaxSpeedGTs},
          {"slot_max_width", l.slotMaxWidth},
          {"numa_node", l.numaNode},
          {"local_cpus", l.localCpus}};
}

PcieLink pcieOf(const nlohmann::json& j) {
  PcieLink l;
  l.device = valueOr<std::string>(j, "device", "");
  l.busId = valueOr<std::string>(j, "bus_id", "");
  l.gpu = valueOr(j, "gpu", false);
  l.speedGTs = valueOr(j, "speed_gts", 0.0);
  l.maxSpeedGTs = valueOr(j, "max_speed_gts", 0.0);
  l.width = valueOr(j, "width", 0);
  l.maxWidth = valueOr(j, "max_width", 0);
  l.slotMaxSpeedGTs = valueOr(j, "slot_max_speed_gts", 0.0);
  l.slotMaxWidth = valueOr(j, "slot_max_width", 0);
  l.numaNode = valueOr(j, "numa_node", -1);
  l.localCpus = valueOr<std::string>(j, "local_cpus", "");
  return l;
}

std::string joined(const std::vector<std::string>& parts) {
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : "; ") + p;
  return out;
}

}  // namespace

LinkLayer linkLayerOf(std::string_view name) {
  for (const LinkLayer l : {LinkLayer::kInfiniBand, LinkLayer::kRoce, LinkLayer::kEthernet}) {
    if (name == linkLayerName(l)) return l;
  }
  return LinkLayer::kUnknown;
}

Tristate tristateOf(std::string_view name) {
  if (name == tristateName(Tristate::kYes)) return Tristate::kYes;
  if (name == tristateName(Tristate::kNo)) return Tristate::kNo;
  return Tristate::kUnknown;
}

nlohmann::ordered_json inventoryJson(const Inventory& inv) {
  Json j;
  j["ports"] = Json::array();
  for (const NicPort& p : inv.ports) j["ports"].push_back(portJson(p));
  j["ethernet"] = Json::array();
  for (const EthernetNic& e : inv.ethernet) {
    j["ethernet"].push_back({{"name", e.name}, {"rate_gbps", e.rateGbps}, {"state", e.state},
                             {"pci_bus_id", e.pciBusId}, {"numa_node", e.numaNode}});
  }
  j["gpus"] = inv.gpus;
  j["pcie"] = Json::array();
  for (const PcieLink& l : inv.pcie) j["pcie"].push_back(pcieJson(l));
  j["gpudirect"] = {{"ready", tristateName(inv.gpuDirect.ready)}, {"how", inv.gpuDirect.how}};
  j["notes"] = inv.notes;
  return j;
}

Inventory fromInventoryJson(const nlohmann::json& j) {
  Inventory inv;
  for (const auto& p : arrayAt(j, "ports")) inv.ports.push_back(portOf(p));
  for (const auto& e : arrayAt(j, "ethernet")) {
    inv.ethernet.push_back({valueOr<std::string>(e, "name", ""), valueOr(e, "rate_gbps", 0.0),
                            valueOr<std::string>(e, "state", ""), valueOr<std::string>(e, "pci_bus_id", ""),
                            valueOr(e, "numa_node", -1)});
  }
  inv.gpus = valueOr(j, "gpus", 0);
  for (const auto& l : arrayAt(j, "pcie")) inv.pcie.push_back(pcieOf(l));
  if (j.is_object() && j.contains("gpudirect")) {
    inv.gpuDirect = {tristateOf(valueOr<std::string>(j["gpudirect"], "ready", "")),
                     valueOr<std::string>(j["gpudirect"], "how", "")};
  }
  for (const auto& n : arrayAt(j, "notes")) {
    if (n.is_string()) inv.notes.push_back(n.get<std::string>());
  }
  return inv;
}

core::InventoryRows inventoryRows(const Inventory& inv, int node) {
  core::InventoryRows rows;
  for (const NicPort& p : inv.ports) {
    rows.nics.push_back({node, p.device, p.port, "rdma", p.state, p.physState, p.rateGbps, p.width, p.speed,
                         std::string(linkLayerName(p.linkLayer)), p.netdev, p.pciBusId, p.numaNode});
    for (const auto& [name, value] : p.counters) rows.counters.push_back({node, p.device, p.port, name, value, value});
  }
  for (const EthernetNic& e : inv.ethernet) {
    rows.nics.push_back({node, e.name, 0, "ethernet", e.state, "", e.rateGbps, 0, "",
                         std::string(linkLayerName(LinkLayer::kEthernet)), e.name, e.pciBusId, e.numaNode});
  }
  for (const PcieLink& l : inv.pcie) {
    rows.pcie.push_back({node, l.device, l.busId, l.gpu, l.speedGTs, l.maxSpeedGTs, l.width, l.maxWidth,
                         l.slotMaxSpeedGTs, l.slotMaxWidth, l.numaNode, l.localCpus});
  }
  rows.nodes.push_back({node, inv.gpus, std::string(tristateName(inv.gpuDirect.ready)), inv.gpuDirect.how,
                        joined(inv.notes)});
  return rows;
}

Inventory inventoryOf(const core::InventoryRows& rows, int node) {
  Inventory inv;
  for (const core::NicRecord& n : rows.nics) {
    if (n.node != node) continue;
    if (n.kind == "ethernet") {
      inv.ethernet.push_back({n.device, n.rateGbps, n.state, n.pciBusId, n.numaNode});
      continue;
    }
    NicPort p;
    p.device = n.device;
    p.port = n.port;
    p.state = n.state;
    p.physState = n.physState;
    p.rateGbps = n.rateGbps;
    p.width = n.width;
    p.speed = n.speed;
    p.linkLayer = linkLayerOf(n.linkLayer);
    p.netdev = n.netdev;
    p.pciBusId = n.pciBusId;
    p.numaNode = n.numaNode;
    for (const core::CounterRecord& c : rows.counters) {
      if (c.node == node && c.device == p.device && c.port == p.port) p.counters[c.counter] = c.start;
    }
    inv.ports.push_back(std::move(p));
  }
  for (const core::PcieRecord& l : rows.pcie) {
    if (l.node != node) continue;
    inv.pcie.push_back({l.busId, l.device, l.gpu, l.speedGTs, l.maxSpeedGTs, l.width, l.maxWidth, l.slotMaxSpeedGTs,
                        l.slotMaxWidth, l.numaNode, l.localCpus});
  }
  const auto n = std::find_if(rows.nodes.begin(), rows.nodes.end(),
                              [&](const core::NodeInventoryRecord& r) { return r.node == node; });
  if (n != rows.nodes.end()) {
    inv.gpus = n->gpus;
    inv.gpuDirect = {tristateOf(n->gpuDirect), n->gpuDirectHow};
    if (!n->notes.empty()) inv.notes.push_back(n->notes);
  }
  return inv;
}

}  // namespace fabricmap::topologies
