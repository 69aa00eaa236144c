// `fabricmap run`'s option table and its suites (run_config parses what they describe). Internal
// to orchestrator/run.
#pragma once

#include <boost/program_options.hpp>
#include <cstdint>
#include <string>

namespace fabricmap::orchestrator {

// A suite (--suite quick|full): the defaults of every size and count it sets.
struct Suite {
  const char* name;
  const char* minBytes;
  const char* maxBytes;
  int stepFactor;
  int iters;
  int warmup;
  // A pair stream moves 64 of these per window (osu_bw's): 16 MiB (quick) and 64 MiB (full) in
  // flight, past host-memory MPI's plateau; the pairwise phase takes as long as it did with the
  // earlier 8 MiB windows of 4 MiB and 16 MiB messages (measured, 4 ranks on host memory).
  const char* pairBytes;
  int pairIters;
  int latencyIters;
  // On GPUs (the nccl backend) sizes must be far larger to reach NVLink's plateau (REFERENCE.md:
  // busbw plateaus only at GiB messages on NVSwitch systems).
  const char* gpuMaxBytes;
  // 64 per window: 256 MiB (quick) and 1 GiB (full) in flight, the volume per stream of the
  // earlier single 256 MiB and 1 GiB messages
  const char* gpuPairBytes;
  const char* copyBytes;  // host memory copies (--copies on the mpi backend)
  const char* gpuCopyBytes;
  int copyIters;
  int seqLen;  // training pattern shape: host memory, then GPUs
  int hidden;
  int gpuSeqLen;
  int gpuHidden;
  int trainIters;
  const char* scalingBytes;
  const char* gpuScalingBytes;
};

// The suite of that name; UsageError for another.
const Suite& suiteNamed(const std::string& name);

// The largest pairwise message: MPI counts are ints, and a bigger one says nothing new.
constexpr std::uint64_t kMaxPairBytes = 1ull << 30;
// A pairwise stream's window: osu_bw's 64 messages per iteration, acknowledged once per window.
constexpr int kPairWindow = 64;

// Every option of `fabricmap run`, in --help's order.
boost::program_options::options_description describeOptions();

}  // namespace fabricmap::orchestrator
