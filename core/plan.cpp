// Scope names and rank-list formatting.
#include "core/plan.h"

#include <algorithm>
#include <array>
#include <iterator>
#include <span>

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

// One round being packed: the members and the parts its pairs hold.
struct OpenRound {
  std::vector<bool> members;
  std::vector<bool> parts;
  static bool taken(const std::vector<bool>& v, int i) { return static_cast<std::size_t>(i) < v.size() && v[static_cast<std::size_t>(i)]; }
  static void take(std::vector<bool>& v, int i) {
    if (v.size() <= static_cast<std::size_t>(i)) v.resize(static_cast<std::size_t>(i) + 1, false);
    v[static_cast<std::size_t>(i)] = true;
  }
  bool fits(int a, int b, const std::vector<int>& held) const {
    return !taken(members, a) && !taken(members, b) &&
           std::none_of(held.begin(), held.end(), [&](int p) { return taken(parts, p); });
  }
  void add(int a, int b, const std::vector<int>& held) {
    take(members, a);
    take(members, b);
    for (int p : held) take(parts, p);
  }
};

}  // namespace

Rounds packRounds(const std::vector<std::pair<int, int>>& pairs, const std::vector<std::vector<int>>& claims) {
  Rounds rounds;
  std::vector<OpenRound> open;
  for (const auto& [a, b] : pairs) {
    const std::vector<int> held = heldBy(claims, a, b);
    std::size_t r = 0;
    while (r < rounds.size() && !open[r].fits(a, b, held)) ++r;
    if (r == rounds.size()) {
      rounds.emplace_back();
      open.emplace_back();
    }
    rounds[r].emplace_back(a, b);
    open[r].add(a, b, held);
  }
  return rounds;
}

}  // namespace fabricmap::core
