// Reference GPU, PCIe and NIC figures (see specs.h). NVLink link counts and per-direction peaks of
// V100/A100/H100/H200/B200 and the PCIe and NIC figures are the facts in shared/REFERENCE.md; the
// other figures are the vendor's (NVIDIA) product datasheets, converted from the datasheets'
// bidirectional NVLink totals to one direction.
#include "topologies/specs.h"

#include <algorithm>
#include <cctype>
#include <string>

namespace fabricmap::topologies {
namespace {

struct Entry {
  std::vector<std::string_view> required;  // whole words the name must contain (upper case)
  std::vector<std::string_view> excluded;  // words it must not contain
  GpuSpec spec;
};

// First match wins, so specific variants (PCIe, NVL, 80GB) come before their family's default.
const std::vector<Entry>& table() {
  static const std::vector<Entry> entries = {
      // Volta: 6 NVLink2 links, 300 GB/s total (REFERENCE.md links; vendor datasheet bandwidth)
      {{"V100", "PCIE"}, {}, {"V100 PCIe", 0, 0, 0, 3, 900, false, 16}},
      {{"V100S"}, {}, {"V100S PCIe", 0, 0, 0, 3, 1134, false, 32}},
      {{"V100", "SXM3"}, {}, {"V100 SXM3", 2, 6, 150, 3, 981, false, 32}},
      {{"V100"}, {}, {"V100 SXM2", 2, 6, 150, 3, 900, false, 16}},
      // Ampere data center: A100 12 NVLink3 links, 300 GB/s one way (REFERENCE.md); PCIe cards
      // reach the same through three bridges to one partner (vendor datasheet)
      {{"A100", "PCIE", "80GB"}, {}, {"A100 PCIe 80GB", 3, 12, 300, 4, 1935, true, 80}},
      {{"A100", "PCIE"}, {}, {"A100 PCIe 40GB", 3, 12, 300, 4, 1555, true, 40}},
      {{"A100", "80GB"}, {}, {"A100 SXM 80GB", 3, 12, 300, 4, 2039, false, 80}},
      {{"A100"}, {}, {"A100 SXM 40GB", 3, 12, 300, 4, 1555, false, 40}},
      {{"A800"}, {"PCIE"}, {"A800 SXM", 3, 8, 200, 4, 2039, false, 80}},
      {{"A30"}, {}, {"A30", 3, 4, 100, 4, 933, true, 24}},
      {{"A40"}, {}, {"A40", 3, 4, 56.25, 4, 696, true, 48}},
      {{"A10"}, {}, {"A10", 0, 0, 0, 4, 600, false, 24}},
      {{"A10G"}, {}, {"A10G", 0, 0, 0, 4, 600, false, 24}},
      // Hopper: 18 NVLink4 links, 450 GB/s one way on SXM (REFERENCE.md); PCIe and NVL cards and
      // the export variants from the vendor datasheets
      {{"H100", "PCIE"}, {}, {"H100 PCIe", 4, 12, 300, 5, 2000, true, 80}},
      {{"H100", "NVL"}, {}, {"H100 NVL", 4, 12, 300, 5, 3938, true, 94}},
      {{"H100"}, {}, {"H100 SXM", 4, 18, 450, 5, 3350, false, 80}},
      {{"H800"}, {"PCIE"}, {"H800 SXM", 4, 8, 200, 5, 3350, false, 80}},
      {{"H20"}, {}, {"H20", 4, 18, 450, 5, 4000, false, 96}},
      {{"H200", "NVL"}, {}, {"H200 NVL", 4, 18, 450, 5, 4800, true, 141}},
      {{"H200"}, {}, {"H200 SXM", 4, 18, 450, 5, 4800, false, 141}},
      {{"GH200", "HBM3E"}, {}, {"GH200 144GB", 4, 18, 450, 0, 4900, false, 144}},
      {{"GH200"}, {}, {"GH200 96GB", 4, 18, 450, 0, 4000, false, 96}},
      // Blackwell: 18 NVLink5 links, 900 GB/s one way (REFERENCE.md); memory from the datasheets
      {{"GB200"}, {}, {"GB200", 5, 18, 900, 0, 8000, false, 186}},
      {{"B200"}, {}, {"B200", 5, 18, 900, 5, 8000, false, 180}},
      // Ada and Ampere PCIe cards without NVLink (vendor datasheets)
      {{"L40S"}, {}, {"L40S", 0, 0, 0, 4, 864, false, 48}},
      {{"L40"}, {}, {"L40", 0, 0, 0, 4, 864, false, 48}},
      {{"L4"}, {}, {"L4", 0, 0, 0, 4, 300, false, 24}},
      {{"T4"}, {}, {"T4", 0, 0, 0, 3, 320, false, 16}},
      // Workstation and consumer cards (vendor datasheets); RTX A-series and 3090 bridge pairs
      // with 4 NVLink3 links, 112.5 GB/s both ways
      {{"RTX", "PRO", "6000"}, {}, {"RTX PRO 6000 Blackwell", 0, 0, 0, 5, 1792, false, 96}},
      {{"RTX", "6000", "ADA"}, {}, {"RTX 6000 Ada", 0, 0, 0, 4, 960, false, 48}},
      {{"A6000"}, {}, {"RTX A6000", 3, 4, 56.25, 4, 768, true, 48}},
      {{"A5000"}, {}, {"RTX A5000", 3, 4, 56.25, 4, 768, true, 24}},
      {{"RTX", "5090"}, {}, {"RTX 5090", 0, 0, 0, 5, 1792, false, 32}},
      {{"RTX", "4090"}, {}, {"RTX 4090", 0, 0, 0, 4, 1008, false, 24}},
      {{"RTX", "3090", "TI"}, {}, {"RTX 3090 Ti", 3, 4, 56.25, 4, 1008, true, 24}},
      {{"RTX", "3090"}, {}, {"RTX 3090", 3, 4, 56.25, 4, 936, true, 24}},
  };
  return entries;
}

std::vector<std::string> words(std::string_view name) {
  std::vector<std::string> out;
  std::string word;
  for (const char c : name) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      word += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    } else if (!word.empty()) {
      out.push_back(word);
      word.clear();
    }
  }
  if (!word.empty()) out.push_back(word);
  return out;
}

}  // namespace

std::optional<GpuSpec> gpuSpecForName(std::string_view deviceName) {
  const std::vector<std::string> w = words(deviceName);
  const auto has = [&w](std::string_view word) {
    return std::find(w.begin(), w.end(), word) != w.end();
  };
  for (const Entry& e : table()) {
    if (std::all_of(e.required.begin(), e.required.end(), has) &&
        std::none_of(e.excluded.begin(), e.excluded.end(), has)) {
      return e.spec;
    }
  }
  return std::nullopt;
}

std::optional<std::uint64_t> gpuMemoryFromName(std::string_view deviceName) {
  const std::optional<GpuSpec> spec = gpuSpecForName(deviceName);
  if (!spec || spec->pcieGeneration == 0) return std::nullopt;  // unknown, or a superchip (NVLink-C2C host link)
  constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;
  // a word "<N>GB" names the variant ("A100-SXM4-40GB", "H100 80GB HBM3"); else the model's one size
  for (const std::string& w : words(deviceName)) {
    if (w.size() < 3 || w.size() > 6 || w.compare(w.size() - 2, 2, "GB") != 0) continue;
    const std::string digits = w.substr(0, w.size() - 2);
    if (!std::all_of(digits.begin(), digits.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
      continue;
    return static_cast<std::uint64_t>(std::stoul(digits)) * kGiB;
  }
  if (spec->memoryGB <= 0) return std::nullopt;
  return static_cast<std::uint64_t>(spec->memoryGB) * kGiB;
}

const std::vector<GpuSpec>& gpuSpecs() {
  static const std::vector<GpuSpec> specs = [] {
    std::vector<GpuSpec> out;
    for (const Entry& e : table()) out.push_back(e.spec);
    return out;
  }();
  return specs;
}

std::optional<double> pcieX16GBps(int generation) {
  // Gen3-5 as REFERENCE.md rounds them; each generation doubles (Gen1 2.5 GT/s 8b/10b = 4 GB/s x16,
  // Gen6 64 GT/s = 128 GB/s x16 per PCI-SIG)
  switch (generation) {
    case 1: return 4.0;
    case 2: return 8.0;
    case 3: return 16.0;
    case 4: return 32.0;
    case 5: return 64.0;
    case 6: return 128.0;
    default: return std::nullopt;
  }
}

double nicGBps(double rateGbps) { return rateGbps / 8.0; }

std::string_view infinibandRateName(double rateGbps) {
  if (rateGbps == 100) return "EDR";
  if (rateGbps == 200) return "HDR";
  if (rateGbps == 400) return "NDR";
  if (rateGbps == 800) return "XDR";
  return {};
}

}  // namespace fabricmap::topologies
