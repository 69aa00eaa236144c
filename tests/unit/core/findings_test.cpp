// Finding severities and kinds: one name each, read back to the same value; an unknown name is
// none of them (a results file holding one is refused, not misread).
#include <gtest/gtest.h>

#include <set>
#include <string_view>

#include "core/findings.h"

namespace fabricmap::core {
namespace {

TEST(Findings, EveryKindAndSeverityHasOneNameThatReadsBack) {
  std::set<std::string_view> names;
  for (int k = 0; k <= static_cast<int>(FindingKind::kLinkErrors); ++k) {
    const auto kind = static_cast<FindingKind>(k);
    EXPECT_NE(name(kind), "?") << k;
    EXPECT_TRUE(names.insert(name(kind)).second) << name(kind);
    EXPECT_EQ(parseFindingKind(name(kind)), kind);
  }
  EXPECT_EQ(names.size(), 22u);
  for (const Severity s : {Severity::kError, Severity::kWarning, Severity::kInfo}) {
    EXPECT_EQ(parseSeverity(name(s)), s);
  }
  EXPECT_EQ(name(FindingKind::kNodeEgress), "node_egress");
  EXPECT_EQ(name(FindingKind::kClaimedVsMeasured), "claimed_vs_measured");
  EXPECT_EQ(name(FindingKind::kPcieDowntrained), "pcie_downtrained");
  EXPECT_EQ(name(Severity::kWarning), "warning");
}

TEST(Findings, UnknownNamesAreNone) {
  EXPECT_FALSE(parseFindingKind("nodes"));
  EXPECT_FALSE(parseFindingKind(""));
  EXPECT_FALSE(parseSeverity("ERROR"));
  EXPECT_FALSE(parseSeverity("fatal"));
}

TEST(Findings, SeveritiesSortMostSevereFirst) {
  EXPECT_LT(Severity::kError, Severity::kWarning);
  EXPECT_LT(Severity::kWarning, Severity::kInfo);
}

}  // namespace
}  // namespace fabricmap::core
