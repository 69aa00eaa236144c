// Matrix building (see matrices.h).
#include "orchestrator/analysis/matrices.h"

#include <algorithm>
#include <cmath>
#include <map>
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
double median(float* first, float* last, bool higherIsBetter) {
  if (first == last) return std::nan("");
  const auto size = static_cast<std::size_t>(last - first);
  float* k = first + (higherIsBetter ? size / 2 : (size - 1) / 2);
  std::nth_element(first, k, last);
  return *k;
}
double median(std::vector<float>& v, bool higherIsBetter) {
  return median(v.data(), v.data() + v.size(), higherIsBetter);
}

}  // namespace

MatrixBuilder::MatrixBuilder(const core::Topology& topology, const MatrixShape& shape)
    : topology_(topology) {
  const int ranks = static_cast<int>(topology.ranks.size());
  const int nodes = static_cast<int>(topology.nodes.size());
  m_.mode = shape.sparse ? "quick" : "full";
  m_.bytes = shape.bytes;
  m_.window = shape.window;
  m_.iters = shape.iters;
  m_.latencyIters = shape.latencyIters;
  m_.latencyBytes = 8;
  // quick mode measures a few peers each: only those cells are kept
  const auto matrix = shape.sparse ? core::sparseMatrix : core::nanMatrix;
  m_.rankUnidir = matrix(ranks);
  m_.rankBidir = matrix(ranks);
  m_.rankLatency = matrix(ranks);

  m_.nodeBw = matrix(nodes);
  m_.nodeLatency = matrix(nodes);
  m_.rankCv = matrix(ranks);
  m_.nodeCv = matrix(nodes);
}

void MatrixBuilder::add(const core::PairRecord& s) {
  const bool node = s.level == "node";
  core::Matrix& bw = node ? m_.nodeBw : m_.rankUnidir;
  core::Matrix& bwWorst = node ? m_.nodeBwWorst : m_.rankUnidirWorst;
  core::Matrix& lat = node ? m_.nodeLatency : m_.rankLatency;
  core::Matrix& latWorst = node ? m_.nodeLatencyWorst : m_.rankLatencyWorst;
  // Worst samples matter only once a pair is measured again: the first retest starts them as
  // copies of the first measurements (R x R floats each, kept only when needed).
  core::Matrix& typical = node ? typicalNode_ : typicalRank_;
  if (s.sample > 0 && bwWorst.n == 0) {
    bwWorst = bw;
    latWorst = lat;
  }
  if (s.sample > 0 && typical.n == 0) typical = bw;
  if (typical.n > 0) {  // before keep() moves the best and worst on
    keepTypical(typical, bw, bwWorst, s.sample, s.a, s.b, s.bwAB);
    keepTypical(typical, bw, bwWorst, s.sample, s.b, s.a, s.bwBA);
  }
  if (bw.sparse) {  // both directions of a measured pair are cells, even one without a figure
    for (core::Matrix* x : {&bw, &lat}) {
      x->at(s.a, s.b);
      x->at(s.b, s.a);
    }
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
    const auto matrix = m_.rankUnidir.sparse ? core::sparseMatrix : core::nanMatrix;
    m_.rankCopyUnidir = matrix(ranks);
    m_.rankCopyBidir = matrix(ranks);
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

core::Matrices MatrixBuilder::baselines() const {
  core::Matrices m;
  m.expectedFixed = m_.expectedFixed;
  m.classExpected = m_.classExpected;
  m.classExpectedFrom = m_.classExpectedFrom;
  m.nodeExpected = m_.nodeExpected;
  return m;
}

core::Matrices MatrixBuilder::buildTypical() const {
  core::Matrices m = m_;
  if (typicalRank_.n > 0) m.rankUnidir = typicalRank_;
  if (typicalNode_.n > 0) m.nodeBw = typicalNode_;
  completeMatrices(m, topology_);
  return m;
}

void MatrixBuilder::keepTypical(core::Matrix& typical, const core::Matrix& best, const core::Matrix& worst,
                                int sample, int row, int col, double value) {
  if (!(value > 0) || !std::isfinite(value)) return;
  const auto v = static_cast<float>(value);
  float& t = typical.at(row, col);
  const float b = best.at(row, col);
  const float w = worst.n > 0 ? worst.at(row, col) : b;
  if (std::isnan(t) || std::isnan(b)) {
    t = v;
  } else if (sample <= 1) {
    t = std::max(b, v);  // two samples: the better
  } else {
    t = std::clamp(v, std::min(w, b), b);  // the middle of the three
  }
}

namespace {

// Per rank, the median of everything it sent or received: exact for sparse matrices and up to
// kPeerSample ranks; beyond that over every stride-th peer (both ways), which keeps 8,192 ranks'
// medians to a quarter of the work. Dense matrices are read in blocks of ranks, so that the
// columns (what the block received) come from contiguous row slices.
constexpr int kPeerSample = 2048;

std::vector<float> peerMedians(const core::Matrix& bw) {
  const int n = bw.n;
  std::vector<float> out(static_cast<std::size_t>(n), std::nanf(""));
  std::vector<std::vector<float>> values;
  if (bw.sparse) {
    values.resize(static_cast<std::size_t>(n));
    bw.forEachCell([&](int a, int b, float v) {
      values[static_cast<std::size_t>(a)].push_back(v);
      values[static_cast<std::size_t>(b)].push_back(v);
    });
    for (int r = 0; r < n; ++r) out[static_cast<std::size_t>(r)] = static_cast<float>(median(values[static_cast<std::size_t>(r)], true));
    return out;
  }
  const int stride = std::max(1, (n + kPeerSample - 1) / kPeerSample);
  constexpr int kBlock = 256;
  values.resize(static_cast<std::size_t>(std::min(n, kBlock)));
  for (auto& v : values) v.reserve(2 * static_cast<std::size_t>(n / stride + 1));
  for (int first = 0; first < n; first += kBlock) {
    const int last = std::min(n, first + kBlock);
    for (auto& v : values) v.clear();
    const auto slot = [&](int r) -> std::vector<float>& { return values[static_cast<std::size_t>(r - first)]; };
    for (int r = first; r < last; ++r) {
      const float* row = bw.values.data() + bw.index(r, 0);
      for (int q = 0; q < n; q += stride) {
        if (std::isfinite(row[q])) slot(r).push_back(row[q]);
      }
    }
    for (int q = 0; q < n; q += stride) {
      const float* row = bw.values.data() + bw.index(q, first);
      for (int r = first; r < last; ++r) {
        if (std::isfinite(row[r - first])) slot(r).push_back(row[r - first]);
      }
    }
    for (int r = first; r < last; ++r) out[static_cast<std::size_t>(r)] = static_cast<float>(median(slot(r), true));
  }
  return out;
}

// The node matrix derived from a rank matrix: each node pair's figure is the median of its rank
// pairs (of an even count, the better middle value). Sparse stays sparse.
core::Matrix deriveNodes(const core::Matrix& from, const std::vector<std::vector<int>>& ranksOf,
                         const std::vector<int>& nodeOf, bool higherIsBetter) {
  const int nodes = static_cast<int>(ranksOf.size());
  if (!from.sparse) {
    core::Matrix to = core::nanMatrix(nodes);
    std::size_t largest = 0;
    for (const auto& r : ranksOf) largest = std::max(largest, r.size());
    std::vector<float> values(largest * largest);
    for (int x = 0; x < nodes; ++x) {
      for (int y = 0; y < nodes; ++y) {
        if (x == y) continue;
        float* end = values.data();
        for (int a : ranksOf[static_cast<std::size_t>(x)]) {
          const float* row = from.values.data() + from.index(a, 0);
          for (int b : ranksOf[static_cast<std::size_t>(y)]) {
            if (std::isfinite(row[b])) *end++ = row[b];
          }
        }
        to.at(x, y) = static_cast<float>(median(values.data(), end, higherIsBetter));
      }
    }
    return to;
  }
  core::Matrix to = core::sparseMatrix(nodes);
  std::map<std::pair<int, int>, std::vector<float>> byPair;
  from.forEachCell([&](int a, int b, float v) {
    const int x = nodeOf[static_cast<std::size_t>(a)];
    const int y = nodeOf[static_cast<std::size_t>(b)];
    if (x != y) byPair[{x, y}].push_back(v);
  });
  for (auto& [pair, cells] : byPair) to.at(pair.first, pair.second) = static_cast<float>(median(cells, higherIsBetter));
  return to;
}

}  // namespace

void completeMatrices(core::Matrices& m, const core::Topology& topology) {
  m.rankLinkClass = core::linkClassesOf(topology);
  m.rankPeerMedian = peerMedians(m.rankUnidir);
  if (m.nodeMeasured) return;
  const int nodes = static_cast<int>(topology.nodes.size());
  std::vector<std::vector<int>> ranksOf(static_cast<std::size_t>(nodes));
  std::vector<int> nodeOf;
  for (const auto& r : topology.ranks) {
    ranksOf[static_cast<std::size_t>(r.node)].push_back(r.rank);
    nodeOf.push_back(r.node);
  }
  const auto derive = [&](const core::Matrix& from, core::Matrix& to, bool higherIsBetter) {
    // no worst samples: none derived either
    to = from.n == 0 ? core::Matrix{} : deriveNodes(from, ranksOf, nodeOf, higherIsBetter);
  };
  derive(m.rankUnidir, m.nodeBw, true);
  derive(m.rankUnidirWorst, m.nodeBwWorst, true);
  derive(m.rankLatency, m.nodeLatency, false);
  derive(m.rankLatencyWorst, m.nodeLatencyWorst, false);
  derive(m.rankCv, m.nodeCv, false);  // how noisy the rank pairs behind each node figure were
}

}  // namespace fabricmap::orchestrator
