// Findings folded by culprit (see culprits.h).
#include "results/culprits.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>
#include <utility>

#include <fmt/format.h>

#include "core/units.h"

namespace fabricmap::results {
namespace {

// "0-3,5" (core::formatRanks' form) -> {0, 1, 2, 3, 5}; empty when it does not parse.
std::vector<int> rankList(std::string_view text) {
  constexpr int kMostRanks = 1 << 20;  // a damaged file must not make us count forever
  std::vector<int> out;
  while (!text.empty()) {
    int first = 0;
    int last = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), first);
    if (ec != std::errc{}) return {};
    last = first;
    if (end != text.data() + text.size() && *end == '-') {
      auto [end2, ec2] = std::from_chars(end + 1, text.data() + text.size(), last);
      if (ec2 != std::errc{} || last < first || last - first > kMostRanks) return {};
      end = end2;
    }
    for (int r = first; r <= last; ++r) out.push_back(r);
    text.remove_prefix(static_cast<std::size_t>(end - text.data()));
    if (text.empty()) break;
    if (text.front() != ',') return {};
    text.remove_prefix(1);
  }
  return out;
}

// The ranks a data_corruption row names, from the subject forms the analysis writes for a
// collective ("rank 3 (host)", "ranks 0-3 (host-a, host-b)") and a rank pair ("rank 1 <-> rank 2
// (hosts)"). Node pairs and GPU-pair copies name nodes and GPUs: none.
std::vector<int> corruptedRanks(std::string_view subject) {
  const auto word = [](std::string_view s) { return s.substr(0, std::min(s.find(' '), s.size())); };
  if (subject.starts_with("ranks ")) return rankList(word(subject.substr(6)));
  if (!subject.starts_with("rank ")) return {};
  subject.remove_prefix(5);
  std::vector<int> out = rankList(word(subject));
  if (out.size() != 1) return {};
  subject.remove_prefix(word(subject).size());
  if (subject.starts_with(" <-> rank ")) {
    const std::vector<int> other = rankList(word(subject.substr(10)));
    if (other.size() != 1) return {};
    out.push_back(other.front());
  }
  return out;
}

// The rank each corruption row is charged to (-1: none, the row keeps its subject), by the rule
// in culprits.h: repeatedly, of the ranks named by more uncharged rows than every rank they share
// such a row with, the one named most (the lowest on a tie) takes all its uncharged rows.
std::vector<int> chargedRanks(const std::vector<core::Finding>& findings) {
  std::vector<std::vector<int>> named(findings.size());
  for (std::size_t i = 0; i < findings.size(); ++i) {
    if (findings[i].kind != core::FindingKind::kDataCorruption) continue;
    named[i] = corruptedRanks(findings[i].subject);
    std::sort(named[i].begin(), named[i].end());
    named[i].erase(std::unique(named[i].begin(), named[i].end()), named[i].end());
  }
  std::vector<int> charged(findings.size(), -1);
  while (true) {
    std::map<int, int> rows;  // rank -> uncharged rows naming it
    for (std::size_t i = 0; i < findings.size(); ++i) {
      if (charged[i] < 0) for (int r : named[i]) ++rows[r];
    }
    std::map<int, int> partner;  // rank -> the most rows of a rank it shares an uncharged row with
    for (std::size_t i = 0; i < findings.size(); ++i) {
      if (charged[i] >= 0) continue;
      for (int r : named[i]) {
        for (int q : named[i]) {
          if (q != r) partner[r] = std::max(partner[r], rows[q]);
        }
      }
    }
    int culprit = -1;
    for (const auto& [r, n] : rows) {
      if (n > partner[r] && (culprit < 0 || n > rows[culprit])) culprit = r;
    }
    if (culprit < 0) return charged;
    for (std::size_t i = 0; i < findings.size(); ++i) {
      if (charged[i] < 0 && std::binary_search(named[i].begin(), named[i].end(), culprit)) charged[i] = culprit;
    }
  }
}

// "rank 3 (node1)": the subject of a culprit rank, as the analysis names a single rank; a row
// that already names just that rank lends its subject (with the host as the run wrote it).
std::string rankSubject(int rank, const std::vector<core::Finding>& evidence, const core::Topology& topology) {
  for (const auto& f : evidence) {
    const std::vector<int> ranks = corruptedRanks(f.subject);
    if (ranks.size() == 1 && ranks.front() == rank && f.subject.starts_with("rank ")) return f.subject;
  }
  for (const auto& r : topology.ranks) {
    if (r.rank != rank) continue;
    for (const auto& n : topology.nodes) {
      if (n.node == r.node) return fmt::format("rank {} ({})", rank, n.name);
    }
  }
  return fmt::format("rank {}", rank);
}

// NaN (no figure) sorts after every figure.
double sortable(double standingValue) {
  return std::isnan(standingValue) ? std::numeric_limits<double>::infinity() : standingValue;
}

// Whether a is a worse figure than b: further from its baseline, then the larger count or
// latency (the smaller bandwidth) where both stand alike (wrong elements have no baseline).
bool worse(const core::Finding& a, const core::Finding& b) {
  const double sa = sortable(standing(a));
  const double sb = sortable(standing(b));
  if (sa != sb) return sa < sb;
  const double ma = std::isnan(a.measured) ? 0 : a.measured;
  const double mb = std::isnan(b.measured) ? 0 : b.measured;
  return higherIsBetter(a.unit) ? ma < mb : ma > mb;
}

}  // namespace

bool higherIsBetter(std::string_view unit) {
  return unit == "GB/s" || unit == "MB/s" || unit == "kB/s" || unit == "efficiency";
}

double standing(const core::Finding& f) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (!std::isfinite(f.measured) || !std::isfinite(f.expected)) return nan;
  if (higherIsBetter(f.unit)) return f.expected > 0 ? f.measured / f.expected : nan;
  if (f.expected > 0) return f.measured > 0 ? f.expected / f.measured : nan;
  return f.expected == 0 && f.measured > 0 ? 0.0 : nan;
}

std::string figureText(const core::Finding& f) {
  if (!std::isfinite(f.measured) || f.unit.empty()) return {};  // a number without a unit says nothing
  // bandwidth in the unit that fits it (an emulated link moves MB/s)
  const auto text = [&](double v) { return f.unit == "GB/s" ? core::formatRate(v) : fmt::format("{:.4g} {}", v, f.unit); };
  if (std::isfinite(f.expected) && f.expected > 0) {
    return fmt::format("{} = {:.2f}x of {}", text(f.measured), f.measured / f.expected, text(f.expected));
  }
  return text(f.measured);
}

std::vector<Culprit> groupCulprits(const std::vector<core::Finding>& findings, const core::Topology& topology) {
  const std::vector<int> charged = chargedRanks(findings);
  std::vector<Culprit> culprits;
  std::map<std::pair<core::FindingKind, std::string>, std::size_t> index;  // (kind, key) -> culprit
  std::vector<int> rankOf;                                           // per culprit: the charged rank or -1
  for (std::size_t i = 0; i < findings.size(); ++i) {
    const core::Finding& f = findings[i];
    const std::string key = charged[i] >= 0 ? fmt::format("\x01rank {}", charged[i]) : f.subject;
    const auto [it, added] = index.try_emplace({f.kind, key}, culprits.size());
    if (added) {
      culprits.push_back({f.severity, f.kind, f.subject, {}, f.confidence});
      rankOf.push_back(charged[i]);
    }
    Culprit& c = culprits[it->second];
    c.severity = std::min(c.severity, f.severity);  // most severe first
    c.confidence = std::max(c.confidence, f.confidence);
    c.evidence.push_back(f);
  }
  for (std::size_t i = 0; i < culprits.size(); ++i) {
    Culprit& c = culprits[i];
    std::stable_sort(c.evidence.begin(), c.evidence.end(), worse);
    if (rankOf[i] >= 0) c.subject = rankSubject(rankOf[i], c.evidence, topology);
  }
  std::stable_sort(culprits.begin(), culprits.end(), [](const Culprit& a, const Culprit& b) {
    if (a.severity != b.severity) return a.severity < b.severity;
    return sortable(standing(a.worst())) < sortable(standing(b.worst()));
  });
  return culprits;
}

}  // namespace fabricmap::results
