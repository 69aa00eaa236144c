// A fat tree as plain data, the one description both the simulated platform (platform.cpp, which
// SimGrid loads) and the files a user gives fabricmap (sim_fabric.cpp: the --fabric file and the
// hostfile) are made from, so the switch rule sees what the simulator routes.
//
// The shape file holds one setting per line (`#` starts a comment):
//   levels 2                two: leaves under spines; three: pods of leaves and spines under cores
//   pods 1                  three levels: how many pods (each its own leaves and spines)
//   leaves 8                leaves per pod (two levels: in all)
//   hosts-per-leaf 8
//   spines 8                per pod; each leaf has one cable to each spine of its pod
//   cores 0                 three levels: each spine s has cores/spines cables up, to its own cores
//   ranks-per-host 1
//   nic-gbps 400            a host's cable, each way
//   uplink-gbps 400         a leaf-spine or spine-core cable, each way
//   nvlink-gbps 3600        between ranks of one host (NVLink-like)
//   latency-us 0.5          per cable
//   fault host HOST SHARE [both|up|down]          the host's cable at SHARE of its rate
//   fault cable LEAF SPINE SHARE [both|up|down]   a leaf-spine cable (up: towards the spine)
//   fault cable SPINE CORE SHARE [both|up|down]   a spine-core cable
//   fault leaf LEAF SHARE                         every cable of that leaf
//   fault spine SPINE SHARE                       every cable of that spine
// Routing is D-mod-K (InfiniBand's ftree), by the destination host's index: up from a leaf to
// spine d mod spines, up from a spine to its core (d / spines) mod (cores / spines); down the one
// way there is. Names: hosts n0000.., leaves leaf00.. (three levels: p0leaf00..), spines spine00..
// (p0spine00..), cores core00...
#pragma once

#include <map>
#include <string>
#include <vector>

namespace fabricmap::sim {

struct Shape {
  int levels = 2;
  int pods = 1;
  int leaves = 8;
  int hostsPerLeaf = 8;
  int spines = 8;
  int cores = 0;
  int ranksPerHost = 1;
  double nicGbps = 400;
  double uplinkGbps = 400;
  double nvlinkGbps = 3600;
  double latencyUs = 0.5;
  std::vector<std::vector<std::string>> faults;  // each `fault` line's words after `fault`
};

// One direction of one cable, and its rate.
struct Link {
  std::string name;
  double gbps = 0;
};

// A directed hop of a route: the index of a Link in FatTree::links.
struct FatTree {
  Shape shape;
  std::vector<std::string> hosts;
  std::vector<std::string> leaves;  // every pod's, pod after pod
  std::vector<std::string> spines;  // every pod's
  std::vector<std::string> cores;
  std::vector<Link> links;
  std::map<std::string, int> linkIndex;
  std::vector<std::string> fabricLines;  // the --fabric file, child -> parent

  int leafOf(int host) const { return host / shape.hostsPerLeaf; }
  int podOfLeaf(int leaf) const { return leaf / shape.leaves; }
  // The links from host a to host b (a != b), in order.
  std::vector<int> route(int a, int b) const;
  // The link inside host a (its ranks' NVLink-like rate).
  int loopback(int a) const { return linkIndex.at(hosts[static_cast<std::size_t>(a)] + "-nvlink"); }
};

// Reads a shape file; throws std::runtime_error naming the line on anything it does not know, and
// on a tree past what a subnet holds (65,536 hosts, 4,096 switches a level) or a rate that is not
// above 0 (a fault's share too: a link at 0 would hold a simulated transfer forever).
Shape readShape(const std::string& path);
// The same from the file's text; `where` names it in messages.
Shape parseShape(const std::string& text, const std::string& where);
// The tree of `shape`, its faults applied; throws std::runtime_error on a fault naming no part.
FatTree buildFatTree(const Shape& shape);

}  // namespace fabricmap::sim
