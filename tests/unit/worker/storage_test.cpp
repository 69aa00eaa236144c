// The storage feed's I/O on real files in a temporary directory: writing the run's own file,
// reading it in sequence and at random, the page cache kept out (or said not to be), what makes a
// path unusable, how found files are dealt to the reading ranks, and that only the run's own
// files are removed.
#include "worker/storage.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace fabricmap::worker {
namespace {

namespace fs = std::filesystem;

class StorageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("fabricmap-storage-test-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  core::StorageStep stepOf(core::StorageTest test, bool own, std::uint64_t bytes, std::uint64_t block) const {
    core::StorageStep s;
    s.test = test;
    s.path = dir_.string();
    s.ranks = {0, 1};
    s.ownFiles = own;
    s.bytes = bytes;
    s.blockBytes = block;
    s.seconds = 0.2;
    return s;
  }
  void writeFile(const std::string& name, std::size_t bytes) const {
    fs::create_directories((dir_ / name).parent_path());
    std::ofstream out(dir_ / name, std::ios::binary);
    const std::string chunk(bytes, 'x');
    out << chunk;
  }

  fs::path dir_;
};

TEST_F(StorageTest, WritesReadsAndRemovesTheRunsOwnFile) {
  const core::StorageStep write = stepOf(core::StorageTest::kWrite, true, 3u << 20, 1u << 20);
  ASSERT_EQ(storageProblem(write, 0, 0, 2), "");
  const std::vector<std::string> files = storageFilesOf(write, 0, 0, 2);
  ASSERT_EQ(files, std::vector<std::string>{ownStorageFile(dir_.string(), 0)});
  const StorageIo wrote = runStorageTest(write, files, 0);
  ASSERT_EQ(wrote.error, "");
  EXPECT_EQ(wrote.bytes, 3u << 20);
  EXPECT_EQ(wrote.ops, 3u);
  EXPECT_GT(wrote.seconds, 0);
  EXPECT_TRUE(wrote.cache == "direct" || wrote.cache == "dropped" || wrote.cache == "cached") << wrote.cache;
  EXPECT_EQ(fs::file_size(files.front()), 3u << 20);
  // a second run's check finds the file in its way
  EXPECT_NE(storageProblem(write, 0, 0, 2).find("exists"), std::string::npos);

  const StorageIo read = runStorageTest(stepOf(core::StorageTest::kRead, true, 3u << 20, 1u << 20), files, 0);
  ASSERT_EQ(read.error, "");
  EXPECT_EQ(read.bytes, 3u << 20);
  EXPECT_EQ(read.ops, 3u);
  const StorageIo random = runStorageTest(stepOf(core::StorageTest::kRandomRead, true, 3u << 20, 4096), files, 0);
  ASSERT_EQ(random.error, "");
  EXPECT_GT(random.ops, 0u);
  EXPECT_EQ(random.bytes, random.ops * 4096);
  EXPECT_GE(random.seconds, 0.2);

  writeFile("data/keep.bin", 4096);  // not the run's: stays
  removeOwnStorage(dir_.string(), 0);
  EXPECT_FALSE(fs::exists(files.front()));
  EXPECT_FALSE(fs::exists(fs::path(files.front()).parent_path()));
  EXPECT_TRUE(fs::exists(dir_ / "data/keep.bin"));
}

// Without --storage-write the files found under the path are dealt to the readers in turn, the
// run's own directory left out; a reader without one cannot run.
TEST_F(StorageTest, FoundFilesAreDealtToTheReaders) {
  writeFile("b/2.bin", 8192);
  writeFile("a/1.bin", 8192);
  writeFile("c.bin", 8192);
  writeFile("fabricmap-storage/rank-0.dat", 8192);
  const core::StorageStep read = stepOf(core::StorageTest::kRead, false, 1u << 20, 4096);
  EXPECT_EQ(storageFilesOf(read, 0, 0, 2),
            (std::vector<std::string>{(dir_ / "a/1.bin").string(), (dir_ / "c.bin").string()}));
  EXPECT_EQ(storageFilesOf(read, 1, 1, 2), std::vector<std::string>{(dir_ / "b/2.bin").string()});
  EXPECT_EQ(storageProblem(read, 1, 1, 2), "");
  EXPECT_NE(storageProblem(read, 3, 3, 4).find("no file under"), std::string::npos);
  const StorageIo io = runStorageTest(read, storageFilesOf(read, 0, 0, 2), 0);
  ASSERT_EQ(io.error, "");
  EXPECT_EQ(io.bytes, 16384u);  // both files, whole
}

TEST_F(StorageTest, AnUnusablePathIsNamed) {
  core::StorageStep write = stepOf(core::StorageTest::kWrite, true, 1u << 20, 1u << 20);
  write.path = (dir_ / "missing").string();
  EXPECT_NE(storageProblem(write, 0, 0, 1).find("No such file or directory"), std::string::npos);
  writeFile("plain", 10);
  write.path = (dir_ / "plain").string();
  EXPECT_NE(storageProblem(write, 0, 0, 1).find("is not a directory"), std::string::npos);
  write.path = dir_.string();
  write.bytes = std::uint64_t{1} << 60;  // more than any disk
  EXPECT_NE(storageProblem(write, 0, 0, 1).find("free"), std::string::npos);
  // /proc is not a place to write
  write.path = "/proc";
  write.bytes = 4096;
  EXPECT_NE(storageProblem(write, 0, 0, 1), "");
}

}  // namespace
}  // namespace fabricmap::worker
