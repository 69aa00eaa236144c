// Opening what the user names (core/files.h), and printable() for quoting it.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/error.h"
#include "core/files.h"
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

TEST(ShortenWords, CutsOnlyTheWordsPastTheLimit) {
  EXPECT_EQ(shortenWords("unknown profile 'abcdefghijkl' (built-in: a, b)", 10),
            "unknown profile 'abcdefghi... (built-in: a, b)");
  EXPECT_EQ(shortenWords("wrong results:\n  rank 1\n  rank 2", 8), "wrong results:\n  rank 1\n  rank 2");
  EXPECT_EQ(shortenWords(std::string(1'200'000, 'x'), 512).size(), 515u);
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

TEST_F(TextFiles, RefusesAFifoADeviceAndASocketWithoutWaiting) {
  const std::string fifo = (dir_ / "fifo").string();
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);  // nobody writes it: opening it to read would block
  EXPECT_EQ(errorOf(fifo), "fabric file '" + fifo + "' is a FIFO, not a regular file "
                           "(a shell pipe such as <(command) is read; a named FIFO is not)");
  const std::string socketPath = (dir_ / "sock").string();
  const int s = socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  socketPath.copy(address.sun_path, sizeof address.sun_path - 1);
  ASSERT_EQ(bind(s, reinterpret_cast<const sockaddr*>(&address), sizeof address), 0);
  EXPECT_NE(errorOf(socketPath).find("is a socket, not a regular file"), std::string::npos) << errorOf(socketPath);
  close(s);
  const std::string device = (dir_ / "full");
  if (mknod(device.c_str(), S_IFCHR | 0600, makedev(1, 7)) == 0) {  // /dev/full's numbers, in the scratch folder
    EXPECT_EQ(errorOf(device), "fabric file '" + device + "' is a character device, not a regular file");
    EXPECT_THROW(requireRegularFile(device, "results file"), UsageError);
  }
  EXPECT_THROW(requireRegularFile(fifo, "results file"), UsageError);
  EXPECT_NO_THROW(requireRegularFile(write("f.h5", "x"), "results file"));
}

TEST_F(TextFiles, APipeThatStaysSilentEndsTheRead) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);  // the write end stays open and silent
  const auto started = std::chrono::steady_clock::now();
  try {
    readBounded(fds[0], "topology file", "/dev/fd/9", 100, std::chrono::milliseconds(200));
    ADD_FAILURE() << "a silent pipe was read to its end";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("sent nothing for"), std::string::npos) << e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(5));
  close(fds[0]);
  close(fds[1]);
}

TEST_F(TextFiles, DirectoriesAreNamedForWhatTheyAre) {
  EXPECT_NO_THROW(requireDirectory(dir_.string(), "--sysfs-root"));
  const std::string file = write("sys", "");
  try {
    requireDirectory(file, "--sysfs-root");
    ADD_FAILURE() << "a regular file taken for a directory";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), "--sysfs-root '" + file + "' is a regular file, not a directory");
  }
  EXPECT_THROW(requireDirectory((dir_ / "absent").string(), "--sysfs-root"), UsageError);
}

std::string outputError(const std::string& path, const OutputRules& rules) {
  try {
    checkOutput(path, rules);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST_F(TextFiles, AnOutputIsARegularFileOrAbsentAndReplacedOnlyWhenAsked) {
  OutputRules rules{.what = "report"};
  EXPECT_EQ(outputError((dir_ / "new.html").string(), rules), "");
  EXPECT_EQ(outputError("", rules), "the report path is empty");
  EXPECT_NE(outputError((dir_ / "no/such/x.html").string(), rules).find("does not exist"), std::string::npos);
  rules.createParents = true;
  EXPECT_EQ(outputError((dir_ / "made/x.html").string(), rules), "");
  EXPECT_TRUE(fs::is_directory(dir_ / "made"));
  EXPECT_FALSE(fs::exists(dir_ / "made/x.html.new"));  // the folder tried, nothing left
  rules.createParents = false;
  const std::string existing = write("old.html", "kept");
  EXPECT_EQ(outputError(existing, rules), "report '" + existing + "' exists: pass --force to replace it");
  rules.replace = true;
  EXPECT_EQ(outputError(existing, rules), "");
  rules.inputs = {existing};
  EXPECT_EQ(outputError(existing, rules), "report '" + existing + "' is also this command's input: write it elsewhere");
  EXPECT_EQ(outputError(dir_.string(), rules), "report '" + dir_.string() + "' is a directory: fabricmap writes only regular files");
  const std::string fifo = (dir_ / "fifo");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_NE(outputError(fifo, rules).find("is a FIFO, not a regular file"), std::string::npos);
  const std::string device = (dir_ / "full");
  if (mknod(device.c_str(), S_IFCHR | 0600, makedev(1, 7)) == 0) {
    EXPECT_NE(outputError(device, rules).find("is a character device"), std::string::npos);
  }
  // a link to something that is not a regular file is judged by what it points to
  fs::create_symlink(fifo, dir_ / "link");
  EXPECT_NE(outputError((dir_ / "link").string(), rules).find("is a FIFO"), std::string::npos);
  EXPECT_EQ(std::ifstream(existing).rdbuf() != nullptr, true);
}

TEST_F(TextFiles, WriteReplacingLeavesTheOldFileOrTheNewOne) {
  const std::string path = write("b.json", "old");
  writeReplacing(path, "new text\n");
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "new text\n");
  EXPECT_FALSE(fs::exists(path + ".new"));
  EXPECT_THROW(writeReplacing((dir_ / "no/such/b.json").string(), "x"), UsageError);
}

TEST_F(TextFiles, ASecondWriterIsRefusedWithTheFirstOnesName) {
  const std::string path = (dir_ / "run.h5").string();
  {
    const OutputLock first(path, "fabricmap run");
    try {
      const OutputLock second(path, "fabricmap run");
      ADD_FAILURE() << "two writers held one output";
    } catch (const UsageError& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find("is being written by another fabricmap (fabricmap run by pid " + std::to_string(getpid())),
                std::string::npos) << message;
    }
    // another process is refused too (flock is per open file, and per process here)
    const pid_t child = fork();
    if (child == 0) {
      try {
        const OutputLock other(path, "fabricmap report");
        _exit(0);
      } catch (const UsageError&) {
        _exit(7);
      }
    }
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 7) << status;
  }
  EXPECT_FALSE(fs::exists(lockPath(path)));  // released: the lock file goes with it
  EXPECT_NO_THROW(OutputLock(path, "fabricmap run"));
}

TEST_F(TextFiles, ALockLeftByAKilledWriterDoesNotBlockTheNext) {
  const std::string path = (dir_ / "run.h5").string();
  write("run.h5.lock", "fabricmap run by pid 1 on elsewhere since 2026-01-01T00:00:00Z");  // nobody holds it
  EXPECT_NO_THROW(OutputLock(path, "fabricmap run"));
}

}  // namespace
}  // namespace fabricmap::core
