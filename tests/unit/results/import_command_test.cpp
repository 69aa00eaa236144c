// `fabricmap import`: writes a file show reads back, for every generation, with its peaks printed.
#include "tests/unit/results/nccl_tests_support.h"

namespace fabricmap::results {
namespace {

class ImportCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("fabricmap-import-test-" + std::to_string(getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(ImportCommandTest, WritesAFileShowReadsBack) {
  const std::string out = (dir_ / "imported.h5").string();
  const std::string gh = (kData / kGh200).string();
  ASSERT_EQ(orchestrator::importCommand({"nccl-tests", gh, "-o", out}), 0);
  const ResultsFile file = readResults(out);
  EXPECT_TRUE(file.complete);
  EXPECT_EQ(file.provenance.backend, "nccl-tests (imported)");
  EXPECT_EQ(file.provenance.importedFrom, "[\"" + gh + "\"]");
  EXPECT_EQ(file.provenance.worldSize, 8);
  EXPECT_EQ(file.provenance.nodeCount, 2);
  EXPECT_EQ(file.provenance.plannedSteps, 50);
  EXPECT_EQ(file.steps.size(), 50u);
  EXPECT_EQ(file.collectives.size(), 50u);
  EXPECT_DOUBLE_EQ(file.collectives.back().busbw, 123.11);
  ASSERT_EQ(file.imported.size(), 1u);
  EXPECT_EQ(file.imported[0].avgBusBandwidthLine, "# Avg bus bandwidth    : 19.7866");
  EXPECT_DOUBLE_EQ(file.imported[0].avgBusBandwidth, 19.7866);
  const auto json = toJson(file);
  EXPECT_EQ(json["imported"][0]["avg_bus_bandwidth_line"], "# Avg bus bandwidth    : 19.7866");
  EXPECT_EQ(json["provenance"]["imported_from"][0], gh);
  char* text = nullptr;
  std::size_t size = 0;
  std::FILE* mem = open_memstream(&text, &size);
  printResults(mem, file);
  std::fclose(mem);
  const std::string shown(text, size);
  std::free(text);
  EXPECT_TRUE(shown.find("# imported from nccl-tests: " + gh) != std::string::npos) << shown;
  EXPECT_TRUE(shown.find("# Avg bus bandwidth    : 19.7866") != std::string::npos) << shown;
  // an existing file is kept unless --force
  EXPECT_TRUE(usageError([&] { orchestrator::importCommand({"nccl-tests", gh, "-o", out}); }).find("--force") !=
              std::string::npos);
  EXPECT_EQ(orchestrator::importCommand({"nccl-tests", gh, "-o", out, "--force"}), 0);
  // bad input leaves no file
  const std::string bad = (dir_ / "bad.h5").string();
  const auto importOf = [&](const fs::path& log) {
    return usageError([&] { orchestrator::importCommand({"nccl-tests", log.string(), "-o", bad}); });
  };
  EXPECT_NE(importOf(dir_ / "absent.txt").find("cannot read nccl-tests log '" + (dir_ / "absent.txt").string() + "': No such file"),
            std::string::npos);
  EXPECT_NE(importOf(dir_).find("' is a directory"), std::string::npos);
  const fs::path huge = dir_ / "huge.log";  // sparse: 64 MiB and one byte of nothing
  std::ofstream(huge).close();
  fs::resize_file(huge, (64u << 20) + 1);
  EXPECT_NE(importOf(huge).find("huge.log: larger than 64 MiB, not an nccl-tests log"), std::string::npos)
      << importOf(huge);
  EXPECT_FALSE(usageError([&] { orchestrator::importCommand({"nccl-tests", gh, "-o", bad, "--op", "nope"}); }).empty());
  EXPECT_FALSE(usageError([&] { orchestrator::importCommand({"other-format", gh, "-o", bad}); }).empty());
  EXPECT_FALSE(fs::exists(bad));
}

TEST_F(ImportCommandTest, EveryGenerationImportsAndItsPeaksArePrinted) {
  for (const auto& entry : fs::directory_iterator(kGenerations)) {
    if (entry.path().extension() != ".log") continue;
    SCOPED_TRACE(entry.path().filename());
    const std::string out = (dir_ / (entry.path().stem().string() + ".h5")).string();
    testing::internal::CaptureStdout();
    const int rc = orchestrator::importCommand({"nccl-tests", entry.path().string(), "-o", out});
    const std::string printed = testing::internal::GetCapturedStdout();
    ASSERT_EQ(rc, 0);
    EXPECT_TRUE(readResults(out).complete);
    EXPECT_NE(printed.find("peak busbw out-of-place "), std::string::npos) << printed;
  }
  // what two of them print, by hand from the logs
  const std::string two = (kGenerations / "v2.13.0-blank-redop-two-tests.log").string();
  testing::internal::CaptureStdout();
  ASSERT_EQ(orchestrator::importCommand({"nccl-tests", two, "-o", (dir_ / "two.h5").string()}), 0);
  const std::string printed = testing::internal::GetCapturedStdout();
  EXPECT_NE(printed.find(two + ":40: alltoall (8 ranks), 6 rows 1 MiB..32 MiB, times -a 3 (slowest rank), out of "
                               "bounds 0 OK; peak busbw out-of-place 16.15 GB/s at 32 MiB, in-place 16.32 GB/s at "
                               "32 MiB"),
            std::string::npos) << printed;
  const ResultsFile file = readResults((dir_ / "two.h5").string());
  EXPECT_EQ(file.collectives.size(), 24u);
  EXPECT_EQ(file.imported.size(), 2u);
  const std::string failed = (kGenerations / "v2.17-all-reduce-wrong-counts-failed.log").string();
  testing::internal::CaptureStdout();
  ASSERT_EQ(orchestrator::importCommand({"nccl-tests", failed, "-o", (dir_ / "failed.h5").string()}), 0);
  EXPECT_NE(testing::internal::GetCapturedStdout().find(
                "out of bounds 3 FAILED, 3 wrong; peak busbw out-of-place 363.47 GB/s at 4 GiB, in-place 366.37 GB/s "
                "at 8 GiB"),
            std::string::npos);
  int wrong = 0;
  for (const auto& step : readResults((dir_ / "failed.h5").string()).steps) wrong += step.status == "wrong" ? 1 : 0;
  EXPECT_EQ(wrong, 3);
}

}  // namespace
}  // namespace fabricmap::results
