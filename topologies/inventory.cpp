// The node inventory from sysfs (see inventory.h). Every read may fail: a value that cannot be
// read is unknown, and a whole class that cannot be listed is a note.
#include "topologies/inventory.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <set>
#include <system_error>

#include <fmt/format.h>

#include "topologies/sysfs.h"

namespace fabricmap::topologies {
namespace fs = std::filesystem;
namespace {

std::optional<std::uint64_t> readCounter(const fs::path& file) {
  const std::optional<std::string> text = readAttribute(file);
  if (!text) return std::nullopt;
  std::uint64_t value = 0;
  const char* end = text->data() + text->size();
  const auto [ptr, ec] = std::from_chars(text->data(), end, value);
  if (ec != std::errc() || ptr != end) return std::nullopt;
  return value;
}

NicPort readPort(const fs::path& device, const fs::path& port) {
  NicPort p;
  p.device = device.filename().string();
  p.port = portNumber(port);
  p.state = portStateName(readAttribute(port / "state").value_or(""));
  p.physState = portStateName(readAttribute(port / "phys_state").value_or(""));
  const std::string rate = readAttribute(port / "rate").value_or("");
  p.rateGbps = parseIbRate(rate).value_or(0);
  if (const auto parts = parseIbRateText(rate)) {
    p.width = parts->width;
    p.speed = parts->speed;
  }
  p.linkLayer = parseIbLinkLayer(readAttribute(port / "link_layer").value_or(""));
  p.pciBusId = pciFunctionOf(device / "device");
  p.numaNode = readInt(device / "device/numa_node", -1);
  const std::vector<fs::path> nets = sortedEntries(device / "device/net");
  if (!nets.empty()) p.netdev = nets.front().filename().string();
  for (std::string_view name : kInventoryCounters) {
    if (const auto value = readCounter(port / "counters" / std::string(name))) p.counters[std::string(name)] = *value;
  }
  return p;
}

void readRdma(const fs::path& root, Inventory& inv, std::set<std::string>& rdmaNetdevs) {
  for (const fs::path& dev : sortedEntries(root / "class/infiniband")) {
    std::vector<fs::path> ports = sortedEntries(dev / "ports");
    std::stable_sort(ports.begin(), ports.end(),
                     [](const fs::path& x, const fs::path& y) { return portNumber(x) < portNumber(y); });
    if (ports.empty()) inv.notes.push_back(fmt::format("{}: no ports readable", dev.filename().string()));
    for (const fs::path& port : ports) inv.ports.push_back(readPort(dev, port));
    for (const fs::path& net : sortedEntries(dev / "device/net")) rdmaNetdevs.insert(net.filename().string());
  }
}

void readEthernet(const fs::path& root, Inventory& inv, const std::set<std::string>& rdmaNetdevs) {
  for (const fs::path& dev : sortedEntries(root / "class/net")) {
    const std::string name = dev.filename().string();
    std::error_code ec;
    // virtual interfaces have no device; RDMA netdevs are their ports; IPoIB is type 32
    if (!fs::exists(dev / "device", ec) || rdmaNetdevs.count(name) > 0 || readInt(dev / "type", -1) == 32) continue;
    EthernetNic nic;
    nic.name = name;
    const int speedMbps = readInt(dev / "speed", -1);
    nic.rateGbps = speedMbps > 0 ? speedMbps / 1000.0 : 0.0;
    nic.state = readAttribute(dev / "operstate").value_or("");
    nic.pciBusId = pciFunctionOf(dev / "device");
    if (!nic.pciBusId.empty()) nic.numaNode = readInt(root / "bus/pci/devices" / nic.pciBusId / "numa_node", -1);
    inv.ethernet.push_back(std::move(nic));
  }
}

PcieLink readLink(const fs::path& root, const std::string& busId, const std::string& device, bool gpu) {
  const fs::path dir = root / "bus/pci/devices" / busId;
  PcieLink l;
  l.busId = busId;
  l.device = device;
  l.gpu = gpu;
  l.speedGTs = parsePcieSpeed(readAttribute(dir / "current_link_speed").value_or("")).value_or(0);
  l.maxSpeedGTs = parsePcieSpeed(readAttribute(dir / "max_link_speed").value_or("")).value_or(0);
  l.width = std::max(0, readInt(dir / "current_link_width", 0));
  l.maxWidth = std::max(0, readInt(dir / "max_link_width", 0));
  l.numaNode = readInt(dir / "numa_node", -1);
  l.localCpus = pciLocalCpus(root, busId);
  if (const auto location = pciLocation(root, busId); location && location->chain.size() >= 2) {
    const fs::path slot = root / "bus/pci/devices" / location->chain[location->chain.size() - 2];
    l.slotMaxSpeedGTs = parsePcieSpeed(readAttribute(slot / "max_link_speed").value_or("")).value_or(0);
    l.slotMaxWidth = std::max(0, readInt(slot / "max_link_width", 0));
  }
  return l;
}

void readPcie(const fs::path& root, Inventory& inv) {
  for (const std::string& gpu : nvidiaPciGpus(root)) inv.pcie.push_back(readLink(root, gpu, "GPU", true));
  inv.gpus = static_cast<int>(inv.pcie.size());
  std::set<std::string> seen;  // a dual-port NIC is one PCI function per port, or one for both
  for (const NicPort& p : inv.ports) {
    if (!p.pciBusId.empty() && seen.insert(p.pciBusId).second) inv.pcie.push_back(readLink(root, p.pciBusId, p.device, false));
  }
  for (const EthernetNic& e : inv.ethernet) {
    if (!e.pciBusId.empty() && seen.insert(e.pciBusId).second) inv.pcie.push_back(readLink(root, e.pciBusId, e.name, false));
  }
}

GpuDirect gpuDirectOf(const fs::path& root, const Inventory& inv) {
  std::error_code ec;
  if (inv.gpus == 0) return {Tristate::kUnknown, "no GPU"};
  if (inv.ports.empty()) return {Tristate::kUnknown, "no RDMA NIC"};
  if (fs::exists(root / "module/nvidia_peermem", ec)) return {Tristate::kYes, "nvidia_peermem loaded"};
  if (fs::exists(root / "module/nv_peer_mem", ec)) return {Tristate::kYes, "nv_peer_mem loaded"};
  return {Tristate::kNo,
          "no peer-memory module (nvidia_peermem, nv_peer_mem) loaded; dma-buf, which NCCL can use instead with the "
          "open GPU kernel modules, needs the CUDA driver to confirm"};
}

}  // namespace

std::string portStateName(std::string_view text) {
  const std::size_t colon = text.find(':');
  if (colon != std::string_view::npos) text.remove_prefix(colon + 1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front())) != 0) text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())) != 0) text.remove_suffix(1);
  return std::string(text);
}

std::optional<IbRateText> parseIbRateText(std::string_view text) {
  const std::size_t open = text.find('(');
  const std::size_t close = text.find(')', open == std::string_view::npos ? 0 : open);
  if (open == std::string_view::npos || close == std::string_view::npos) return std::nullopt;
  const std::string_view inside = text.substr(open + 1, close - open - 1);
  IbRateText out;
  const auto [ptr, ec] = std::from_chars(inside.data(), inside.data() + inside.size(), out.width);
  if (ec != std::errc() || out.width <= 0 || ptr == inside.data() + inside.size() || (*ptr != 'X' && *ptr != 'x')) {
    return std::nullopt;
  }
  std::string_view speed = inside.substr(static_cast<std::size_t>(ptr - inside.data()) + 1);
  while (!speed.empty() && speed.front() == ' ') speed.remove_prefix(1);
  out.speed = std::string(speed);
  return out;
}

std::optional<double> parsePcieSpeed(std::string_view text) {
  double value = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr == text.data() || !(value > 0) || !std::isfinite(value)) return std::nullopt;
  return value;
}

Inventory readInventory(const fs::path& sysfsRoot) {
  Inventory inv;
  std::error_code ec;
  if (!fs::is_directory(sysfsRoot / "class", ec)) inv.notes.push_back(fmt::format("{}: no sysfs here", sysfsRoot.string()));
  std::set<std::string> rdmaNetdevs;
  readRdma(sysfsRoot, inv, rdmaNetdevs);
  readEthernet(sysfsRoot, inv, rdmaNetdevs);
  readPcie(sysfsRoot, inv);
  inv.gpuDirect = gpuDirectOf(sysfsRoot, inv);
  return inv;
}

std::vector<CounterGrowth> counterGrowth(const Inventory& before, const Inventory& after) {
  std::vector<CounterGrowth> out;
  for (const NicPort& a : after.ports) {
    const auto b = std::find_if(before.ports.begin(), before.ports.end(),
                                [&](const NicPort& x) { return x.device == a.device && x.port == a.port; });
    if (b == before.ports.end()) continue;
    for (const auto& [name, value] : a.counters) {
      const auto was = b->counters.find(name);
      if (was == b->counters.end() || value == was->second) continue;
      // a counter that went down was reset (or wrapped): all of its value is new
      out.push_back({a.device, a.port, name, value > was->second ? value - was->second : value});
    }
  }
  return out;
}

}  // namespace fabricmap::topologies
