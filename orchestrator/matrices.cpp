// Matrix building (see matrices.h).
#include "orchestrator/matrices.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace fabricmap::orchestrator {
namespace {

// Keeps the best and, where worst samples are kept, the worst sample of cell (row, col).
void keep(core::Matrix& best, core::Matrix& worst, int row, int col, double value, bool higherIsBetter) {
  if (!(value > 0) || !std::isfinite(value)) return;
  const auto v = static_cast<float>(value);
  float& b = best.at(row, col);
  if (std::isnan(b) || (higherIsBetter ? v > b : v < b)) b = v;
  if (worst.n == 0) return;
  float& w = worst.at(row, col);
  if (std::isnan(w) || (higherIsBetter ? v < w : v > w)) w = v;
}

void keepBest(float& cell, double value) {
  if (value > 0 && std::isfinite(value) && (std::isnan(cell) || value > cell)) {
    cell = static_cast<float>(value);
  }
}

// The median; of an even count, the middle value on the better side (the higher bandwidth, the
// lower latency): a node pair half of whose rank pairs are slow is then as good as its good ranks,
// and the slow ranks are named on their own instead of halving the node.
double median(std::vector<float>& v, bool higherIsBetter) {
  if (v.empty()) return std::nan("");
  const auto k = v.begin() + static_cast<long>(higherIsBetter ? v.size() / 2 : (v.size() - 1) / 2);
  std::nth_element(v.begin(), k, v.end());
  return *k;
}

}  // namespace

core::LinkClass linkClassOf(const core::Topology& topology, int a, int b) {
  if (a == b) return core::LinkClass::kSelf;
  const auto& ra = topology.ranks[static_cast<std::size_t>(a)];
  const auto& rb = topology.ranks[static_cast<std::size_t>(b)];
  if (ra.node != rb.node) return core::LinkClass::kInterNode;
  // Both ranks measure with GPUs of this node: the link between those GPUs. Otherwise (the mpi
  // backend, or GPUs discovery did not see) the transfer goes through host memory.
  const core::NodeRecord& node = topology.nodes[static_cast<std::size_t>(ra.node)];
  const int g = node.gpuLinkCount();
  if (ra.gpuIndex < 0 || rb.gpuIndex < 0 || ra.gpuIndex >= g || rb.gpuIndex >= g || ra.gpuIndex == rb.gpuIndex) {
    return core::LinkClass::kSameNodeHost;
  }
  const std::string& code =
      node.gpuLinks[static_cast<std::size_t>(ra.gpuIndex) * static_cast<std::size_t>(g) +
                    static_cast<std::size_t>(rb.gpuIndex)];
  if (code.starts_with("NV")) return node.nvswitch == "yes" ? core::LinkClass::kNvswitch : core::LinkClass::kNvlink;
  if (code == "PIX" || code == "PXB" || code == "PHB" || code == "NODE" || code == "SYS") return core::LinkClass::kPcie;
  return core::LinkClass::kSameNodeHost;
}

MatrixBuilder::MatrixBuilder(const core::Topology& topology, const RunConfig& config)
    : topology_(topology) {
  const int ranks = static_cast<int>(topology.ranks.size());
  const int nodes = static_cast<int>(topology.nodes.size());
  m_.mode = config.pairwiseMode == PairwiseMode::kFull ? "full" : "quick";
  m_.bytes = config.pairBytes;
  m_.window = config.pairWindow;
  m_.iters = config.pairIters;
  m_.latencyIters = config.latencyIters;
  m_.latencyBytes = 8;
  m_.rankUnidir = core::nanMatrix(ranks);
  m_.rankBidir = core::nanMatrix(ranks);
  m_.rankLatency = core::nanMatrix(ranks);

  m_.nodeBw = core::nanMatrix(nodes);
  m_.nodeLatency = core::nanMatrix(nodes);
  m_.rankCv = core::nanMatrix(ranks);
  m_.nodeCv = core::nanMatrix(nodes);
}

void MatrixBuilder::add(const core::PairRecord& s) {
  const bool node = s.level == "node";
  core::Matrix& bw = node ? m_.nodeBw : m_.rankUnidir;
  core::Matrix& bwWorst = node ? m_.nodeBwWorst : m_.rankUnidirWorst;
  core::Matrix& lat = node ? m_.nodeLatency : m_.rankLatency;
  core::Matrix& latWorst = node ? m_.nodeLatencyWorst : m_.rankLatencyWorst;
  // Worst samples matter only once a pair is measured again: the first retest starts them as
  // copies of the first measurements (R x R floats each, kept only when needed).
  if (s.sample > 0 && bwWorst.n == 0) {
    bwWorst = bw;
    latWorst = lat;
  }
  keep(bw, bwWorst, s.a, s.b, s.bwAB, true);
  keep(bw, bwWorst, s.b, s.a, s.bwBA, true);
  core::Matrix& cv = node ? m_.nodeCv : m_.rankCv;
  for (const auto& [x, y] : {std::pair{s.a, s.b}, std::pair{s.b, s.a}}) {
    float& cell = cv.at(x, y);
    if (s.sample > 0) {
      cell = 0;  // retested: whether the samples agree tells the noise now
    } else if (std::isfinite(s.cv) && !(cell <= static_cast<float>(s.cv))) {
      cell = static_cast<float>(s.cv);
    }
  }
  for (const auto& [x, y] : {std::pair{s.a, s.b}, std::pair{s.b, s.a}}) {
    keep(lat, latWorst, x, y, s.latencyUs, false);
  }
  m_.pairsMeasured = true;
  if (node) {
    m_.nodeMeasured = true;
  } else {
    keepBest(m_.rankBidir.at(s.a, s.b), s.bwBidir);
    keepBest(m_.rankBidir.at(s.b, s.a), s.bwBidir);
  }
}

void MatrixBuilder::add(const core::CopyRecord& c) {
  auto it = std::find_if(m_.copies.begin(), m_.copies.end(), [&](const auto& x) { return x.node == c.node; });
  if (it == m_.copies.end()) {
    core::CopyMatrices node;
    node.node = c.node;
    for (const auto& r : topology_.ranks) {
      if (r.node != c.node) continue;
      const auto local = static_cast<std::size_t>(r.localRank);
      if (node.ranks.size() <= local) {
        node.ranks.resize(local + 1, -1);
        node.gpus.resize(local + 1, -1);
      }
      node.ranks[local] = r.rank;
      node.gpus[local] = r.gpuIndex;
    }
    const int n = node.n();
    node.path.assign(static_cast<std::size_t>(n) * static_cast<std::size_t>(n), "");
    for (int i = 0; i < n; ++i) node.path[static_cast<std::size_t>(i * n + i)] = "self";
    m_.copies.push_back(std::move(node));
    std::sort(m_.copies.begin(), m_.copies.end(), [](const auto& x, const auto& y) { return x.node < y.node; });
    it = std::find_if(m_.copies.begin(), m_.copies.end(), [&](const auto& x) { return x.node == c.node; });
  }
  core::CopyMatrices& node = *it;
  const int n = node.n();
  if (c.a < 0 || c.b < 0 || c.a >= n || c.b >= n) return;
  auto method = std::find_if(node.methods.begin(), node.methods.end(), [&](const auto& x) { return x.method == c.method; });
  if (method == node.methods.end()) {
    node.methods.push_back({c.method, core::nanMatrix(n), core::nanMatrix(n), core::nanMatrix(n), core::nanMatrix(n)});
    method = node.methods.end() - 1;
  }
  node.path[static_cast<std::size_t>(c.a * n + c.b)] = c.path;
  node.path[static_cast<std::size_t>(c.b * n + c.a)] = c.path;
  keepBest(method->writeUnidir.at(c.a, c.b), c.writeAB);
  keepBest(method->writeUnidir.at(c.b, c.a), c.writeBA);
  keepBest(method->readUnidir.at(c.a, c.b), c.readAB);
  keepBest(method->readUnidir.at(c.b, c.a), c.readBA);
  for (const auto& [x, y] : {std::pair{c.a, c.b}, std::pair{c.b, c.a}}) {
    keepBest(method->writeBidir.at(x, y), c.writeBidir);
    keepBest(method->readBidir.at(x, y), c.readBidir);
  }
  // folded into the rank matrices: the best any method and direction reached
  if (m_.rankCopyUnidir.n == 0) {
    const int ranks = static_cast<int>(topology_.ranks.size());
    m_.rankCopyUnidir = core::nanMatrix(ranks);
    m_.rankCopyBidir = core::nanMatrix(ranks);
  }
  for (double v : {c.writeAB, c.readAB}) keepBest(m_.rankCopyUnidir.at(c.rankA, c.rankB), v);
  for (double v : {c.writeBA, c.readBA}) keepBest(m_.rankCopyUnidir.at(c.rankB, c.rankA), v);
  for (double v : {c.writeBidir, c.readBidir}) {
    keepBest(m_.rankCopyBidir.at(c.rankA, c.rankB), v);
    keepBest(m_.rankCopyBidir.at(c.rankB, c.rankA), v);
  }
  m_.copyBytes = c.bytes;
  m_.copyIters = c.iters;
}

void MatrixBuilder::fixExpected(const core::Matrices& withBaselines) {
  m_.expectedFixed = withBaselines.expectedFixed;
  m_.classExpected = withBaselines.classExpected;
  m_.classExpectedFrom = withBaselines.classExpectedFrom;
  m_.nodeExpected = withBaselines.nodeExpected;
}

core::Matrices MatrixBuilder::build() const {
  core::Matrices m = m_;
  completeMatrices(m, topology_);
  return m;
}

void completeMatrices(core::Matrices& m, const core::Topology& topology) {
  const int n = m.rankUnidir.n;
  m.rankLinkClass.resize(static_cast<std::size_t>(n) * static_cast<std::size_t>(n));
  for (int a = 0; a < n; ++a) {
    for (int b = 0; b < n; ++b) m.rankLinkClass[m.rankUnidir.index(a, b)] = linkClassOf(topology, a, b);
  }
  // per rank: median of everything it sent or received
  m.rankPeerMedian.assign(static_cast<std::size_t>(n), std::nanf(""));
  std::vector<float> values;
  for (int r = 0; r < n; ++r) {
    values.clear();
    for (int q = 0; q < n; ++q) {
      for (float v : {m.rankUnidir.at(r, q), m.rankUnidir.at(q, r)}) {
        if (!std::isnan(v)) values.push_back(v);
      }
    }
    m.rankPeerMedian[static_cast<std::size_t>(r)] = static_cast<float>(median(values, true));
  }
  if (m.nodeMeasured) return;
  const int nodes = static_cast<int>(topology.nodes.size());
  std::vector<std::vector<int>> ranksOf(static_cast<std::size_t>(nodes));
  for (const auto& r : topology.ranks) ranksOf[static_cast<std::size_t>(r.node)].push_back(r.rank);
  const auto derive = [&](const core::Matrix& from, core::Matrix& to, bool higherIsBetter) {
    if (from.n == 0) {
      to = core::Matrix{};  // no worst samples: none derived either
      return;
    }
    to = core::nanMatrix(nodes);
    for (int x = 0; x < nodes; ++x) {
      for (int y = 0; y < nodes; ++y) {
        if (x == y) continue;
        values.clear();
        for (int a : ranksOf[static_cast<std::size_t>(x)]) {
          for (int b : ranksOf[static_cast<std::size_t>(y)]) {
            if (!std::isnan(from.at(a, b))) values.push_back(from.at(a, b));
          }
        }
        to.at(x, y) = static_cast<float>(median(values, higherIsBetter));
      }
    }
  };
  derive(m.rankUnidir, m.nodeBw, true);
  derive(m.rankUnidirWorst, m.nodeBwWorst, true);
  derive(m.rankLatency, m.nodeLatency, false);
  derive(m.rankLatencyWorst, m.nodeLatencyWorst, false);
  derive(m.rankCv, m.nodeCv, false);  // how noisy the rank pairs behind each node figure were
}

}  // namespace fabricmap::orchestrator
