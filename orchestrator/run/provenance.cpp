// Provenance (see provenance.h). Environment variables are read here, once, for launcher facts.
#include "orchestrator/run/provenance.h"

#include <algorithm>
#include <chrono>
#include <vector>
#include <cstdlib>
#include <ctime>
#include <string_view>

#include <unistd.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/config.h"
#include "worker/backends.h"

namespace fabricmap::orchestrator {
namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? v : "";
}

}  // namespace

std::string utcNow(bool compact) {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, compact ? "%Y%m%dT%H%M%SZ" : "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string shellJoin(int argc, char** argv) {
  std::string out;
  for (int i = 0; i < argc; ++i) {
    std::string a = argv[i];
    if (!out.empty()) out += ' ';
    if (a.find_first_of(" \t\"'$\\") != std::string::npos || a.empty()) {
      std::string q = "'";
      for (char c : a) q += (c == '\'') ? std::string("'\\''") : std::string(1, c);
      a = q + "'";
    }
    out += a;
  }
  return out;
}

namespace {

// This process's environment variables starting with `prefix`, sorted, "NAME=value" per line.
std::string environmentOf(std::string_view prefix) {
  std::vector<std::string> found;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    if (std::string_view(*e).starts_with(prefix)) found.emplace_back(*e);
  }
  std::sort(found.begin(), found.end());
  return fmt::format("{}", fmt::join(found, "\n"));
}

}  // namespace

core::Provenance makeProvenance(const std::string& commandLine, const std::string& backend,
                                const core::Topology& topology) {
  core::Provenance p;
  p.toolVersion = FABRICMAP_VERSION;
  p.gitRevision = FABRICMAP_GIT_REVISION;
  p.createdUtc = utcNow(false);
  p.commandLine = commandLine;
  p.backend = backend;
  const worker::LibraryVersions v = worker::libraryVersions();
  p.mpiVersion = v.mpi;
  p.mpiTransport = v.mpiTransport;
  p.ncclVersion = v.nccl;
  p.cudaRuntimeVersion = v.cudaRuntime;
  p.cudaDriverVersion = v.cudaDriver;
  p.ucxVersion = v.ucx;
  // NCCL_* and UCX_* settings change what NCCL and UCX measure (algorithms, protocols, transports)
  p.ncclEnvironment = environmentOf("NCCL_");
  p.ucxEnvironment = environmentOf("UCX_");
  p.slurmJobId = env("SLURM_JOB_ID");
  p.slurmNodelist = env("SLURM_JOB_NODELIST");
  p.slurmPartition = env("SLURM_JOB_PARTITION");
  p.slurmGpusPerNode = env("SLURM_GPUS_PER_NODE");
  // mpirun sets OMPI_COMM_WORLD_* for its ranks; srun's job steps have a step id
  p.launcher = !env("OMPI_COMM_WORLD_SIZE").empty() ? "mpirun" : (!env("SLURM_STEP_ID").empty() ? "srun" : "unknown");
  std::vector<std::string> hosts;  // distinct, in node order (emulated nodes share a host)
  for (const auto& n : topology.nodes) {
    if (std::find(hosts.begin(), hosts.end(), n.hostname) != hosts.end()) continue;
    hosts.push_back(n.hostname);
    if (!p.hostnames.empty()) p.hostnames += ',';
    p.hostnames += n.hostname;
  }
  p.worldSize = static_cast<int>(topology.ranks.size());
  p.nodeCount = static_cast<int>(topology.nodes.size());
  p.emulated = topology.emulated;
  p.ranksPerNode = topology.ranksPerNode;
  return p;
}

}  // namespace fabricmap::orchestrator
