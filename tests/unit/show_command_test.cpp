// `fabricmap show --rules`: one line per analysis rule, in the order they run.
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "orchestrator/analysis/analysis.h"
#include "orchestrator/commands.h"

namespace fabricmap::orchestrator {
namespace {

TEST(ShowCommand, RulesListsEveryRuleInOrderOnePerLine) {
  testing::internal::CaptureStdout();
  ASSERT_EQ(showCommand({"--rules"}), 0);
  std::istringstream text(testing::internal::GetCapturedStdout());
  std::size_t i = 0;
  for (std::string line; std::getline(text, line); ++i) {
    ASSERT_LT(i, analysisRules().size()) << line;
    const AnalysisRule& rule = analysisRules()[i];
    EXPECT_TRUE(line.starts_with(std::string(rule.name) + " ")) << line;
    EXPECT_NE(line.find(rule.description), std::string::npos) << line;
  }
  EXPECT_EQ(i, analysisRules().size());
  EXPECT_GE(i, 10u);
}

}  // namespace
}  // namespace fabricmap::orchestrator
