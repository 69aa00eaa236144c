// The simulated fabric as a SimGrid platform library: `smpirun -platform libfabricmap_sim_platform.so`
// with FABRICMAP_SIM_SHAPE naming a shape file (fat_tree.h) builds its hosts, every cable's two
// directions as links, and every host pair's D-mod-K route in one full-routing zone. The same
// library writes what a user gives fabricmap for that fabric (fabricmap_sim_write, called by
// bench/sim/fabric.py), from the same FatTree, so the two cannot drift apart.
#include <simgrid/s4u.hpp>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <stdexcept>

#include "bench/sim/fat_tree.h"

namespace sg4 = simgrid::s4u;
using fabricmap::sim::FatTree;

extern "C" void load_platform(const sg4::Engine& engine);
extern "C" int fabricmap_sim_write(const char* shape, const char* fabric, const char* hostfile, char* error,
                                   int errorBytes);

void load_platform(const sg4::Engine& /*engine*/) {
  const char* path = std::getenv("FABRICMAP_SIM_SHAPE");
  if (path == nullptr) throw std::runtime_error("FABRICMAP_SIM_SHAPE must name the fabric's shape file");
  const FatTree t = fabricmap::sim::buildFatTree(fabricmap::sim::readShape(path));
  sg4::NetZone* zone = sg4::create_full_zone("fabric");
  std::vector<sg4::Link*> links;
  links.reserve(t.links.size());
  for (const auto& l : t.links) {
    links.push_back(zone->create_link(l.name, l.gbps * 1e9 / 8)->set_latency(t.shape.latencyUs * 1e-6)->seal());
  }
  std::vector<sg4::Host*> hosts;
  for (const std::string& h : t.hosts) hosts.push_back(zone->create_host(h, 1e9)->seal());
  for (std::size_t a = 0; a < hosts.size(); ++a) {
    for (std::size_t b = 0; b < hosts.size(); ++b) {
      std::vector<sg4::LinkInRoute> hops;
      if (a == b) {
        hops.emplace_back(links[static_cast<std::size_t>(t.loopback(static_cast<int>(a)))]);
      } else {
        for (int i : t.route(static_cast<int>(a), static_cast<int>(b))) hops.emplace_back(links[static_cast<std::size_t>(i)]);
      }
      zone->add_route(hosts[a]->get_netpoint(), hosts[b]->get_netpoint(), nullptr, nullptr, hops, false);
    }
  }
  zone->seal();
}

// Writes the fabric's --fabric file (child -> parent lines) and the hostfile (each host once per
// rank); 0, or 1 with the reason in `error`.
int fabricmap_sim_write(const char* shape, const char* fabric, const char* hostfile, char* error, int errorBytes) {
  try {
    const FatTree t = fabricmap::sim::buildFatTree(fabricmap::sim::readShape(shape));
    std::ofstream f(fabric);
    for (const std::string& line : t.fabricLines) f << line << '\n';
    std::ofstream h(hostfile);
    for (const std::string& host : t.hosts) {
      for (int r = 0; r < t.shape.ranksPerHost; ++r) h << host << '\n';
    }
    if (!f || !h) throw std::runtime_error("cannot write the fabric file or the hostfile");
    return 0;
  } catch (const std::exception& e) {
    std::strncpy(error, e.what(), static_cast<std::size_t>(errorBytes > 0 ? errorBytes - 1 : 0));
    return 1;
  }
}
