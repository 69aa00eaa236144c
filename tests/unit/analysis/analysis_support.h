// Helpers of the analysis tests: a synthetic fabric measured pair by pair, and ways to look at
// the findings.
#pragma once

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "orchestrator/analysis/analysis.h"
#include "orchestrator/analysis/matrices.h"
#include "topologies/fabric_file.h"
#include "topologies/rank_map.h"

namespace fabricmap::orchestrator {

// A fabric of `nodes` x `perNode` ranks where every rank pair was measured once: inter-node pairs
// at 10 GB/s and 20 us, same-node pairs at 100 GB/s and 2 us, each with a deterministic +-2%
// jitter. `plant` changes cells before the node matrix is derived.
struct Fabric {
  core::Topology topology;
  core::Matrices m;
};

inline Fabric fabric(int nodes, int perNode, int cpus = 64,
              const std::function<void(core::Matrices&, const core::Topology&)>& plant = {}) {
  std::vector<core::HostProbe> probes;
  for (int r = 0; r < nodes * perNode; ++r) {
    core::HostProbe p{.hostname = std::string("host") + std::to_string(r / perNode)};
    p.sharedLeader = r / perNode * perNode;
    p.cpus = cpus;
    probes.push_back(p);
  }
  Fabric f;
  f.topology = topologies::buildTopology(probes, 0);
  const int n = nodes * perNode;
  MatrixBuilder b(f.topology, MatrixShape{});
  for (int a = 0; a < n; ++a) {
    for (int c = a + 1; c < n; ++c) {
      const bool same = a / perNode == c / perNode;
      const double jitter = 1.0 + 0.02 * std::sin(a * 7.0 + c * 3.0);
      core::PairRecord s;
      s.level = "rank";
      s.a = a;
      s.b = c;
      s.bwAB = (same ? 100.0 : 10.0) * jitter;
      s.bwBA = (same ? 100.0 : 10.0) / jitter;
      s.latencyUs = (same ? 2.0 : 20.0) * jitter;
      b.add(s);
    }
  }
  f.m = b.build();
  if (plant) {
    // planted cells may carry a worst sample: start the worst matrices as copies (as a retest does)
    f.m.rankUnidirWorst = f.m.rankUnidir;
    f.m.rankLatencyWorst = f.m.rankLatency;
    plant(f.m, f.topology);
    // recompute the derived node matrix from the planted rank matrix
    MatrixBuilder again(f.topology, MatrixShape{});
    for (int a = 0; a < n; ++a) {
      for (int c = a + 1; c < n; ++c) {
        core::PairRecord s;
        s.level = "rank";
        s.a = a;
        s.b = c;
        s.bwAB = f.m.rankUnidir.at(a, c);
        s.bwBA = f.m.rankUnidir.at(c, a);
        s.latencyUs = f.m.rankLatency.at(a, c);
        again.add(s);
        s.sample = 1;  // the worst sample, as a retest
        s.bwAB = f.m.rankUnidirWorst.at(a, c);
        s.bwBA = f.m.rankUnidirWorst.at(c, a);
        s.latencyUs = f.m.rankLatencyWorst.at(a, c);
        again.add(s);
      }
    }
    f.m = again.build();
  }
  return f;
}

// Sets both the best and the worst sample of a directed cell (a consistent measurement).
inline void setBw(core::Matrices& m, int a, int b, float v) {
  m.rankUnidir.at(a, b) = v;
  m.rankUnidirWorst.at(a, b) = v;
}

// The node baseline a first round fixed before the retests (its bandwidth and spread, as a run
// recorded it), which inter-node rank pairs are judged against too.
inline void fixFirstRoundBaseline(core::Matrices& m, double bandwidth, double spread) {
  m.expectedFixed = true;
  m.nodeExpected = {bandwidth, 20.0, spread, 0.0, 0.0};
  m.classExpected = classBaselines(m);
  m.classExpected[static_cast<std::size_t>(core::LinkClass::kInterNode)] = m.nodeExpected;
}

inline std::vector<core::Finding> serious(const std::vector<core::Finding>& all) {
  std::vector<core::Finding> out;
  for (const auto& f : all) {
    if (f.severity != core::Severity::kInfo) out.push_back(f);
  }
  return out;
}

inline std::string describe(const std::vector<core::Finding>& all) {
  std::string s;
  for (const auto& f : all) {
    s += fmt::format("[{} {} {}: {}] ", core::name(f.severity), core::name(f.kind), f.subject, f.message);
  }
  return s.empty() ? "none" : s;
}

inline const AnalysisConfig kDefaults{};

inline int ofKindIn(const std::vector<core::Finding>& all, const std::string& kind) {
  return static_cast<int>(std::count_if(all.begin(), all.end(), [&](const auto& f) { return core::name(f.kind) == kind; }));
}

// One node of G GPUs, one rank per GPU, with the given link codes (G x G), class and GPU name;
// every ordered pair measured at bw(a, b) GB/s (twice, identical samples).
struct GpuNode {
  core::Topology topology;
  core::Matrices m;
};

inline GpuNode gpuNode(int g, const std::function<std::string(int, int)>& code, const std::string& cls,
                const std::string& nvswitch, const std::function<double(int, int)>& bw,
                const std::string& gpuName = "NVIDIA H100 80GB HBM3") {
  std::vector<core::HostProbe> probes;
  for (int r = 0; r < g; ++r) {
    core::HostProbe p{.hostname = std::string("gpu01")};
    p.sharedLeader = 0;
    p.cpus = 64;
    p.gpuCount = g;
    probes.push_back(p);
  }
  GpuNode n;
  n.topology = topologies::buildTopology(probes, 0);
  core::NodeRecord& node = n.topology.nodes[0];
  node.topologyClass = cls;
  node.nvswitch = nvswitch;
  for (int a = 0; a < g; ++a) {
    for (int b = 0; b < g; ++b) node.gpuLinks.push_back(a == b ? "X" : code(a, b));
  }
  for (auto& r : n.topology.ranks) {
    r.gpuIndex = r.rank;
    r.gpuName = gpuName;
  }
  MatrixBuilder builder(n.topology, MatrixShape{});
  for (int sample = 0; sample < 2; ++sample) {
    for (int a = 0; a < g; ++a) {
      for (int b = a + 1; b < g; ++b) {
        core::PairRecord s;
        s.level = "rank";
        s.a = a;
        s.b = b;
        s.sample = sample;
        s.bwAB = bw(a, b);
        s.bwBA = bw(b, a);
        s.latencyUs = 3;
        builder.add(s);
      }
    }
  }
  n.m = builder.build();
  fixBaselines(n.m, n.topology);
  return n;
}

// Four nodes of one rank whose node pairs (measured whole) move `gbs` GB/s each way, each node
// with one active 400 Gb/s RDMA port (50 GB/s) in its inventory; `rates` overrides a node's rate.
inline Fabric lineRateFabric(float gbs, const std::map<int, double>& rates = {}) {
  Fabric f = fabric(4, 1, 64);
  f.m.nodeMeasured = true;
  for (int x = 0; x < 4; ++x) {
    for (int y = 0; y < 4; ++y) {
      if (x != y) f.m.nodeBw.at(x, y) = gbs;
    }
    const double rate = rates.count(x) > 0 ? rates.at(x) : 400.0;
    f.topology.inventory.nics.push_back({x, "mlx5_0", 1, "rdma", "ACTIVE", "LinkUp", rate, 4, "NDR", "IB", "", "", 0});
    f.topology.inventory.nics.push_back({x, "mlx5_1", 1, "rdma", "DOWN", "Disabled", 400, 4, "NDR", "IB", "", "", 0});
  }
  f.m.nodeBwWorst = f.m.nodeBw;
  return f;
}

// `f` with the fabric file `text` given, as --fabric gives it.
inline Fabric withFabric(Fabric f, const char* text) {
  f.topology.fabric = topologies::parseFabric(text, "fabric.txt");
  return f;
}

// A two-level fat tree routed by destination as InfiniBand's ftree does (up from a leaf to spine
// d mod spines): `leaves` x `hosts` nodes of one rank (host0.. on leaf0..), the cable between leaf
// `badLeaf` and spine `badSpine` slow both ways (its pairs at `slow` GB/s, the rest 10 GB/s); the
// fabric file as `--fabric` gives it, the routing left out. `plant` changes cells after.
inline Fabric destinationRouted(int leaves, int hosts, int spines, int badLeaf, int badSpine, float slow,
                                const std::function<void(core::Matrices&)>& plant = {}) {
  const int n = leaves * hosts;
  Fabric f = fabric(n, 1, 64, [&](core::Matrices& m, const core::Topology&) {
    for (int a = 0; a < n; ++a) {
      for (int b = 0; b < n; ++b) {
        if (a / hosts == b / hosts || b % spines != badSpine) continue;
        if (a / hosts == badLeaf || b / hosts == badLeaf) setBw(m, a, b, slow);  // up it, or down it
      }
    }
    if (plant) plant(m);
  });
  std::string text;
  for (int h = 0; h < n; ++h) text += fmt::format("host{} -> leaf{}:{}\n", h, h / hosts, h % hosts + 1);
  for (int l = 0; l < leaves; ++l) {
    for (int k = 0; k < spines; ++k) text += fmt::format("leaf{}:{} -> spine{}:{}\n", l, hosts + 1 + k, k, l + 1);
  }
  f.topology.fabric = topologies::parseFabric(text, "fabric.txt");
  return f;
}

inline std::vector<core::Finding> ofKind(const std::vector<core::Finding>& all, const std::string& kind) {
  std::vector<core::Finding> out;
  for (const auto& f : all) {
    if (core::name(f.kind) == kind) out.push_back(f);
  }
  return out;
}

}  // namespace fabricmap::orchestrator
