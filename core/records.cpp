// Small helpers of the record types.
#include "core/records.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

namespace fabricmap::core {

std::string_view name(LinkClass c) {
  static constexpr std::array<std::string_view, 6> kNames{"self", "nvswitch", "nvlink", "pcie",
                                                          "same_node_host", "inter_node"};
  return kNames[static_cast<std::size_t>(c)];
}

int NodeRecord::gpuLinkCount() const {
  int g = 0;
  while (static_cast<std::size_t>(g) * static_cast<std::size_t>(g) < gpuLinks.size()) ++g;
  return g;
}

Matrix nanMatrix(int n) {
  Matrix m;
  m.n = n;
  m.values.assign(static_cast<std::size_t>(n) * static_cast<std::size_t>(n),
                  std::numeric_limits<float>::quiet_NaN());
  return m;
}

Matrix sparseMatrix(int n) {
  Matrix m;
  m.n = n;
  m.sparse = true;
  return m;
}

LinkClass LinkClasses::at(int a, int b) const {
  if (!table.empty()) return table[static_cast<std::size_t>(a) * static_cast<std::size_t>(n) + static_cast<std::size_t>(b)];
  if (a == b) return LinkClass::kSelf;
  const int node = rankNode[static_cast<std::size_t>(a)];
  if (node != rankNode[static_cast<std::size_t>(b)]) return LinkClass::kInterNode;
  const int ga = rankGpu[static_cast<std::size_t>(a)];
  const int gb = rankGpu[static_cast<std::size_t>(b)];
  if (ga < 0 || gb < 0 || ga == gb) return LinkClass::kSameNodeHost;
  const auto g = static_cast<std::size_t>(nodeGpus[static_cast<std::size_t>(node)]);
  return gpuPairs[nodeBlock[static_cast<std::size_t>(node)] + static_cast<std::size_t>(ga) * g + static_cast<std::size_t>(gb)];
}

namespace {

// The class of a link between two GPUs of a node, from its `nvidia-smi topo -m` code.
LinkClass gpuLinkClass(const NodeRecord& node, const std::string& code) {
  if (code.starts_with("NV")) return node.nvswitch == "yes" ? LinkClass::kNvswitch : LinkClass::kNvlink;
  if (code == "PIX" || code == "PXB" || code == "PHB" || code == "NODE" || code == "SYS") return LinkClass::kPcie;
  return LinkClass::kSameNodeHost;
}

}  // namespace

LinkClasses linkClassesOf(const Topology& topology) {
  LinkClasses c;
  c.n = static_cast<int>(topology.ranks.size());
  for (const NodeRecord& node : topology.nodes) {
    const int g = node.gpuLinkCount();
    c.nodeGpus.push_back(g);
    c.nodeBlock.push_back(c.gpuPairs.size());
    for (int i = 0; i < g * g; ++i) c.gpuPairs.push_back(gpuLinkClass(node, node.gpuLinks[static_cast<std::size_t>(i)]));
  }
  for (const RankRecord& r : topology.ranks) {
    const bool valid = r.node >= 0 && r.node < static_cast<int>(topology.nodes.size());
    c.rankNode.push_back(valid ? r.node : -1 - r.rank);  // an unknown node is its own
    const int g = valid ? c.nodeGpus[static_cast<std::size_t>(r.node)] : 0;
    c.rankGpu.push_back(r.gpuIndex >= 0 && r.gpuIndex < g ? r.gpuIndex : -1);
  }
  return c;
}

double Expected::bandwidthBar(double threshold) const {
  constexpr double kLowestBar = 0.1;
  const double spread = std::isfinite(bandwidthSpread) ? bandwidthSpread : 0.0;
  const double bySpread = std::max(kLowestBar, std::min(threshold, 1.0 - 3.0 * spread));
  const double byGap = std::isfinite(bandwidthGapBar) ? std::min(threshold, bandwidthGapBar) : 0.0;
  return std::max(bySpread, byGap);
}

}  // namespace fabricmap::core
