// Host facts from libc and /proc (see host_probe.h).
#include "topologies/host_probe.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>

#include <fmt/format.h>

#include "core/config.h"

namespace fabricmap::topologies {

core::HostProbe probeHost() {
  core::HostProbe probe;
  probe.tool = fmt::format("fabricmap {} ({})", FABRICMAP_VERSION, FABRICMAP_GIT_REVISION);
  // A simulated host (the sim build) has no CPUs, memory, GPUs or kernel of its own: the simulating
  // machine's would be judged as every node's (one boot id: one machine; its 2 CPUs: oversubscribed).
  if constexpr (FABRICMAP_HAVE_SIM) return probe;
  std::array<char, 256> host{};
  if (gethostname(host.data(), host.size() - 1) == 0) probe.hostname = host.data();
  cpu_set_t mask;
  CPU_ZERO(&mask);
  if (sched_getaffinity(0, sizeof mask, &mask) == 0) {
    probe.cpus = CPU_COUNT(&mask);
    probe.cpuMask.assign(CPU_SETSIZE / 64, 0);
    for (int c = 0; c < CPU_SETSIZE; ++c) {
      if (CPU_ISSET(c, &mask)) probe.cpuMask[static_cast<std::size_t>(c / 64)] |= std::uint64_t{1} << (c % 64);
    }
  }
  unsigned cpu = 0;
  unsigned node = 0;
  if (getcpu(&cpu, &node) == 0) {
    probe.cpu = static_cast<int>(cpu);
    probe.numaNode = static_cast<int>(node);
  }
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  std::uint64_t kib = 0;
  std::string unit;
  while (meminfo >> key >> kib >> unit) {
    if (key == "MemAvailable:") {
      probe.memAvailableBytes = kib * 1024;
      break;
    }
  }
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/driver/nvidia/gpus", ec)) {
    if (entry.is_directory(ec)) ++probe.gpuCount;
  }
  probe.visibleGpus = probe.gpuCount;
  if (const char* visible = std::getenv("CUDA_VISIBLE_DEVICES"); visible != nullptr) {
    // a comma list of indices or UUIDs; an empty value hides every GPU
    const std::string list(visible);
    const int listed = list.empty() ? 0 : static_cast<int>(std::count(list.begin(), list.end(), ',')) + 1;
    probe.visibleGpus = std::min(probe.gpuCount, listed);
  }
  // one line of 36 characters (a UUID); anything else is not a boot id
  std::ifstream boot("/proc/sys/kernel/random/boot_id");
  if (std::string id; std::getline(boot, id) && id.size() == 36) probe.bootId = id;
  return probe;
}

}  // namespace fabricmap::topologies
