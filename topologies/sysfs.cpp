// sysfs readers (see sysfs.h). Every read may fail (containers hide parts of /sys, devices vanish):
// a missing attribute is an unknown value, never an error.
#include "topologies/sysfs.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <fstream>
#include <set>
#include <system_error>

namespace fabricmap::topologies {
namespace fs = std::filesystem;
namespace {

bool isHex(char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; }

// dddd:bb:dd.f (the domain may be longer, as behind Intel VMD)
bool isBusId(std::string_view s) {
  const std::size_t colon = s.find(':');
  if (colon == std::string_view::npos || colon < 4) return false;
  const std::string_view rest = s.substr(colon);
  if (rest.size() != 8 || rest[0] != ':' || rest[3] != ':' || rest[6] != '.') return false;
  return std::all_of(s.begin(), s.begin() + static_cast<long>(colon), isHex) && isHex(rest[1]) &&
         isHex(rest[2]) && isHex(rest[4]) && isHex(rest[5]) && isHex(rest[7]);
}

}  // namespace

std::vector<fs::path> sortedEntries(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

int readInt(const fs::path& file, int fallback) {
  const std::optional<std::string> text = readAttribute(file);
  if (!text) return fallback;
  int value = fallback;
  const char* end = text->data() + text->size();
  const auto [ptr, ec] = std::from_chars(text->data(), end, value);
  return ec == std::errc() && ptr == end ? value : fallback;
}

// The PCI function a class device (/class/net/X/device, /class/infiniband/Y/device) belongs to;
// virtio and similar buses put one more level between the two.
std::string pciFunctionOf(const fs::path& deviceLink) {
  std::error_code ec;
  const fs::path target = fs::canonical(deviceLink, ec);
  if (ec) return {};
  if (isBusId(target.filename().string())) return target.filename().string();
  if (isBusId(target.parent_path().filename().string()))
    return target.parent_path().filename().string();
  return {};
}

int portNumber(const fs::path& port) {
  const std::string name = port.filename().string();
  int value = 0;
  const auto [ptr, ec] = std::from_chars(name.data(), name.data() + name.size(), value);
  return ec == std::errc() ? value : 0;
}

std::string sysfsBusId(std::string_view busId) {
  std::string id(busId);
  std::transform(id.begin(), id.end(), id.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  std::size_t colon = id.find(':');
  while (colon != std::string::npos && colon > 4 && id[0] == '0') {
    id.erase(0, 1);
    --colon;
  }
  return id;
}

std::optional<std::string> readAttribute(const fs::path& file) {
  std::ifstream in(file);
  std::string line;
  if (!in || !std::getline(in, line)) return std::nullopt;
  const auto notSpace = [](unsigned char c) { return !std::isspace(c); };
  line.erase(line.begin(), std::find_if(line.begin(), line.end(), notSpace));
  line.erase(std::find_if(line.rbegin(), line.rend(), notSpace).base(), line.end());
  return line;
}

std::optional<PciLocation> pciLocation(const fs::path& sysfsRoot, const std::string& busId) {
  std::error_code ec;
  const fs::path link = sysfsRoot / "bus/pci/devices" / busId;
  const fs::path device = fs::canonical(link, ec);
  if (ec) return std::nullopt;
  // Only the part below the root counts, so a fake root's own name cannot look like a bus.
  const fs::path root = fs::canonical(sysfsRoot, ec);
  const fs::path relative = ec ? device : device.lexically_relative(root);
  PciLocation location;
  for (const fs::path& part : relative) {
    const std::string name = part.string();
    if (name.rfind("pci", 0) == 0 && name.find(':') != std::string::npos) {
      location.rootComplex = name;
      location.chain.clear();
    } else if (isBusId(name)) {
      location.chain.push_back(name);
    }
  }
  if (location.chain.empty()) return std::nullopt;
  location.numaNode = readInt(device / "numa_node", -1);
  return location;
}

LinkKind pciPath(const PciLocation& a, const PciLocation& b) {
  if (a.rootComplex != b.rootComplex) {
    const bool otherNuma = a.numaNode >= 0 && b.numaNode >= 0 && a.numaNode != b.numaNode;
    return otherNuma ? LinkKind::kSys : LinkKind::kNode;
  }
  // the bridges above each device, root port first
  const std::size_t bridgesA = a.chain.size() - 1;
  const std::size_t bridgesB = b.chain.size() - 1;
  std::size_t shared = 0;
  while (shared < bridgesA && shared < bridgesB && a.chain[shared] == b.chain[shared]) ++shared;
  if (shared == 0) return LinkKind::kPhb;
  const std::size_t below = std::max(bridgesA - shared, bridgesB - shared);
  return below <= 1 ? LinkKind::kPix : LinkKind::kPxb;
}

std::string pciLocalCpus(const fs::path& sysfsRoot, const std::string& busId) {
  return readAttribute(sysfsRoot / "bus/pci/devices" / busId / "local_cpulist").value_or("");
}

std::optional<double> parseIbRate(std::string_view text) {
  double value = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr == text.data() || !(value >= 0) || !std::isfinite(value)) return std::nullopt;
  return value;
}

LinkLayer parseIbLinkLayer(std::string_view text) {
  if (text == "InfiniBand") return LinkLayer::kInfiniBand;
  if (text == "Ethernet") return LinkLayer::kRoce;
  return LinkLayer::kUnknown;
}

std::vector<NicInfo> scanNics(const fs::path& sysfsRoot) {
  std::vector<NicInfo> nics;
  std::set<std::string> rdmaNetdevs;
  for (const fs::path& dev : sortedEntries(sysfsRoot / "class/infiniband")) {
    NicInfo nic;
    nic.name = dev.filename().string();
    nic.rdma = true;
    nic.pciBusId = pciFunctionOf(dev / "device");
    nic.numaNode = readInt(dev / "device/numa_node", -1);
    for (const fs::path& net : sortedEntries(dev / "device/net")) {
      rdmaNetdevs.insert(net.filename().string());
      if (nic.netdev.empty()) nic.netdev = net.filename().string();
    }
    // ports/1, ports/2, ...: the first active port speaks for the device, else the first port
    std::vector<fs::path> ports = sortedEntries(dev / "ports");
    std::stable_sort(ports.begin(), ports.end(), [](const fs::path& x, const fs::path& y) {
      return portNumber(x) < portNumber(y);  // numerically: port 10 after port 9
    });
    const auto active = std::find_if(ports.begin(), ports.end(), [](const fs::path& p) {
      return readAttribute(p / "state").value_or("").find("ACTIVE") != std::string::npos;
    });
    if (!ports.empty()) {
      const fs::path port = active != ports.end() ? *active : ports.front();
      nic.rateGbps = parseIbRate(readAttribute(port / "rate").value_or("")).value_or(0);
      nic.linkLayer = parseIbLinkLayer(readAttribute(port / "link_layer").value_or(""));
      const std::string state = readAttribute(port / "state").value_or("");
      const std::size_t colon = state.find(':');
      nic.state = colon == std::string::npos ? state : state.substr(colon + 1);
      nic.state.erase(0, nic.state.find_first_not_of(' '));
    }
    nics.push_back(nic);
  }
  for (const fs::path& dev : sortedEntries(sysfsRoot / "class/net")) {
    NicInfo nic;
    nic.name = dev.filename().string();
    std::error_code ec;
    // virtual interfaces (lo, bridges, veth, bonds) have no device; RDMA netdevs are listed above
    if (!fs::exists(dev / "device", ec) || rdmaNetdevs.count(nic.name)) continue;
    const int type = readInt(dev / "type", -1);
    if (type == 32) continue;  // ARPHRD_INFINIBAND: IPoIB over an RDMA device listed above
    if (type == 1) nic.linkLayer = LinkLayer::kEthernet;  // ARPHRD_ETHER
    const int speedMbps = readInt(dev / "speed", -1);
    if (speedMbps > 0) nic.rateGbps = speedMbps / 1000.0;
    nic.state = readAttribute(dev / "operstate").value_or("");
    nic.pciBusId = pciFunctionOf(dev / "device");
    if (!nic.pciBusId.empty()) {
      nic.numaNode = readInt(sysfsRoot / "bus/pci/devices" / nic.pciBusId / "numa_node", -1);
    }
    nics.push_back(nic);
  }
  return nics;
}

std::vector<std::string> nvidiaPciGpus(const fs::path& sysfsRoot) {
  std::vector<std::string> gpus;
  for (const fs::path& dev : sortedEntries(sysfsRoot / "bus/pci/devices")) {
    const std::string vendor = readAttribute(dev / "vendor").value_or("");
    const std::string cls = readAttribute(dev / "class").value_or("");
    if (vendor == "0x10de" && cls.rfind("0x03", 0) == 0) gpus.push_back(dev.filename().string());
  }
  return gpus;
}

}  // namespace fabricmap::topologies
