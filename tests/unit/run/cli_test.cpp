// `fabricmap run` option parsing: defaults, nccl-tests aliases, and every bad-input case.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/config.h"
#include "core/error.h"
#include "orchestrator/run/run_config.h"

namespace fabricmap::orchestrator {
namespace {

RunConfig parse(std::vector<std::string> args) { return parseRunOptions(args).config; }

std::string errorOf(std::vector<std::string> args) {
  try {
    parseRunOptions(args);
  } catch (const core::UsageError& e) {
    EXPECT_EQ(e.code(), core::ExitCode::kUsage);
    return e.what();
  }
  ADD_FAILURE() << "no error for the given arguments";
  return {};
}

TEST(RunOptions, DefaultsAreTheQuickSuite) {
  const RunConfig c = parse({});
  EXPECT_EQ(c.suite, "quick");
  EXPECT_EQ(c.backend, "auto");
  EXPECT_EQ(c.minBytes, 8u);
  EXPECT_EQ(c.maxBytes, 8u << 20);
  EXPECT_EQ(c.stepFactor, 4u);
  EXPECT_EQ(c.iters, 20);
  EXPECT_TRUE(c.check);
  EXPECT_EQ(c.ops.size(), 7u);
  EXPECT_EQ(c.dtypes, std::vector<core::DType>{core::DType::kFloat});
  EXPECT_EQ(c.redops, std::vector<core::RedOp>{core::RedOp::kSum});
  EXPECT_EQ(c.placement, Placement::kBoth);
  EXPECT_EQ(c.scopes.size(), 3u);
  EXPECT_TRUE(c.output.empty());
  EXPECT_TRUE(c.faults.empty());
}

TEST(RunOptions, NcclTestsShortAliases) {
  const RunConfig c = parse({"-b", "1K", "-e", "64M", "-f", "2", "-n", "50", "-w", "3", "-c", "0",
                             "-d", "double", "-o", "max", "-r", "1"});
  EXPECT_EQ(c.minBytes, 1024u);
  EXPECT_EQ(c.maxBytes, 64u << 20);
  EXPECT_EQ(c.stepFactor, 2u);
  EXPECT_EQ(c.iters, 50);
  EXPECT_EQ(c.warmup, 3);
  EXPECT_FALSE(c.check);
  EXPECT_EQ(c.dtypes, std::vector<core::DType>{core::DType::kDouble});
  EXPECT_EQ(c.redops, std::vector<core::RedOp>{core::RedOp::kMax});
  EXPECT_EQ(c.root, 1);
  const RunConfig joined = parse({"-b8", "-e32M", "-i", "1M"});
  EXPECT_EQ(joined.minBytes, 8u);
  EXPECT_EQ(joined.stepBytes, 1u << 20);
}

TEST(RunOptions, LongNamesAndLists) {
  const RunConfig c =
      parse({"--min-bytes", "16", "--max-bytes", "1M", "--step-factor", "8", "--iters", "5",
             "--warmup-iters", "0", "--dtype", "int32,float,int32", "--op", "sum,min",
             "--ops", "all_reduce,sendrecv", "--scopes", "world,inter", "--suite", "full",
             "--ranks-per-node", "2", "--output", "x.h5"});
  EXPECT_EQ(c.suite, "full");
  EXPECT_EQ(c.maxBytes, 1u << 20);  // explicit option overrides the suite
  EXPECT_EQ(c.dtypes, (std::vector<core::DType>{core::DType::kInt32, core::DType::kFloat}));
  EXPECT_EQ(c.redops, (std::vector<core::RedOp>{core::RedOp::kSum, core::RedOp::kMin}));
  EXPECT_EQ(c.ops, (std::vector<core::Op>{core::Op::kAllReduce, core::Op::kSendRecv}));
  EXPECT_EQ(c.scopes, (std::vector<core::Scope>{core::Scope::kWorld, core::Scope::kInter}));
  EXPECT_EQ(c.ranksPerNode, 2);
  EXPECT_EQ(c.output, "x.h5");
  EXPECT_EQ(parse({"-d", "all"}).dtypes.size(), 10u);
  EXPECT_EQ(parse({"-o", "all"}).redops.size(), 4u);
  EXPECT_EQ(parse({"--suite", "full"}).maxBytes, 1u << 30);
}

TEST(RunOptions, DashOIsReductionOpOrOutputFile) {
  EXPECT_EQ(parse({"-o", "prod"}).redops, std::vector<core::RedOp>{core::RedOp::kProd});
  EXPECT_EQ(parse({"-o", "prod"}).output, "");
  EXPECT_EQ(parse({"-o", "out.h5"}).output, "out.h5");
  EXPECT_EQ(parse({"-o", "runs/latest"}).output, "runs/latest");
  const RunConfig both = parse({"-o", "min,max", "-o", "results/run.h5"});
  EXPECT_EQ(both.redops.size(), 2u);
  EXPECT_EQ(both.output, "results/run.h5");
  EXPECT_NE(errorOf({"-o", "a.h5", "--output", "b.h5"}).find("output file given twice"),
            std::string::npos);
  EXPECT_NE(errorOf({"-o", "sum", "--op", "max"}).find("reduction op given twice"),
            std::string::npos);
}

TEST(RunOptions, Placement) {
  EXPECT_EQ(parse({"--in-place"}).placement, Placement::kInPlace);
  EXPECT_EQ(parse({"--out-of-place"}).placement, Placement::kOutOfPlace);
  EXPECT_EQ(parse({"--in-place", "--out-of-place"}).placement, Placement::kBoth);
  EXPECT_EQ(parse({"--placement", "in-place"}).placement, Placement::kInPlace);
  EXPECT_NE(errorOf({"--placement", "sideways"}).find("sideways"), std::string::npos);
}

TEST(RunOptions, FaultInjectionIsParsedStrictly) {
  const RunConfig c = parse({"--inject-fault", "corrupt:rank=3:op=all_reduce:step=7"});
  ASSERT_EQ(c.faults.size(), 1u);
  EXPECT_EQ(c.faults[0].rank, 3);
  EXPECT_EQ(c.faults[0].op, core::Op::kAllReduce);
  EXPECT_EQ(c.faults[0].step, 7);
  EXPECT_EQ(parse({"--inject-fault", "error:rank=0:step=2"}).faults[0].kind, core::Fault::Kind::kError);
  EXPECT_NE(errorOf({"--inject-fault", "melt:rank=1"}).find("corrupt"), std::string::npos);
  EXPECT_NE(errorOf({"--inject-fault", "corrupt:rank=x"}).find("rank"), std::string::npos);
  EXPECT_NE(errorOf({"--inject-fault", "corrupt:op=nope"}).find("nope"), std::string::npos);
  EXPECT_NE(toJsonString(c).find("corrupt:rank=3:op=all_reduce:step=7"), std::string::npos);
}

TEST(RunOptions, EveryBadInputNamesTheProblem) {
  struct Case {
    std::vector<std::string> args;
    const char* mentions;
  };
  const Case cases[] = {
      {{"--frobnicate"}, "--frobnicate"},
      {{"stray"}, "positional"},
      {{"-b", "1M", "-e", "1K"}, "larger than"},
      {{"-f", "1"}, "step-factor"},
      {{"-f", "0"}, "step-factor"},
      {{"-f", "1.5"}, "step-factor"},
      {{"-b", "0"}, "min-bytes"},
      {{"-b", "lots"}, "min-bytes"},
      {{"-e", "3Q"}, "max-bytes"},
      {{"--ops", "all_reduce,bogus"}, "bogus"},
      {{"-d", "float128"}, "float128"},
      {{"-o", "sun"}, "unknown reduction op 'sun'"},
      {{"-o", "sum,xor"}, "unknown reduction op 'sum,xor'"},
      {{"-f", "2", "-i", "8"}, "exclude each other"},
      {{"-i", "0"}, "step-bytes"},
      {{"--op", "xor"}, "xor"},
      {{"--scopes", "galaxy"}, "galaxy"},
      {{"-b", "6"}, "multiple of the float"},
      {{"-b", "8", "-d", "double", "-i", "4"}, "multiple of the double"},
      {{"-n", "0"}, "iters"},
      {{"-w", "-1"}, "warmup"},
      {{"-c", "2"}, "check"},
      {{"-r", "-1"}, "root"},
      {{"--ranks-per-node", "0"}, "ranks-per-node"},
      {{"--suite", "huge"}, "huge"},
      {{"--progress", "loud"}, "loud"},
      {{"-n"}, "iters"},
  };
  for (const Case& c : cases) {
    const std::string message = errorOf(c.args);
    EXPECT_NE(message.find(c.mentions), std::string::npos)
        << "message '" << message << "' should mention '" << c.mentions << "'";
  }
}

TEST(RunOptions, GpuSizesUnlessGiven) {
  RunConfig c = parse({});
  applyBackendDefaults(c, "mpi");
  EXPECT_EQ(c.maxBytes, 8u << 20);
  EXPECT_FALSE(c.railsAtLineRate);  // Open MPI's all_reduce reaches half the links' rate
  applyBackendDefaults(c, "nccl");
  EXPECT_EQ(c.maxBytes, 1u << 30);
  EXPECT_TRUE(c.railsAtLineRate);  // NCCL's ring reaches it: the inter scope's rails are judged
  EXPECT_EQ(c.pairBytes, 4u << 20);
  EXPECT_EQ(c.pairWindow, 64);
  RunConfig given = parse({"-e", "64M", "--pair-bytes", "1M", "--suite", "full"});
  applyBackendDefaults(given, "nccl");
  EXPECT_EQ(given.maxBytes, 64u << 20);
  EXPECT_EQ(given.pairBytes, 1u << 20);
  RunConfig full = parse({"--suite", "full"});
  applyBackendDefaults(full, "nccl");
  EXPECT_EQ(full.maxBytes, 8ull << 30);
  EXPECT_EQ(full.pairBytes, 16u << 20);
}

// A pairs-only backend (ucx): the pairwise phase by default; collectives, the training pattern
// and the scaling sweep are refused before anything runs, naming the backends that have them.
TEST(RunOptions, APairsOnlyBackendRunsThePairsAndRefusesTheRest) {
  RunConfig c = parse({});
  applyBackendDefaults(c, "ucx");
  EXPECT_FALSE(c.collectives);
  EXPECT_TRUE(c.pairwise);
  EXPECT_FALSE(c.railsAtLineRate);
  RunConfig pairs = parse({"--pairwise"});
  EXPECT_NO_THROW(applyBackendDefaults(pairs, "ucx"));
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--collectives"}, {"--ops", "all_reduce"}, {"--patterns", "pairwise,training"},
        {"--pairwise", "--scaling"}}) {
    RunConfig refused = parse(args);
    try {
      applyBackendDefaults(refused, "ucx");
      ADD_FAILURE() << args.front() << " was not refused";
    } catch (const core::UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("needs the mpi or nccl backend (this run uses ucx"), std::string::npos)
          << e.what();
    }
  }
}

// --ucx-api: tag matching unless rma is asked for, which only a backend with remote writes takes.
TEST(RunOptions, UcxApiIsTagUnlessRmaAndOnlyOnABackendThatWrites) {
  EXPECT_FALSE(parse({}).remoteWrites);
  EXPECT_FALSE(parse({"--ucx-api", "tag"}).remoteWrites);
  RunConfig rma = parse({"--ucx-api", "rma"});
  EXPECT_TRUE(rma.remoteWrites);
  EXPECT_NO_THROW(applyBackendDefaults(rma, "ucx"));
  EXPECT_NE(errorOf({"--ucx-api", "put"}).find("unknown --ucx-api 'put' (tag or rma)"), std::string::npos);
  for (const char* backend : {"mpi", "nccl"}) {
    RunConfig refused = parse({"--ucx-api", "rma"});
    try {
      applyBackendDefaults(refused, backend);
      ADD_FAILURE() << backend << " took --ucx-api rma";
    } catch (const core::UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("--ucx-api rma needs the ucx backend"), std::string::npos) << e.what();
    }
  }
}

// --pair-memory: the backend's own kind unless asked; GPU memory only where the backend's pairs
// can use it (nccl; ucx in a CUDA build), host memory never on nccl.
TEST(RunOptions, PairMemoryIsTheBackendsOwnAndCudaOnlyWhereItsPairsTakeIt) {
  const auto inGpuMemory = [](std::vector<std::string> args, const char* backend) {
    RunConfig c = parse(std::move(args));
    applyBackendDefaults(c, backend);
    return c.cudaPairs;
  };
  EXPECT_EQ(parse({}).pairMemory, PairMemory::kAuto);
  EXPECT_EQ(parse({"--pair-memory", "cuda"}).pairMemory, PairMemory::kCuda);
  EXPECT_FALSE(inGpuMemory({}, "mpi"));
  EXPECT_FALSE(inGpuMemory({}, "ucx"));
  EXPECT_TRUE(inGpuMemory({}, "nccl"));
  EXPECT_FALSE(inGpuMemory({"--pair-memory", "host"}, "ucx"));
  EXPECT_TRUE(inGpuMemory({"--pair-memory", "cuda"}, "nccl"));
  EXPECT_NE(errorOf({"--pair-memory", "gpu"}).find("unknown --pair-memory 'gpu' (auto, host or cuda)"),
            std::string::npos);
  const auto refusal = [](std::vector<std::string> args, const char* backend) {
    RunConfig c = parse(std::move(args));
    try {
      applyBackendDefaults(c, backend);
    } catch (const core::UsageError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  const std::string cudaBackends = FABRICMAP_HAVE_CUDA ? "nccl or ucx" : "nccl";
  EXPECT_NE(refusal({"--pair-memory", "cuda"}, "mpi")
                .find("--pair-memory cuda needs the " + cudaBackends + " backend (this run uses mpi"),
            std::string::npos)
      << refusal({"--pair-memory", "cuda"}, "mpi");
  if (FABRICMAP_HAVE_CUDA) {
    EXPECT_TRUE(inGpuMemory({"--pair-memory", "cuda"}, "ucx"));
  } else {
    EXPECT_NE(refusal({"--pair-memory", "cuda"}, "ucx").find("this run uses ucx"), std::string::npos);
  }
  EXPECT_NE(refusal({"--pair-memory", "host"}, "nccl")
                .find("--pair-memory host: the nccl backend measures from GPU memory only (host memory: mpi or ucx)"),
            std::string::npos)
      << refusal({"--pair-memory", "host"}, "nccl");
}

// --nic-per-rank: kept as given, resolved against the topology when the run starts (on the mpi
// backend before MPI_Init, orchestrator/run/nic_pinning.h).
TEST(RunOptions, NicPerRankIsKeptForEveryBackend) {
  EXPECT_TRUE(parse({}).nicPerRank.empty());
  for (const char* backend : {"ucx", "nccl", "mpi"}) {
    RunConfig c = parse({"--nic-per-rank", "mlx5_0:1,mlx5_1:1"});
    EXPECT_NO_THROW(applyBackendDefaults(c, backend)) << backend;
    EXPECT_EQ(c.nicPerRank, "mlx5_0:1,mlx5_1:1");
  }
  EXPECT_NE(errorOf({"--nic-per-rank", ""}).find("--nic-per-rank needs auto or a list"), std::string::npos);
}

// A pair stream is osu_bw's unless told otherwise: a window of 64 messages at every size, suite and
// backend (one acknowledgement per window, worker/mpi/pairs.cpp); --pair-window replaces it on both
// backends. The suites' message sizes keep a window's volume (and so the run time) moderate.
TEST(RunOptions, PairWindowIsOsuBwsUnlessGiven) {
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {}, {"--suite", "full"}, {"--pair-bytes", "1"}, {"--pair-bytes", "1G"}, {"--pair-bytes", "64K"}}) {
    for (const char* backend : {"mpi", "nccl"}) {
      RunConfig c = parse(args);
      applyBackendDefaults(c, backend);
      EXPECT_EQ(c.pairWindow, 64) << backend << " " << (args.empty() ? "" : args.back());
    }
  }
  const RunConfig quick = parse({});
  EXPECT_EQ(quick.pairBytes, 256u << 10);
  EXPECT_EQ(quick.pairIters, 10);
  EXPECT_EQ(quick.latencyIters, 100);
  const RunConfig full = parse({"--suite", "full"});
  EXPECT_EQ(full.pairBytes, 1u << 20);
  EXPECT_EQ(full.pairIters, 20);
  EXPECT_EQ(full.latencyIters, 1000);
  for (const char* backend : {"mpi", "nccl"}) {
    RunConfig given = parse({"--pair-window", "8", "--suite", "full"});
    applyBackendDefaults(given, backend);
    EXPECT_EQ(given.pairWindow, 8) << backend;
  }
  EXPECT_EQ(parse({"--pair-window", "1"}).pairWindow, 1);
  EXPECT_EQ(parse({"--pair-window", "1024"}).pairWindow, 1024);
  EXPECT_NE(errorOf({"--pair-window", "0"}).find("--pair-window"), std::string::npos);
  EXPECT_NE(errorOf({"--pair-window", "1025"}).find("--pair-window"), std::string::npos);
}

TEST(RunOptions, HelpIsNotAnError) {
  EXPECT_TRUE(parseRunOptions({"--help"}).help);
  EXPECT_NE(runHelpText().find("--min-bytes"), std::string::npos);
}

// Found by fuzzing: Boost 1.74 never finishes formatting its error about an argument that holds
// one of its own placeholders; such arguments are refused before Boost sees them.
TEST(RunOptions, BoostPlaceholdersInArgumentsAreRefusedNotLoopedOn) {
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"-n", "%value%"}, {"-%canonical_option%x"}, {"--output", "a%option%.h5"}}) {
    try {
      parseRunOptions(args);
      FAIL() << args[0];
    } catch (const core::UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("is not valid (it holds '%"), std::string::npos) << e.what();
    }
  }
}

// Choosing collectives (--ops, --scopes) without a phase switch asks for the sweeps only; with a
// switch, the switches decide as always.
TEST(RunOptions, ChoosingCollectivesMeansTheSweepsOnly) {
  for (const auto& args : {std::vector<std::string>{"--ops", "all_reduce"}, {"--scopes", "intra"}}) {
    const RunConfig c = parse(args);
    EXPECT_TRUE(c.collectives) << args[0];
    EXPECT_FALSE(c.pairwise || c.copies || c.training || c.scaling) << args[0];
    RunConfig nccl = c;
    applyBackendDefaults(nccl, "nccl");
    EXPECT_FALSE(nccl.copies) << args[0];  // not the default GPU copy matrix either
  }
  const RunConfig both = parse({"--ops", "all_reduce", "--collectives", "--pairwise"});
  EXPECT_TRUE(both.collectives && both.pairwise);
  const RunConfig pairs = parse({"--ops", "all_reduce", "--pairwise"});
  EXPECT_FALSE(pairs.collectives);
  EXPECT_TRUE(pairs.pairwise);
  const RunConfig all = parse({"--ops", "all"});  // given, even if it names the default
  EXPECT_FALSE(all.pairwise);
  const RunConfig def = parse({});
  EXPECT_TRUE(def.collectives && def.pairwise);
}

TEST(RunOptions, MinConfidence) {
  EXPECT_DOUBLE_EQ(parse({}).minConfidence, 0.5);
  EXPECT_DOUBLE_EQ(parse({"--min-confidence", "0.8"}).minConfidence, 0.8);
  EXPECT_THROW(parse({"--min-confidence", "1.5"}), core::UsageError);
  EXPECT_THROW(parse({"--min-confidence", "-0.1"}), core::UsageError);
}

}  // namespace
}  // namespace fabricmap::orchestrator
