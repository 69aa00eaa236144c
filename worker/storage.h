// The storage feed's I/O on one rank (--storage PATH): what a training job's data loader and
// checkpoints ask of the file system, measured with the page cache kept out where the file system
// allows. Plain POSIX; no MPI (the executor runs it on the reading ranks and gathers the figures).
//
// Files: with --storage-write each reading rank writes its own file, PATH/fabricmap-storage/
// rank-<r>.dat, and removes it (and the directory, once empty) at the end; nothing else under PATH
// is written. Without, the regular files under PATH (sorted, recursively) are dealt to the reading
// ranks in turn, and each reads its own up to the bytes asked.
// The page cache: reads and writes open with O_DIRECT; where the file system refuses it (tmpfs,
// some network file systems), written files are synced and every file is evicted with
// posix_fadvise(DONTNEED) before it is read, and mincore says whether that worked.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/plan.h"

namespace fabricmap::worker {

// What one rank's I/O in one storage step did; `error` set when it failed (the I/O stops there).
struct StorageIo {
  std::uint64_t bytes = 0;
  std::uint64_t ops = 0;
  double seconds = 0;
  std::string cache;  // "direct", "dropped", "cached"
  std::string error;
};

// The file this rank writes under `path` with --storage-write.
std::string ownStorageFile(const std::string& path, int rank);

// The files the `reader`-th of `readers` reading ranks reads: its own file, or its share of the
// regular files under `path` (sorted; the run's own directory left out).
std::vector<std::string> storageFilesOf(const core::StorageStep& step, int rank, int reader, int readers);

// Why this rank cannot run `step`'s tests under its path (missing, not a directory, read-only or
// without room for the bytes when writing, another run's file in the way, no file of its own to
// read); empty when it can. Local.
std::string storageProblem(const core::StorageStep& step, int rank, int reader, int readers);

// One test on this rank's files (the step's test, bytes and block).
StorageIo runStorageTest(const core::StorageStep& step, const std::vector<std::string>& files, int rank);

// Removes what --storage-write made for this rank (its file; the directory when it is empty).
void removeOwnStorage(const std::string& path, int rank);

}  // namespace fabricmap::worker
