// Scope names and rank-list formatting.
#include "core/plan.h"

#include <array>



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

}  // namespace fabricmap::core
