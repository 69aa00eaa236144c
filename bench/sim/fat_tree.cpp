// The fat tree of a shape file (see fat_tree.h).
#include "bench/sim/fat_tree.h"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace fabricmap::sim {
namespace {

std::string numbered(const std::string& prefix, int i, int width) {
  char digits[16];
  std::snprintf(digits, sizeof digits, "%0*d", width, i);
  return prefix + digits;
}

double number(const std::string& word, const std::string& where) {
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(word, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != word.size() || !(v >= 0) || !std::isfinite(v)) {
    throw std::runtime_error(where + ": '" + word + "' is not a number >= 0");
  }
  return v;
}

constexpr double kMaxCount = 65536;  // hosts in a subnet (InfiniBand's unicast LIDs: 48K)
constexpr double kMaxSwitches = 4096;

// A share of a rate: above 0, at most 1.
double share(const std::string& word, const std::string& where) {
  const double v = number(word, where);
  if (!(v > 0 && v <= 1)) throw std::runtime_error(where + ": a share of a rate is above 0 and at most 1, not " + word);
  return v;
}

void set(Shape& s, const std::string& key, const std::string& value, const std::string& where) {
  const double v = number(value, where);
  std::map<std::string, int*> ints{{"levels", &s.levels},   {"pods", &s.pods},   {"leaves", &s.leaves},
                                   {"hosts-per-leaf", &s.hostsPerLeaf},       {"spines", &s.spines},
                                   {"cores", &s.cores},     {"ranks-per-host", &s.ranksPerHost}};
  std::map<std::string, double*> reals{{"nic-gbps", &s.nicGbps}, {"uplink-gbps", &s.uplinkGbps},
                                       {"nvlink-gbps", &s.nvlinkGbps}, {"latency-us", &s.latencyUs}};
  if (const auto i = ints.find(key); i != ints.end()) {
    if (v != std::floor(v) || v > kMaxCount) throw std::runtime_error(where + ": " + key + " is a whole number up to 65536");
    *i->second = static_cast<int>(v);
  } else if (const auto r = reals.find(key); r != reals.end()) {
    if (!(v > 0) || v > 1e6) throw std::runtime_error(where + ": " + key + " is above 0 (and at most 1e6)");
    *r->second = v;
  } else {
    throw std::runtime_error(where + ": unknown setting '" + key + "'");
  }
}

// Builds the parts, their links and the --fabric file's lines.
class Builder {
 public:
  explicit Builder(FatTree& t) : t_(t) {}

  void parts() {
    const Shape& s = t_.shape;
    const bool three = s.levels == 3;
    for (int p = 0; p < s.pods; ++p) {
      const std::string pod = three ? numbered("p", p, 1) : "";
      for (int l = 0; l < s.leaves; ++l) t_.leaves.push_back(pod + numbered("leaf", l, 2));
      for (int k = 0; k < s.spines; ++k) t_.spines.push_back(pod + numbered("spine", k, 2));
    }
    for (int c = 0; c < s.cores; ++c) t_.cores.push_back(numbered("core", c, 2));
    for (int h = 0; h < s.pods * s.leaves * s.hostsPerLeaf; ++h) t_.hosts.push_back(numbered("n", h, 4));
  }

  void cables() {
    const Shape& s = t_.shape;
    for (std::size_t h = 0; h < t_.hosts.size(); ++h) {
      const int leaf = t_.leafOf(static_cast<int>(h));
      const std::string& name = t_.hosts[h];
      pair(name, "", s.nicGbps, {name, t_.leaves[static_cast<std::size_t>(leaf)]});
      link(name + "-nvlink", s.nvlinkGbps, {name});
      t_.fabricLines.push_back(name + " -> " + t_.leaves[static_cast<std::size_t>(leaf)] + ":" +
                               std::to_string(static_cast<int>(h) % s.hostsPerLeaf + 1));
    }
    for (std::size_t l = 0; l < t_.leaves.size(); ++l) {
      const int pod = t_.podOfLeaf(static_cast<int>(l));
      for (int k = 0; k < s.spines; ++k) {
        const std::string& spine = t_.spines[static_cast<std::size_t>(pod * s.spines + k)];
        pair(t_.leaves[l], spine, s.uplinkGbps, {t_.leaves[l], spine});
        t_.fabricLines.push_back(t_.leaves[l] + ":" + std::to_string(s.hostsPerLeaf + 1 + k) + " -> " + spine + ":" +
                                 std::to_string(static_cast<int>(l) % s.leaves + 1));
      }
    }
    const int perSpine = s.cores / s.spines;
    for (std::size_t k = 0; k < t_.spines.size(); ++k) {
      const int group = static_cast<int>(k) % s.spines;
      const int pod = static_cast<int>(k) / s.spines;
      for (int j = 0; j < perSpine; ++j) {
        const std::string& core = t_.cores[static_cast<std::size_t>(group * perSpine + j)];
        pair(t_.spines[k], core, s.uplinkGbps, {t_.spines[k], core});
        t_.fabricLines.push_back(t_.spines[k] + ":" + std::to_string(s.leaves + 1 + j) + " -> " + core + ":" +
                                 std::to_string(pod + 1));
      }
    }
  }

  // Every link touching a part (a host, a switch).
  std::map<std::string, std::vector<int>> touching;

 private:
  void link(const std::string& name, double gbps, const std::vector<std::string>& parts) {
    t_.linkIndex[name] = static_cast<int>(t_.links.size());
    for (const std::string& p : parts) touching[p].push_back(static_cast<int>(t_.links.size()));
    t_.links.push_back({name, gbps});
  }
  // A cable's two directions: CHILD[-PARENT]-up towards the parent, -down from it.
  void pair(const std::string& child, const std::string& parent, double gbps, const std::vector<std::string>& parts) {
    const std::string base = parent.empty() ? child : child + "-" + parent;
    link(base + "-up", gbps, parts);
    link(base + "-down", gbps, parts);
  }

  FatTree& t_;
};

void scale(FatTree& t, const std::string& name, double share) {
  const auto i = t.linkIndex.find(name);
  if (i == t.linkIndex.end()) throw std::runtime_error("no link " + name);
  t.links[static_cast<std::size_t>(i->second)].gbps *= share;
}

void applyFault(FatTree& t, const std::map<std::string, std::vector<int>>& touching, const std::vector<std::string>& f) {
  const std::string line = "fault";
  const auto ways = [&](std::size_t at) { return f.size() > at ? f[at] : std::string("both"); };
  const auto directed = [&](const std::string& base, const std::string& way, double share) {
    if (way != "both" && way != "up" && way != "down") throw std::runtime_error("fault: direction '" + way + "'");
  if (f.size() > 5) throw std::runtime_error("fault: too many words");
    if (way != "down") scale(t, base + "-up", share);
    if (way != "up") scale(t, base + "-down", share);
  };
  if (f.size() >= 3 && f[0] == "host") {
    directed(f[1], ways(3), share(f[2], line));
  } else if (f.size() >= 4 && f[0] == "cable") {
    directed(f[1] + "-" + f[2], ways(4), share(f[3], line));
  } else if (f.size() == 3 && (f[0] == "leaf" || f[0] == "spine")) {
    const auto parts = touching.find(f[1]);
    if (parts == touching.end()) throw std::runtime_error("fault: no " + f[0] + " " + f[1]);
    for (int i : parts->second) t.links[static_cast<std::size_t>(i)].gbps *= share(f[2], line);
  } else {
    throw std::runtime_error("fault: not host|cable|leaf|spine with its parts and share");
  }
}

}  // namespace

Shape readShape(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::ostringstream text;
  text << in.rdbuf();
  return parseShape(text.str(), path);
}

Shape parseShape(const std::string& all, const std::string& path) {
  Shape s;
  std::istringstream lines(all);
  std::string text;
  for (int n = 1; std::getline(lines, text); ++n) {
    text = text.substr(0, text.find('#'));
    std::istringstream words(text);
    std::vector<std::string> w;
    for (std::string x; words >> x;) w.push_back(x);
    if (w.empty()) continue;
    const std::string where = path + ":" + std::to_string(n);
    if (w[0] == "fault") {
      s.faults.emplace_back(w.begin() + 1, w.end());
    } else if (w.size() == 2) {
      set(s, w[0], w[1], where);
    } else {
      throw std::runtime_error(where + ": expected 'setting value' or 'fault ...'");
    }
  }
  const bool three = s.levels == 3;
  if ((s.levels != 2 && !three) || s.pods < 1 || s.leaves < 1 || s.hostsPerLeaf < 1 || s.spines < 1 ||
      s.ranksPerHost < 1 || (three && (s.cores < s.spines || s.cores % s.spines != 0)) || (!three && s.pods != 1)) {
    throw std::runtime_error(path + ": levels 2 (one pod) or 3 (cores a multiple of spines), every count >= 1");
  }
  if (!three) s.cores = 0;
  const double hosts = static_cast<double>(s.pods) * s.leaves * s.hostsPerLeaf;
  if (hosts > kMaxCount || static_cast<double>(s.pods) * s.spines > kMaxSwitches ||
      static_cast<double>(s.pods) * s.leaves > kMaxSwitches || s.cores > kMaxSwitches || s.ranksPerHost > 1024) {
    throw std::runtime_error(path + ": at most 65536 hosts, 4096 switches a level and 1024 ranks a host");
  }
  return s;
}

FatTree buildFatTree(const Shape& shape) {
  FatTree t;
  t.shape = shape;
  Builder b(t);
  b.parts();
  b.cables();
  for (const auto& f : shape.faults) applyFault(t, b.touching, f);
  return t;
}

std::vector<int> FatTree::route(int a, int b) const {
  const auto at = [&](const std::string& name) { return linkIndex.at(name); };
  const std::string& from = hosts[static_cast<std::size_t>(a)];
  const std::string& to = hosts[static_cast<std::size_t>(b)];
  const int la = leafOf(a);
  const int lb = leafOf(b);
  if (la == lb) return {at(from + "-up"), at(to + "-down")};
  const int k = b % shape.spines;  // D-mod-K: the spine is the destination's index mod spines
  const int pa = podOfLeaf(la);
  const int pb = podOfLeaf(lb);
  const std::string& leafA = leaves[static_cast<std::size_t>(la)];
  const std::string& leafB = leaves[static_cast<std::size_t>(lb)];
  const std::string& spineA = spines[static_cast<std::size_t>(pa * shape.spines + k)];
  const std::string& spineB = spines[static_cast<std::size_t>(pb * shape.spines + k)];
  if (pa == pb) {
    return {at(from + "-up"), at(leafA + "-" + spineA + "-up"), at(leafB + "-" + spineA + "-down"), at(to + "-down")};
  }
  const int perSpine = shape.cores / shape.spines;
  const std::string& core = cores[static_cast<std::size_t>(k * perSpine + (b / shape.spines) % perSpine)];
  return {at(from + "-up"),          at(leafA + "-" + spineA + "-up"), at(spineA + "-" + core + "-up"),
          at(spineB + "-" + core + "-down"), at(leafB + "-" + spineB + "-down"), at(to + "-down")};
}

}  // namespace fabricmap::sim
