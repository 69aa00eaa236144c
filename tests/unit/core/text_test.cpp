// Text from files fabricmap did not write: printable() and readUserFile().
#include <gtest/gtest.h>

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "core/error.h"
#include "core/text.h"

namespace fabricmap::core {
namespace {

namespace fs = std::filesystem;

class TextFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "fabricmap-text-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string write(const std::string& name, const std::string& text) {
    const fs::path p = dir_ / name;
    std::ofstream(p, std::ios::binary) << text;
    return p.string();
  }
  static std::string errorOf(const std::string& path, std::size_t limit = 100) {
    try {
      readUserFile(path, "fabric file", limit);
    } catch (const UsageError& e) {
      return e.what();
    }
    return "";
  }
  fs::path dir_;
};

TEST(Printable, EscapesControlBytesAndCuts) {
  EXPECT_EQ(printable("leaf1", 40), "leaf1");
  EXPECT_EQ(printable(std::string("a\x01\xff", 3), 40), "a\\x01\\xff");
  EXPECT_EQ(printable("abcdef", 3), "abc...");
}

TEST_F(TextFiles, ReadsAWholeFileBelowTheLimit) {
  const std::string text = "node01 -> leaf1\n" + std::string(70000, 'x') + "\n";  // past one read's buffer
  EXPECT_EQ(readUserFile(write("f.txt", text), "fabric file", 1 << 20), text);
  EXPECT_EQ(readUserFile(write("empty.txt", ""), "fabric file", 10), "");
}

TEST_F(TextFiles, StopsOneBytePastTheLimit) {
  const std::string path = write("big.txt", std::string(200000, 'y'));
  EXPECT_EQ(readUserFile(path, "fabric file", 100).size(), 101u);  // the parser refuses it by size
  EXPECT_EQ(readUserFile(path, "fabric file", 199999).size(), 200000u);
  EXPECT_EQ(readUserFile(path, "fabric file", 200000).size(), 200000u);
}

TEST_F(TextFiles, NamesWhatItCouldNotRead) {
  const std::string absent = (dir_ / "absent.txt").string();
  EXPECT_EQ(errorOf(absent), "cannot read fabric file '" + absent + "': No such file or directory");
  EXPECT_EQ(errorOf(dir_.string()), "fabric file '" + dir_.string() + "' is a directory");
  const std::string hostile = (dir_ / "a\nb").string();
  EXPECT_NE(errorOf(hostile).find("a\\x0ab"), std::string::npos) << errorOf(hostile);
}

TEST_F(TextFiles, ReadsAPipe) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  ASSERT_EQ(::write(fds[1], "spine\n", 6), 6);  // the pipe holds it; the reader sees EOF after it
  close(fds[1]);
  EXPECT_EQ(readUserFile("/dev/fd/" + std::to_string(fds[0]), "topology file", 100), "spine\n");
  close(fds[0]);
}

}  // namespace
}  // namespace fabricmap::core
