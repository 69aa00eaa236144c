// Scope names and rank-list formatting.
#include "core/plan.h"

#include <algorithm>
#include <array>
#include <bit>
#include <iterator>
#include <map>
#include <span>
#include <tuple>

namespace fabricmap::core {
namespace {
constexpr std::array<Scope, 3> kScopes{Scope::kWorld, Scope::kIntra, Scope::kInter};
constexpr std::array<std::string_view, 3> kScopeNames{"world", "intra", "inter"};
}  // namespace

std::string_view name(Scope scope) { return kScopeNames[static_cast<std::size_t>(scope)]; }

std::span<const Scope> allScopes() { return kScopes; }

std::optional<Scope> parseScope(std::string_view text) {
  for (std::size_t i = 0; i < kScopes.size(); ++i) {
    if (kScopeNames[i] == text) return kScopes[i];
  }
  return std::nullopt;
}

std::string_view name(PairLevel level) { return level == PairLevel::kRank ? "rank" : "node"; }

std::string_view name(ScalingLevel level) { return level == ScalingLevel::kGpus ? "gpus" : "nodes"; }

std::string_view name(StorageTest test) {
  switch (test) {
    case StorageTest::kWrite: return "write";
    case StorageTest::kRandomRead: return "randread";
    case StorageTest::kRead: break;
  }
  return "read";
}

std::string_view name(CopyMethod method) {
  switch (method) {
    case CopyMethod::kCopyEngine: return "ce";
    case CopyMethod::kKernel: return "sm";
    case CopyMethod::kHost: return "host";
  }
  return "?";
}

std::vector<std::pair<int, int>> copyPairs(int localRanks) {
  std::vector<std::pair<int, int>> pairs;
  for (int a = 0; a < localRanks; ++a) {
    for (int b = a + 1; b < localRanks; ++b) pairs.emplace_back(a, b);
  }
  return pairs;
}

int circleRounds(int members) {
  if (members < 2) return 0;
  return members % 2 == 0 ? members - 1 : members;
}

std::vector<std::pair<int, int>> circleRound(int members, int round) {
  // With m = n (even) or n + 1 (odd, the extra member is the bye), member m-1 stays put and meets
  // `round`; the others pair up symmetrically around it on a circle of m-1 positions.
  std::vector<std::pair<int, int>> pairs;
  if (members < 2) return pairs;
  const int m = members % 2 == 0 ? members : members + 1;
  const int ring = m - 1;
  const auto add = [&](int a, int b) {
    if (a < members && b < members) pairs.emplace_back(std::min(a, b), std::max(a, b));
  };
  add(round % ring, m - 1);
  for (int k = 1; k < m / 2; ++k) add((round + k) % ring, (round - k + ring) % ring);
  return pairs;
}

bool aStreamsFirst(int a, int b) { return std::popcount(static_cast<unsigned>(a ^ b)) % 2 == 1; }

std::vector<std::pair<int, int>> pairsOf(const PairStep& step) {
  return step.pairs.empty() ? circleRound(step.members, step.round) : step.pairs;
}

namespace {

// The parts a pair holds: those one end claims and the other does not.
std::vector<int> heldBy(const std::vector<std::vector<int>>& claims, int a, int b) {
  const auto of = [&](int m) {
    return m >= 0 && static_cast<std::size_t>(m) < claims.size() ? std::span<const int>(claims[static_cast<std::size_t>(m)])
                                                                 : std::span<const int>();
  };
  std::vector<int> held;
  std::set_symmetric_difference(of(a).begin(), of(a).end(), of(b).begin(), of(b).end(), std::back_inserter(held));
  return held;
}

// One round being packed: its members, and how many of its pairs hold each part.
struct OpenRound {
  std::vector<bool> members;
  std::vector<int> held;
  static std::size_t at(int i) { return static_cast<std::size_t>(i); }
  bool busy(int m) const { return at(m) < members.size() && members[at(m)]; }
  int holding(int part) const { return at(part) < held.size() ? held[at(part)] : 0; }
  bool fits(int a, int b, const std::vector<int>& parts, const std::map<int, int>& capacity) const {
    return !busy(a) && !busy(b) &&
           std::all_of(parts.begin(), parts.end(), [&](int p) { return holding(p) < capacity.at(p); });
  }
  void add(int a, int b, const std::vector<int>& parts) {
    for (int m : {a, b}) {
      if (members.size() <= at(m)) members.resize(at(m) + 1, false);
      members[at(m)] = true;
    }
    for (int p : parts) {
      if (held.size() <= at(p)) held.resize(at(p) + 1, 0);
      ++held[at(p)];
    }
  }
};

// How many pairs of a round may hold each part: its width (one where none is given), unless the
// part needs over kHot times the rounds the typical (median) part does (the leaf of a fault,
// whose every pair looks slow; a pod's switch above several leaves is held by about as many times
// the pairs as it has leaves) and over kCrowded times the rounds that the busiest member or the
// typical part needs: it then holds at most its pairs over that many rounds at once. Two pairs
// through one leaf's uplinks may meet on a cable (routing by destination), which a healthy leaf
// whose pairs met in the first pass would then show again in every retest, so such sharing is
// kept for the parts that would hold the phase far longer without it.
constexpr int kHot = 4;
constexpr int kCrowded = 3;
std::map<int, int> capacities(const std::vector<std::pair<int, int>>& pairs, const std::vector<std::vector<int>>& held,
                              const PartWidths& widths) {
  std::map<int, int> load;
  std::map<int, int> degree;
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    ++degree[pairs[i].first];
    ++degree[pairs[i].second];
    for (int p : held[i]) ++load[p];
  }
  if (load.empty()) return load;
  const auto widthOf = [&](int part) {
    const auto it = widths.find(part);
    return it == widths.end() ? 1 : std::max(1, it->second);
  };
  const auto roundsOf = [&](int part, int n) { return (n + widthOf(part) - 1) / widthOf(part); };
  std::vector<int> needs;
  for (const auto& [part, n] : load) needs.push_back(roundsOf(part, n));
  std::nth_element(needs.begin(), needs.begin() + static_cast<std::ptrdiff_t>(needs.size() / 2), needs.end());
  int busiest = 0;
  for (const auto& [member, n] : degree) busiest = std::max(busiest, n);
  const int typical = needs[needs.size() / 2];
  const int rounds = std::max(busiest, typical);
  for (auto& [part, n] : load) {
    const int need = roundsOf(part, n);
    n = need > kHot * typical && need > kCrowded * rounds ? (n + rounds - 1) / rounds : widthOf(part);
  }
  return load;
}

// The lanes of packRounds: each lane cable a pair holds (LaneCables) is a part of its own,
// numbered past every claimed part.
class Lanes {
 public:
  Lanes(const std::vector<std::vector<int>>& claims, const std::vector<std::vector<int>>& lanes)
      : cables_(claims, lanes) {
    for (const auto& mine : claims) {
      for (int part : mine) next_ = std::max(next_, part + 1);
    }
  }

  // The lane parts pair (a, b) holds beside its claimed parts.
  std::vector<int> of(int a, int b) {
    std::vector<int> out;
    for (const LaneCable& cable : cables_.of(a, b)) {
      const auto [it, added] = ids_.try_emplace(cable, next_);
      if (added) ++next_;
      out.push_back(it->second);
    }
    return out;
  }

  // Each lane part's capacity: its part's over the part's lanes, rounded up.
  void addCapacities(std::map<int, int>& capacity) const {
    for (const auto& [cable, id] : ids_) {
      const auto it = capacity.find(cable.part);
      const int of = it == capacity.end() ? 1 : it->second;
      const int lanes = cables_.lanesOf(cable.part);
      capacity[id] = std::max(1, (of + lanes - 1) / lanes);
    }
  }

 private:
  LaneCables cables_;
  std::map<LaneCable, int> ids_;
  int next_ = 0;
};

}  // namespace

LaneCables::LaneCables(std::vector<std::vector<int>> claims, std::vector<std::vector<int>> lanes)
    : claims_(std::move(claims)), lanes_(std::move(lanes)) {
  for (std::size_t m = 0; m < claims_.size(); ++m) {
    for (std::size_t i = 0; i < claims_[m].size(); ++i) {
      const int lane = laneAt(m, i);
      if (lane >= 0) count_[claims_[m][i]] = std::max(count_[claims_[m][i]], lane + 1);
    }
  }
}

std::vector<LaneCable> LaneCables::of(int a, int b) const {
  std::vector<LaneCable> out;
  for (int part : heldBy(claims_, a, b)) {
    const auto count = count_.find(part);
    if (count == count_.end()) continue;
    const bool aUnder = laneOf(a, part) != kNotClaimed;
    const int under = laneOf(aUnder ? a : b, part);
    const int outside = ownLane(aUnder ? b : a);
    if (under >= 0) out.push_back({part, 0, under});
    if (outside >= 0) out.push_back({part, 1, outside % count->second});
  }
  return out;
}

int LaneCables::lanesOf(int part) const {
  const auto it = count_.find(part);
  return it == count_.end() ? 0 : it->second;
}

int LaneCables::laneAt(std::size_t m, std::size_t i) const {
  return m < lanes_.size() && i < lanes_[m].size() ? lanes_[m][i] : -1;
}

int LaneCables::laneOf(int m, int part) const {
  if (m < 0 || static_cast<std::size_t>(m) >= claims_.size()) return kNotClaimed;
  const auto& mine = claims_[static_cast<std::size_t>(m)];
  const auto it = std::lower_bound(mine.begin(), mine.end(), part);
  if (it == mine.end() || *it != part) return kNotClaimed;
  return laneAt(static_cast<std::size_t>(m), static_cast<std::size_t>(it - mine.begin()));
}

int LaneCables::ownLane(int m) const {
  if (m < 0 || static_cast<std::size_t>(m) >= lanes_.size()) return -1;
  const auto& mine = lanes_[static_cast<std::size_t>(m)];
  return mine.empty() ? -1 : *std::max_element(mine.begin(), mine.end());
}

Rounds packRounds(const std::vector<std::pair<int, int>>& pairs, const std::vector<std::vector<int>>& claims,
                  const PartWidths& widths, const std::vector<std::vector<int>>& lanes) {
  std::vector<std::vector<int>> held;
  for (const auto& [a, b] : pairs) held.push_back(heldBy(claims, a, b));
  std::map<int, int> capacity = capacities(pairs, held, widths);
  Lanes laneParts(claims, lanes);
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    const std::vector<int> more = laneParts.of(pairs[i].first, pairs[i].second);
    held[i].insert(held[i].end(), more.begin(), more.end());
  }
  laneParts.addCapacities(capacity);
  Rounds rounds;
  std::vector<OpenRound> open;
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    const auto [a, b] = pairs[i];
    std::size_t r = 0;
    while (r < rounds.size() && !open[r].fits(a, b, held[i], capacity)) ++r;
    if (r == rounds.size()) {
      rounds.emplace_back();
      open.emplace_back();
    }
    rounds[r].emplace_back(a, b);
    open[r].add(a, b, held[i]);
  }
  return rounds;
}

}  // namespace fabricmap::core
