// Acceptance checks against a profile: every node, rail and link class judged on its own, so a
// failing verdict names what to send back.
#include "orchestrator/verdicts/verify.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <set>

#include "core/stats.h"
#include "core/units.h"
#include "orchestrator/analysis/analysis.h"
#include "orchestrator/analysis/inventory_rules.h"
#include "orchestrator/analysis/plateau.h"
#include "orchestrator/verdicts/predict.h"
#include "orchestrator/verdicts/scope_model.h"

namespace fabricmap::orchestrator {
namespace {

using Json = nlohmann::ordered_json;

std::string nodeLabel(const core::NodeRecord& n) {
  return n.name.empty() ? fmt::format("node{}", n.node) : fmt::format("node{} ({})", n.node, n.name);
}

// GB/s with two decimals, or three significant digits below 1 (host-memory thresholds)
std::string gbps(double v) { return std::fabs(v) >= 1 || v == 0 ? fmt::format("{:.2f}", v) : fmt::format("{:.3g}", v); }

// Checks built one at a time with the same requirement.
struct Judge {
  std::vector<Check>& out;

  Check& missing(std::string check, std::string subject, std::string required, std::string why) {
    Check c;
    if (check.find("busbw") != std::string::npos) c.unit = "GB/s";
    c.check = std::move(check);
    c.subject = std::move(subject);
    c.measured = "-";
    c.required = std::move(required);
    c.status = CheckStatus::kMissing;
    c.detail = std::move(why);
    out.push_back(std::move(c));
    return out.back();
  }
  Check& atLeast(std::string check, std::string subject, double measured, double required, std::string unit,
                 std::string detail) {
    Check c;
    c.check = std::move(check);
    c.subject = std::move(subject);
    c.measuredValue = measured;
    c.requiredValue = required;
    c.measured = unit == "GB/s" ? gbps(measured) : fmt::format("{:.3f}", measured);
    c.required = unit == "GB/s" ? ">= " + gbps(required) : fmt::format(">= {:.3f}", required);
    c.unit = std::move(unit);
    c.status = std::isfinite(measured) && measured >= required ? CheckStatus::kPass : CheckStatus::kFail;
    c.detail = std::move(detail);
    out.push_back(std::move(c));
    return out.back();
  }
  Check& equal(std::string check, std::string subject, std::string measured, std::string required, bool pass,
               std::string detail = {}) {
    Check c;
    c.check = std::move(check);
    c.subject = std::move(subject);
    c.measured = std::move(measured);
    c.required = std::move(required);
    c.status = pass ? CheckStatus::kPass : CheckStatus::kFail;
    c.detail = std::move(detail);
    out.push_back(std::move(c));
    return out.back();
  }
};

// Why a node has no topology class to judge: a log carries no links; discovery could not see them.
std::string whyUnclassified(const results::ResultsFile& file, const core::NodeRecord& n) {
  if (!file.provenance.importedFrom.empty()) {
    return "an nccl-tests log carries no link information: import it with --topo FILE (a saved `nvidia-smi topo -m` "
           "of the server)";
  }
  return n.topologyWarnings.empty() ? "discovery could not see the GPUs' links"
                                    : "discovery could not classify the node: " + n.topologyWarnings;
}

// The name's words (letters and digits, upper-cased): "NVIDIA GH200 120GB" -> NVIDIA, GH200, 120GB.
std::vector<std::string> wordsOf(std::string_view name) {
  std::vector<std::string> out(1);
  for (const char ch : name) {
    if (std::isalnum(static_cast<unsigned char>(ch))) {
      out.back() += static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    } else if (!out.back().empty()) {
      out.emplace_back();
    }
  }
  if (out.back().empty()) out.pop_back();
  return out;
}

// The model's words appear in the name in order, each whole: "H200" is in "NVIDIA H200" but not in
// "NVIDIA GH200 120GB" (a Grace Hopper superchip); "A100" is in "A100-SXM4-40GB".
bool namesModel(std::string_view name, std::string_view model) {
  const std::vector<std::string> n = wordsOf(name);
  const std::vector<std::string> m = wordsOf(model);
  return !m.empty() && std::search(n.begin(), n.end(), m.begin(), m.end()) != n.end();
}

// NICs a node record lists ("mlx5_0 400G IB, mlx5_1 400G IB"); 0 when none is known.
int nicCount(const core::NodeRecord& n) {
  int count = 0;
  std::string_view rest = n.nics;
  while (!rest.empty()) {
    const std::size_t comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    if (item.find_first_not_of(" \t") != std::string_view::npos) ++count;
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
  }
  return count;
}

// The file's collectives ran on NCCL: a run of the nccl backend, or an imported nccl-tests log.
bool isImported(const results::ResultsFile& file) { return !file.provenance.importedFrom.empty(); }

bool measuredByNccl(const results::ResultsFile& file) {
  return file.provenance.backend == "nccl" || !file.provenance.importedFrom.empty();
}

// Why a scope has no all_reduce plateau in the file.
std::string whyNoPlateau(const results::ResultsFile& file, std::string_view scope) {
  for (const core::ScopeRecord& s : file.scopes) {
    if (s.scope == scope && s.status == "waived") return fmt::format("scope {} waived: {}", scope, s.reason);
  }
  if (isImported(file)) {
    return fmt::format("no usable {} all_reduce rows: an nccl-tests log is one world scope, which answers intra only "
                       "for a log of one node",
                       scope);
  }
  return fmt::format("no usable {} all_reduce rows (run a sweep with --ops all_reduce)", scope);
}

// The plateau of an all_reduce scope, or why it cannot be judged (absent, or the sweep stopped
// below the sizes the profile needs).
std::optional<Plateau> judgedPlateau(const results::ResultsFile& file, const Profile& profile, std::string_view scope,
                                     std::string& why) {
  auto p = plateauOf(file.collectives, answeringScope(file, scope), "all_reduce");
  if (!p) {
    why = whyNoPlateau(file, scope);
    return std::nullopt;
  }
  if (p->toBytes < profile.minPlateauBytes) {
    why = fmt::format("largest {} all_reduce measured is {}; the profile judges the plateau only from {} "
                      "(min_plateau_bytes): {} -e {}",
                      scope, core::formatBytes(p->toBytes), core::formatBytes(profile.minPlateauBytes),
                      isImported(file) ? "ask for a log run with" : "rerun with", core::formatBytes(profile.minPlateauBytes));
    return std::nullopt;
  }
  return p;
}

std::string plateauHow(const Plateau& p, const GroupPlateau& g) {
  return fmt::format("median busbw of {} row{} at {}..{} (sizes >= 1/4 of the largest), group ranks {}", g.samples,
                     g.samples == 1 ? "" : "s", core::formatBytes(p.fromBytes), core::formatBytes(p.toBytes), g.ranks);
}

void checkNodes(const Profile& profile, const results::ResultsFile& file, Judge& judge) {
  const auto& nodes = file.topology.nodes;
  if (profile.topologyClass) {
    if (nodes.empty()) judge.missing("topology_class", "all nodes", *profile.topologyClass, "no node table in the file");
    for (const core::NodeRecord& n : nodes) {
      if (n.topologyClass.empty() || n.topologyClass == "UNCLASSIFIED") {
        judge.missing("topology_class", nodeLabel(n), *profile.topologyClass, whyUnclassified(file, n));
        continue;
      }
      judge.equal("topology_class", nodeLabel(n), n.topologyClass.empty() ? "-" : n.topologyClass,
                  *profile.topologyClass, n.topologyClass == *profile.topologyClass,
                  n.topologyWarnings.empty() ? "" : n.topologyWarnings);
    }
  }
  if (profile.gpusPerNode) {
    if (nodes.empty()) judge.missing("gpus_per_node", "all nodes", fmt::format("{}", *profile.gpusPerNode), "no node table");
    for (const core::NodeRecord& n : nodes) {
      // a log shows the GPUs its ranks used, not how many the server has (--topo tells)
      if (isImported(file) && n.gpuLinks.empty() && n.gpus < *profile.gpusPerNode) {
        judge.missing("gpus_per_node", nodeLabel(n), fmt::format("{}", *profile.gpusPerNode),
                      fmt::format("the log's ranks used {} of the server's GPUs; a log does not show how many it has "
                                  "(import it with --topo FILE)",
                                  n.gpus))
            .requiredValue = *profile.gpusPerNode;
        continue;
      }
      Check& c = judge.equal("gpus_per_node", nodeLabel(n), fmt::format("{}", n.gpus),
                             fmt::format("{}", *profile.gpusPerNode), n.gpus == *profile.gpusPerNode,
                             fmt::format("{} rank{} ran on the node{}", n.ranks, n.ranks == 1 ? "" : "s",
                                         isImported(file) && n.gpuLinks.empty() ? " (the GPUs they used)" : ""));
      c.measuredValue = n.gpus;
      c.requiredValue = *profile.gpusPerNode;
      c.unit = "GPUs";
    }
  }
  if (profile.gpuModel) {
    if (nodes.empty()) judge.missing("gpu_model", "all nodes", *profile.gpuModel, "no node table");
    for (const core::NodeRecord& n : nodes) {
      std::set<std::string> names;
      bool unnamed = false;  // a rank with a GPU whose name the file does not give
      for (const core::RankRecord& r : file.topology.ranks) {
        if (r.node != n.node) continue;
        unnamed = unnamed || (r.gpuIndex >= 0 && r.gpuName.empty());
        names.insert(r.gpuIndex < 0 && r.gpuName.empty() ? "no GPU" : r.gpuName);
      }
      if (unnamed) {
        judge.missing("gpu_model", nodeLabel(n), "contains " + *profile.gpuModel, "a GPU's name is not recorded");
        continue;
      }
      const bool ok = !names.empty() && std::all_of(names.begin(), names.end(), [&](const std::string& g) {
        return g != "no GPU" && namesModel(g, *profile.gpuModel);
      });
      judge.equal("gpu_model", nodeLabel(n), names.empty() ? "-" : fmt::format("{}", fmt::join(names, ", ")),
                  "contains " + *profile.gpuModel, ok, "every GPU's device name must contain the model's words whole");
    }
  }
}

void checkIntra(const Profile& profile, const results::ResultsFile& file, Judge& judge) {
  if (!profile.minIntraAllReduceBusbw) return;
  const double required = *profile.minIntraAllReduceBusbw;
  const std::string requiredText = ">= " + gbps(required);
  std::string why;
  const auto p = judgedPlateau(file, profile, "intra", why);
  if (!p) {
    judge.missing("intra_allreduce_busbw", "all nodes", requiredText, why).requiredValue = required;
    return;
  }
  std::map<int, const GroupPlateau*> byNode;
  for (const GroupPlateau& g : p->groups) {
    if (g.firstRank >= 0 && g.firstRank < static_cast<int>(file.topology.ranks.size()))
      byNode.emplace(file.topology.ranks[static_cast<std::size_t>(g.firstRank)].node, &g);
  }
  for (const core::NodeRecord& n : file.topology.nodes) {
    const auto it = byNode.find(n.node);
    if (it == byNode.end()) {
      judge.missing("intra_allreduce_busbw", nodeLabel(n), requiredText,
                    n.ranks < 2 ? "one rank on the node: nothing inside it to measure"
                                : "no intra all_reduce row of this node at the plateau sizes")
          .requiredValue = required;
      continue;
    }
    if (n.gpus > 0 && p->nranks < n.gpus) {
      judge.missing("intra_allreduce_busbw", nodeLabel(n), requiredText,
                    fmt::format("the all_reduce ran on {} of the node's {} GPUs; the profile judges the whole node",
                                p->nranks, n.gpus))
          .requiredValue = required;
      continue;
    }
    judge.atLeast("intra_allreduce_busbw", nodeLabel(n), it->second->busbw, required, "GB/s",
                  p->scope == "intra" ? plateauHow(*p, *it->second)
                                      : fmt::format("{}: world {}", kIntraFromWorld, plateauHow(*p, *it->second)));
  }
}

void checkInter(const Profile& profile, const results::ResultsFile& file, Judge& judge, std::vector<std::string>& notes) {
  if (!profile.minInterAllReduceBusbwPerNic) return;
  const double required = *profile.minInterAllReduceBusbwPerNic;
  const std::string requiredText = ">= " + gbps(required);
  const auto& nodes = file.topology.nodes;
  if (nodes.size() < 2) {
    judge.missing("inter_allreduce_busbw_per_nic", "all NICs", requiredText, "one node: no traffic crossed a NIC")
        .requiredValue = required;
    return;
  }
  // NICs per node: as the file records them, else as the profile states, else one per rank (rail)
  int nics = 0;
  std::string nicsFrom;
  for (const core::NodeRecord& n : nodes) {
    const int k = nicCount(n);
    if (k > 0) nics = nics == 0 ? k : std::min(nics, k);
  }
  if (nics > 0) {
    nicsFrom = fmt::format("{} NIC{} per node as recorded", nics, nics == 1 ? "" : "s");
  } else if (profile.nicsPerNode) {
    nics = *profile.nicsPerNode;
    nicsFrom = fmt::format("{} NICs per node from the profile (the file records none)", nics);
  } else {
    nics = std::max(1, ranksPerNodeOf(file.topology));
    nicsFrom = fmt::format("no NIC recorded: one per rank of a node ({})", nics);
  }
  // said where a NIC figure was judged on two nodes, of NCCL (a run or a log)
  const auto caveat = [&] {
    if (nodes.size() != 2 || !measuredByNccl(file)) return;
    notes.push_back("two nodes: NCCL's Tree/NVLS all_reduce can exceed the NIC line rate; judge NICs on 3+ nodes or "
                    "with NCCL_ALGO=Ring");
  };
  std::string why;
  if (auto p = judgedPlateau(file, profile, "inter", why)) {
    caveat();
    // Each inter group is a rail (local rank i of every node), all rails at once: a rail's ring
    // crosses every node boundary through that rank's NIC, so its busbw is the NIC's rate. Rails
    // sharing fewer NICs split them: the rate per NIC is the rails' sum over the NICs.
    const int rails = static_cast<int>(p->groups.size());
    const double share = rails > nics ? static_cast<double>(rails) / nics : 1.0;
    for (const GroupPlateau& g : p->groups) {
      judge.atLeast("inter_allreduce_busbw_per_nic", fmt::format("rail {} (ranks {})", g.group, g.ranks),
                    g.busbw * share, required, "GB/s",
                    fmt::format("{}{}; {}", plateauHow(*p, g),
                                share > 1 ? fmt::format(" x {} rails / {} NICs", rails, nics) : "", nicsFrom));
    }
    return;
  }
  std::string whyWorld;
  if (auto w = judgedPlateau(file, profile, "world", whyWorld)) {
    // A ring across nodes runs one channel per NIC and crosses each node boundary once per
    // channel, so busbw is the NICs' rate summed: per NIC = busbw / NICs (8x H100 nodes: ~370-390
    // GB/s busbw over 8x 400G = 46-49 GB/s per NIC, REFERENCE.md).
    caveat();
    const GroupPlateau& g = w->groups.front();
    judge.atLeast("inter_allreduce_busbw_per_nic", fmt::format("world ({} nodes)", nodes.size()), g.busbw / nics,
                  required, "GB/s",
                  fmt::format("no inter scope ({}): world {} / {} NICs per node; {}", why, plateauHow(*w, g), nics,
                              nicsFrom));
    return;
  }
  judge.missing("inter_allreduce_busbw_per_nic", "all NICs", requiredText,
                fmt::format("{}; {}", why, whyWorld))
      .requiredValue = required;
}

void checkPairs(const Profile& profile, const results::ResultsFile& file, Judge& judge) {
  if (!profile.minPairFraction) return;
  const double required = *profile.minPairFraction;
  const core::Matrices& m = file.matrices;
  if (!file.hasMatrices || !m.pairsMeasured || m.rankUnidir.n < 2) {
    judge.missing("pair_fraction", "rank pairs", fmt::format(">= {:.3f}", required),
                  isImported(file) ? "an nccl-tests log has no pairwise matrix" : "no pairwise matrix in the file (run with --pairwise)")
        .requiredValue = required;
    return;
  }
  // Judged per link class: an NVSwitch pair and an inter-node pair are not the same population.
  struct Cells {
    std::vector<double> values;
    double worst = INFINITY;
    int a = -1;
    int b = -1;
  };
  const auto add = [](Cells& cells, float v, int a, int b) {
    if (!std::isfinite(v) || v <= 0) return;
    cells.values.push_back(v);
    if (v < cells.worst) {
      cells.worst = v;
      cells.a = a;
      cells.b = b;
    }
  };
  const auto judgeCells = [&](const std::string& subject, const Cells& cells, const char* what) {
    if (cells.values.empty()) return;
    const double median = core::median(cells.values);
    judge.atLeast("pair_fraction", subject, cells.worst / median, required, "",
                  fmt::format("worst {} {} -> {} {:.3f} GB/s / median {:.3f} GB/s over {} pairs", what, cells.a,
                              cells.b, cells.worst, median, cells.values.size()));
  };
  std::map<core::LinkClass, Cells> byClass;
  const bool classes = m.rankLinkClass.n == m.rankUnidir.n;
  m.rankUnidir.forEachCell([&](int a, int b, float v) {
    if (a == b) return;
    const core::LinkClass c = classes ? m.rankLinkClass.at(a, b) : core::LinkClass::kInterNode;
    if (c != core::LinkClass::kSelf) add(byClass[c], v, a, b);
  });
  for (const auto& [c, cells] : byClass) judgeCells(fmt::format("rank pairs {}", core::name(c)), cells, "rank pair");
  if (m.nodeBw.n >= 2) {
    Cells nodeCells;
    m.nodeBw.forEachCell([&](int a, int b, float v) {
      if (a != b) add(nodeCells, v, a, b);
    });
    judgeCells("node pairs", nodeCells, "node pair");
  }
}

// The largest GPU count of /patterns/scaling against the best busbw at a smaller count (analysis
// scalingBase, as the run's scaling finding): the renter's 8 against 4, and against 2 at once. One
// point has nothing to scale against, and a noisy one is not judged: both missing.
void checkScaling(const Profile& profile, const results::ResultsFile& file, Judge& judge) {
  if (!profile.minScalingEfficiency) return;
  const double required = *profile.minScalingEfficiency;
  const std::string requiredText = fmt::format(">= {:.3f}", required);
  const core::ScalingRecord* full = nullptr;
  for (const core::ScalingRecord& r : file.scaling) {
    if (r.level == "gpus" && (full == nullptr || r.n > full->n || (r.n == full->n && r.bytes > full->bytes))) full = &r;
  }
  if (full == nullptr) {
    judge.missing("scaling_efficiency", "GPUs per node", requiredText,
                  "no /patterns/scaling rows of level gpus (run with --scaling on nodes of 2+ ranks)")
        .requiredValue = required;
    return;
  }
  const core::ScalingRecord* base = scalingBase(*full, file.scaling);
  const std::string subject = fmt::format("{} GPUs per node", full->n);
  if (base == nullptr || full->noisy || base->noisy) {
    judge.missing("scaling_efficiency", subject, requiredText,
                  base == nullptr ? fmt::format("one point only ({} GPUs): nothing to scale against", full->n)
                                  : "the measurement was noisy (iteration times varied beyond --noise-cv): measure "
                                    "again on a quiet machine")
        .requiredValue = required;
    return;
  }
  judge.atLeast("scaling_efficiency", subject, full->busbw / base->busbw, required, "",
                fmt::format("all_reduce {} per rank: busbw {:.3f} GB/s on {} GPUs / {:.3f} GB/s on {} GPUs, the best "
                            "at fewer GPUs",
                            core::formatBytes(full->bytes), full->busbw, full->n, base->busbw, base->n));
}

// The hardware checks read the file's /inventory: a node without rows there (a file of schema 3, a
// node whose sysfs could not be read) has its checks missing, never failed.
const core::NodeInventoryRecord* inventoryOf(const results::ResultsFile& file, int node) {
  for (const auto& r : file.topology.inventory.nodes) {
    if (r.node == node) return &r;
  }
  return nullptr;
}

std::vector<const core::NicRecord*> activeRdmaPorts(const results::ResultsFile& file, int node) {
  std::vector<const core::NicRecord*> out;
  for (const auto& n : file.topology.inventory.nics) {
    if (n.node == node && n.activeRdma()) out.push_back(&n);
  }
  return out;
}

std::string whyNoGpuMemory(const results::ResultsFile& file, const core::NodeRecord& n) {
  if (n.gpus == 0) return "no GPU memory recorded (no GPU)";
  if (!file.provenance.importedFrom.empty()) return "the log's GPU names do not tell their memory";
  return "no GPU memory recorded (NVML not available)";
}

void checkGpuMemory(const Profile& profile, const results::ResultsFile& file, Judge& judge) {
  if (!profile.minGpuMemoryGb) return;
  const double required = *profile.minGpuMemoryGb;
  for (const core::NodeRecord& n : file.topology.nodes) {
    const core::RankRecord* least = nullptr;
    for (const core::RankRecord& r : file.topology.ranks) {
      if (r.node == n.node && r.gpuMemoryBytes > 0 && (least == nullptr || r.gpuMemoryBytes < least->gpuMemoryBytes)) {
        least = &r;
      }
    }
    if (least == nullptr) {
      judge.missing("gpu_memory_gb", nodeLabel(n), fmt::format(">= {:g}", required), whyNoGpuMemory(file, n))
          .requiredValue = required;
      continue;
    }
    const double gb = static_cast<double>(least->gpuMemoryBytes) / 1e9;
    judge.atLeast("gpu_memory_gb", nodeLabel(n), gb, required, "GB",
                  fmt::format("its smallest GPU: {} (GPU {}), {}", least->gpuName, least->gpuIndex,
                              file.provenance.importedFrom.empty() ? "NVML's total"
                                                                   : "as its name in the log tells it (nominal GiB)"));
  }
}

void checkNics(const Profile& profile, const results::ResultsFile& file, Judge& judge) {
  for (const core::NodeRecord& n : file.topology.nodes) {
    const auto ports = activeRdmaPorts(file, n.node);
    const bool read = inventoryOf(file, n.node) != nullptr;
    const std::string none = read ? "no active RDMA port on the node" : "the node's inventory is not in the file";
    if (profile.minNicRateGbps) {
      const double required = *profile.minNicRateGbps;
      const auto slowest = std::min_element(ports.begin(), ports.end(),
                                            [](const auto* a, const auto* b) { return a->rateGbps < b->rateGbps; });
      if (slowest == ports.end()) {
        judge.missing("nic_rate_gbps", nodeLabel(n), fmt::format(">= {:g}", required), none).requiredValue = required;
      } else {
        judge.atLeast("nic_rate_gbps", nodeLabel(n), (*slowest)->rateGbps, required, "Gb/s",
                      fmt::format("its slowest active RDMA port: {} port {} ({} of {})", (*slowest)->device,
                                  (*slowest)->port, (*slowest)->speed.empty() ? "-" : (*slowest)->speed, ports.size()));
      }
    }
    if (profile.minNicsPerGpu) {
      const double required = *profile.minNicsPerGpu;
      if (!read || n.gpus == 0) {
        judge.missing("nics_per_gpu", nodeLabel(n), fmt::format(">= {:g}", required), read ? "no GPU on the node" : none)
            .requiredValue = required;
      } else {
        judge.atLeast("nics_per_gpu", nodeLabel(n), static_cast<double>(ports.size()) / n.gpus, required, "",
                      fmt::format("{} active RDMA port(s) for {} GPUs", ports.size(), n.gpus));
      }
    }
  }
}

void checkGpuDirect(const Profile& profile, const results::ResultsFile& file, Judge& judge) {
  if (!profile.gpuDirectRequired) return;
  for (const core::NodeRecord& n : file.topology.nodes) {
    const core::NodeInventoryRecord* inv = inventoryOf(file, n.node);
    if (inv == nullptr || inv->gpuDirect == "unknown" || inv->gpuDirect.empty()) {
      judge.missing("gpudirect", nodeLabel(n), "yes",
                    inv == nullptr ? "the node's inventory is not in the file" : inv->gpuDirectHow);
      continue;
    }
    judge.equal("gpudirect", nodeLabel(n), inv->gpuDirect, "yes", inv->gpuDirect == "yes", inv->gpuDirectHow);
  }
}

void checkLinkErrors(const Profile& profile, const results::ResultsFile& file, Judge& judge) {
  if (!profile.maxLinkErrors) return;
  const auto most = static_cast<double>(*profile.maxLinkErrors);
  for (const core::NodeRecord& n : file.topology.nodes) {
    std::uint64_t grown = 0;
    int counters = 0;
    for (const core::CounterRecord& c : file.topology.inventory.counters) {
      if (c.node != n.node) continue;
      ++counters;
      grown += c.growth();
    }
    if (counters == 0) {
      judge.missing("max_link_errors", nodeLabel(n), fmt::format("<= {:g}", most),
                    "no RDMA port counters read at the run's start and end");
      continue;
    }
    Check& c = judge.equal("max_link_errors", nodeLabel(n), fmt::format("{}", grown), fmt::format("<= {:g}", most),
                           static_cast<double>(grown) <= most,
                           fmt::format("growth of {} error counters during the run", counters));
    c.measuredValue = static_cast<double>(grown);
    c.requiredValue = most;
  }
}

void checkBinding(const Profile& profile, const results::ResultsFile& file, Judge& judge) {
  if (!profile.numaBindingRequired) return;
  const std::vector<RankBinding> bindings = rankBindings(file.topology);
  for (const core::NodeRecord& n : file.topology.nodes) {
    std::size_t ranks = 0;
    std::vector<int> away;
    for (const RankBinding& b : bindings) {
      if (b.rank->node != n.node) continue;
      ++ranks;
      if (b.near < b.cpus) away.push_back(b.rank->rank);
    }
    if (ranks == 0) {
      judge.missing("numa_binding", nodeLabel(n), "every rank near its GPU",
                    "no rank with a GPU whose CPUs the file records (/topology/ranks cpus, /inventory/pcie local_cpus)");
      continue;
    }
    judge.equal("numa_binding", nodeLabel(n),
                away.empty() ? "all near" : fmt::format("ranks {} may run away from their GPU", core::formatRanks(away)),
                "every rank near its GPU", away.empty(),
                fmt::format("{} of {} ranks' CPUs all near their GPU", ranks - away.size(), ranks));
  }
}

// What is wrong with a GPU's memory for gpu_memory_health; empty when nothing.
std::string memoryTrouble(const core::GpuInventoryRecord& g) {
  std::vector<std::string> out;
  if (g.ecc == "no") out.emplace_back("ECC off");
  if (g.remapFailed == "yes") out.emplace_back("row remap failed");
  if (g.remapPending == "yes") out.emplace_back("row remap pending");
  if (g.retirePending == "yes") out.emplace_back("page retirement pending");
  return fmt::format("{}", fmt::join(out, ", "));
}

void checkGpuMemoryHealth(const Profile& profile, const results::ResultsFile& file, Judge& judge) {
  if (!profile.gpuMemoryHealthRequired) return;
  for (const core::NodeRecord& n : file.topology.nodes) {
    std::vector<std::string> bad;
    int gpus = 0;
    int eccKnown = 0;
    for (const core::GpuInventoryRecord& g : file.topology.inventory.gpus) {
      if (g.node != n.node) continue;
      ++gpus;
      eccKnown += g.ecc == "yes" || g.ecc == "no" ? 1 : 0;
      if (const std::string trouble = memoryTrouble(g); !trouble.empty()) {
        bad.push_back(fmt::format("GPU {}: {}", g.index, trouble));
      }
    }
    if (gpus == 0 || (eccKnown == 0 && bad.empty())) {
      judge.missing("gpu_memory_health", nodeLabel(n), "ECC on, no failed or pending remap",
                    gpus == 0 ? "no GPU in /inventory/gpus (NVML not available)" : "NVML reports no ECC mode");
      continue;
    }
    judge.equal("gpu_memory_health", nodeLabel(n), bad.empty() ? "ok" : fmt::format("{}", fmt::join(bad, "; ")),
                "ECC on, no failed or pending remap", bad.empty(),
                fmt::format("{} GPUs, ECC mode known on {}", gpus, eccKnown));
  }
}

// The line rate the run declared (--line-rate, in its recorded configuration), else 0.
double declaredLineRate(const results::ResultsFile& file) {
  const auto config = nlohmann::json::parse(file.provenance.runConfig, nullptr, false);
  if (config.is_discarded() || !config.is_object() || !config.contains("line_rate")) return 0;
  return config["line_rate"].is_number() ? config["line_rate"].get<double>() : 0;
}

void checkLineRate(const Profile& profile, const results::ResultsFile& file, Judge& judge) {
  if (!profile.minLineRateFraction) return;
  const double required = *profile.minLineRateFraction;
  const double declared = declaredLineRate(file);
  const auto shares = lineRateShares(file.matrices, file.topology, declared);
  for (const core::NodeRecord& n : file.topology.nodes) {
    const auto mine = std::find_if(shares.begin(), shares.end(), [&](const LineRateShare& s) { return s.node == n.node; });
    if (mine == shares.end()) {
      judge.missing("line_rate_fraction", nodeLabel(n), fmt::format(">= {:.3f}", required),
                    file.topology.nodes.size() < 2 ? "one node: no node pairs (the line rate needs 2+ nodes)"
                    : file.matrices.pairsMeasured  ? "its line rate is unknown (no active RDMA port, no --line-rate)"
                    : isImported(file)             ? "an nccl-tests log has no pairwise matrix"
                                                   : "no pairwise node matrix (run with --pairwise)")
          .requiredValue = required;
      continue;
    }
    judge.atLeast("line_rate_fraction", nodeLabel(n), mine->share(), required, "",
                  fmt::format("median of {} node pairs {:.2f} GB/s of the {:.2f} GB/s {}", mine->shares.size(),
                              mine->medianGBps, mine->lineGBps, lineRateSource(file.topology, declared, n.node)));
  }
}

// One figure of the file against the baseline's, or why it is not judged.
void judgeAgainst(const std::string& check, const std::string& subject, std::optional<double> measured,
                  const Spread& base, Judge& judge, std::vector<std::string>& notes) {
  if (base.runs < kBaselineMinRuns || !std::isfinite(base.median)) {
    notes.push_back(fmt::format("{} {}: the baseline has {} run{}, fewer than {}: not judged", check, subject,
                                base.runs, base.runs == 1 ? "" : "s", kBaselineMinRuns));
    return;
  }
  const double bar = base.bar();
  if (!measured) {
    Check& c = judge.missing(check, subject, ">= " + gbps(bar), "the file has no such figure");
    c.requiredValue = bar;
    c.unit = "GB/s";
    return;
  }
  judge.atLeast(check, subject, *measured, bar, "GB/s",
                fmt::format("baseline median {} GB/s, spread {} over {} runs: median - {:g} x max(spread, {:g} x "
                            "median)",
                            gbps(base.median), gbps(base.spread), base.runs, kBaselineSigmas, kBaselineMinSpread));
}

void checkBaseline(const Baseline& baseline, const results::ResultsFile& file, Judge& judge,
                   std::vector<std::string>& notes) {
  const auto classes = classBandwidths(file.matrices);
  for (const ClassBaseline& c : baseline.classes) {
    const auto it = classes.find(c.population);
    judgeAgainst("baseline_class_bw", c.population == "node" ? "node pairs" : "rank pairs " + c.population,
                 it == classes.end() ? std::nullopt : std::optional(it->second), c.figure, judge, notes);
  }
  const auto collectives = collectiveBandwidths(file.collectives);
  for (const CollectiveBaseline& c : baseline.collectives) {
    const auto it = collectives.find(c.key);
    judgeAgainst("baseline_busbw",
                 fmt::format("{} {} {} {}", c.key.scope, c.key.op, c.key.dtype, core::formatBytes(c.key.bytes)),
                 it == collectives.end() ? std::nullopt : std::optional(it->second), c.figure, judge, notes);
  }
}

std::string statusText(CheckStatus s) {
  switch (s) {
    case CheckStatus::kPass: return "PASS";
    case CheckStatus::kFail: return "FAIL";
    case CheckStatus::kMissing: return "MISSING";
  }
  return "MISSING";
}

// "VERDICT: NOT JUDGED (5 of 14 checks judged: 5 passed, 0 failed; 9 missing: ...)"; the failed
// checks, then the missing ones, named.
std::string verdictLine(const Verification& v) {
  const int total = static_cast<int>(v.checks.size());
  std::vector<std::string> failed;
  std::vector<std::string> missing;
  for (const Check& c : v.checks) {
    if (c.status == CheckStatus::kFail) failed.push_back(c.check + " " + c.subject);
    if (c.status == CheckStatus::kMissing) missing.push_back(c.check + " " + c.subject);
  }
  std::string line = fmt::format("VERDICT: {} ({} of {} checks judged: {} passed, {} failed",
                                 results::title(v.acceptance), total - v.missing, total, v.passed, v.failed);
  if (!failed.empty()) line += fmt::format(": {}", fmt::join(failed, ", "));
  if (!missing.empty()) {
    line += fmt::format("; {} missing{}: {}", missing.size(), v.allowMissing ? " (allowed by --allow-missing)" : "",
                        fmt::join(missing, ", "));
  }
  return line + ")";
}

}  // namespace

std::string_view name(CheckStatus s) {
  switch (s) {
    case CheckStatus::kPass: return "pass";
    case CheckStatus::kFail: return "fail";
    case CheckStatus::kMissing: return "missing";
  }
  return "missing";
}

Verification verify(const Profile& profile, const results::ResultsFile& file, bool allowMissing,
                    const Baseline* baseline) {
  Verification v;
  v.file = file.path;
  v.profile = profile;
  v.allowMissing = allowMissing;
  Judge judge{v.checks};
  checkNodes(profile, file, judge);
  checkIntra(profile, file, judge);
  checkInter(profile, file, judge, v.notes);
  checkPairs(profile, file, judge);
  checkScaling(profile, file, judge);
  checkGpuMemory(profile, file, judge);
  checkNics(profile, file, judge);
  checkGpuDirect(profile, file, judge);
  checkBinding(profile, file, judge);
  checkGpuMemoryHealth(profile, file, judge);
  checkLinkErrors(profile, file, judge);
  checkLineRate(profile, file, judge);
  if (baseline != nullptr) checkBaseline(*baseline, file, judge, v.notes);
  for (const Check& c : v.checks) {
    v.passed += c.status == CheckStatus::kPass ? 1 : 0;
    if (c.status == CheckStatus::kFail) {
      ++v.failed;
      v.reasons.push_back(fmt::format("{} {}: {} (required {})", c.check, c.subject, c.measured, c.required));
    } else if (c.status == CheckStatus::kMissing) {
      ++v.missing;
      if (!allowMissing) v.reasons.push_back(fmt::format("{} {}: not measured ({})", c.check, c.subject, c.detail));
    }
  }
  // nothing judged is never a pass, --allow-missing or not
  v.pass = v.failed == 0 && (allowMissing || v.missing == 0) && v.passed > 0;
  v.acceptance = results::acceptanceOf(verdictRecordOf(v));
  if (!file.complete) v.notes.push_back("the file is not complete (the run did not finish): judged on what it holds");
  if (!file.recoveredFrom.empty()) v.notes.push_back("read from the run's journal " + file.recoveredFrom);
  return v;
}

std::string verificationText(const Verification& v) {
  std::size_t w[4] = {5, 7, 8, 8};
  for (const Check& c : v.checks) {
    w[0] = std::max(w[0], c.check.size());
    w[1] = std::max(w[1], c.subject.size());
    w[2] = std::max(w[2], c.measured.size() + (c.unit.empty() ? 0 : c.unit.size() + 1));
    w[3] = std::max(w[3], c.required.size() + (c.unit.empty() ? 0 : c.unit.size() + 1));
  }
  const auto withUnit = [](const std::string& text, const std::string& unit) {
    return unit.empty() || text == "-" ? text : text + " " + unit;
  };
  std::string out = fmt::format("# fabricmap verify: {} against profile {} ({})\n#\n", v.file, v.profile.name,
                                v.profile.source);
  out += fmt::format("# {:<{}}  {:<{}}  {:>{}}  {:>{}}  {}\n", "check", w[0], "subject", w[1], "measured", w[2],
                     "required", w[3], "result");
  for (const Check& c : v.checks) {
    out += fmt::format("  {:<{}}  {:<{}}  {:>{}}  {:>{}}  {}\n", c.check, w[0], c.subject, w[1],
                       withUnit(c.measured, c.unit), w[2], withUnit(c.required, c.unit), w[3], statusText(c.status));
  }
  out += "#\n# how each figure was measured (thresholds judged on the large-message plateau):\n";
  for (const Check& c : v.checks) {
    if (!c.detail.empty()) out += fmt::format("#   {} {}: {}\n", c.check, c.subject, c.detail);
  }
  for (const std::string& s : v.profile.sources) out += fmt::format("# requirement: {}\n", s);
  for (const std::string& n : v.notes) out += fmt::format("# note: {}\n", n);
  out += verdictLine(v) + "\n";
  return out;
}

results::VerdictRecord verdictRecordOf(const Verification& v) {
  results::VerdictRecord record;
  record.pass = v.pass;
  record.profile = v.profile.name;
  record.profileSource = v.profile.source;
  record.checks = static_cast<int>(v.checks.size());
  record.failed = v.failed;
  record.missing = v.missing;
  record.allowMissing = v.allowMissing;
  record.reasons = fmt::format("{}", fmt::join(v.reasons, "\n"));
  return record;
}

Json verificationToJson(const Verification& v) {
  const auto orNull = [](const auto& o) { return o ? Json(*o) : Json(nullptr); };
  Json profile;
  profile["name"] = v.profile.name;
  profile["source"] = v.profile.source;
  profile["topology_class"] = orNull(v.profile.topologyClass);
  profile["gpus_per_node"] = orNull(v.profile.gpusPerNode);
  profile["gpu_model"] = orNull(v.profile.gpuModel);
  profile["min_intra_allreduce_busbw"] = orNull(v.profile.minIntraAllReduceBusbw);
  profile["min_inter_allreduce_busbw_per_nic"] = orNull(v.profile.minInterAllReduceBusbwPerNic);
  profile["nics_per_node"] = orNull(v.profile.nicsPerNode);
  profile["min_pair_fraction"] = orNull(v.profile.minPairFraction);
  profile["min_scaling_efficiency"] = orNull(v.profile.minScalingEfficiency);
  profile["min_plateau_bytes"] = v.profile.minPlateauBytes;
  profile["gpu_memory_gb"] = orNull(v.profile.minGpuMemoryGb);
  profile["nic_rate_gbps"] = orNull(v.profile.minNicRateGbps);
  profile["nics_per_gpu"] = orNull(v.profile.minNicsPerGpu);
  profile["gpudirect"] = v.profile.gpuDirectRequired ? Json("required") : Json(nullptr);
  profile["numa_binding"] = v.profile.numaBindingRequired ? Json("required") : Json(nullptr);
  profile["gpu_memory_health"] = v.profile.gpuMemoryHealthRequired ? Json("required") : Json(nullptr);
  profile["max_link_errors"] = orNull(v.profile.maxLinkErrors);
  profile["min_line_rate_fraction"] = orNull(v.profile.minLineRateFraction);
  profile["sources"] = v.profile.sources;
  Json checks = Json::array();
  for (const Check& c : v.checks) {
    Json j;
    j["check"] = c.check;
    j["subject"] = c.subject;
    j["status"] = name(c.status);
    j["measured"] = c.measuredValue ? Json(*c.measuredValue)
                                    : c.status == CheckStatus::kMissing ? Json(nullptr) : Json(c.measured);
    j["required"] = c.requiredValue ? Json(*c.requiredValue) : Json(c.required);
    j["unit"] = c.unit;
    j["detail"] = c.detail;
    checks.push_back(std::move(j));
  }
  Json out;
  out["file"] = v.file;
  out["profile"] = std::move(profile);
  out["allow_missing"] = v.allowMissing;
  out["checks"] = std::move(checks);
  out["verdict"] = results::name(v.acceptance);
  out["failed"] = v.failed;
  out["missing"] = v.missing;
  out["passed"] = v.passed;
  out["total"] = v.checks.size();
  out["reasons"] = v.reasons;
  out["notes"] = v.notes;
  return out;
}

}  // namespace fabricmap::orchestrator
