// MPI control-plane helpers (see comm.h).
#include "worker/comm.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <exception>
#include <thread>

#include "core/config.h"
#include "worker/mpi_check.h"

namespace fabricmap::worker {

Communicator& Communicator::operator=(Communicator&& other) noexcept {
  if (this != &other) {
    if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
    comm_ = other.comm_;
    other.comm_ = MPI_COMM_NULL;
  }
  return *this;
}

Communicator::~Communicator() {
  // While an exception unwinds, the job is about to be aborted; freeing could wait on other ranks.
  if (comm_ != MPI_COMM_NULL && std::uncaught_exceptions() == 0) MPI_Comm_free(&comm_);
}

int Communicator::rank() const {
  int r = -1;
  if (member()) MPI_Comm_rank(comm_, &r);
  return r;
}

int Communicator::size() const {
  int n = 0;
  if (member()) MPI_Comm_size(comm_, &n);
  return n;
}

void waitSleeping(MPI_Request& request) {
  // Under SimGrid (the sim build) every rank is a simulated process of one OS process: a real
  // sleep stops the whole simulation, and MPI_Wait spins nothing.
  if constexpr (FABRICMAP_HAVE_SIM) {
    FM_MPI(MPI_Wait(&request, MPI_STATUS_IGNORE));
    return;
  }
  using namespace std::chrono_literals;
  auto pause = std::chrono::microseconds(20);
  int done = 0;
  FM_MPI(MPI_Test(&request, &done, MPI_STATUS_IGNORE));
  while (!done) {
    std::this_thread::sleep_for(pause);
    pause = std::min<std::chrono::microseconds>(pause * 2, 1000us);
    FM_MPI(MPI_Test(&request, &done, MPI_STATUS_IGNORE));
  }
}

void sleepingBarrier(MPI_Comm comm) {
  // Under SimGrid, MPI_Barrier: SMPI 3.32's MPI_Ibarrier is no barrier (its root posts the releases
  // beside its receives, so every other rank goes on at once), and a step's pairs ran beside the
  // next step's, meeting on cables that the rounds keep apart.
  if constexpr (FABRICMAP_HAVE_SIM) {
    FM_MPI(MPI_Barrier(comm));
    return;
  }
  MPI_Request request = MPI_REQUEST_NULL;
  FM_MPI(MPI_Ibarrier(comm, &request));
  waitSleeping(request);
}

bool sharesMemory(MPI_Comm comm) {
  MPI_Comm shared = MPI_COMM_NULL;
  FM_MPI(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shared));
  int size = 0;
  int all = 0;
  FM_MPI(MPI_Comm_size(shared, &size));
  FM_MPI(MPI_Comm_free(&shared));
  FM_MPI(MPI_Comm_size(comm, &all));
  int together = size == all ? 1 : 0;
  int everywhere = 0;
  FM_MPI(MPI_Allreduce(&together, &everywhere, 1, MPI_INT, MPI_MIN, comm));
  return everywhere == 1;
}

namespace {

// Fixed-size wire form of a probe (homogeneous cluster: raw bytes are fine).
struct WireProbe {
  std::array<char, 256> hostname;
  int cpu;
  int numaNode;
  int gpuCount;
  int cpus;
  std::array<std::uint64_t, 16> cpuMask;  // 1,024 CPUs
  int sharedLeader;
  std::uint64_t memAvailableBytes;
  int visibleGpus;
  std::array<char, 96> tool;
  std::array<char, 40> bootId;  // 36 characters
};

}  // namespace

std::vector<core::HostProbe> exchangeProbes(MPI_Comm world, core::HostProbe mine) {
  int rank = 0;
  int size = 0;
  FM_MPI(MPI_Comm_rank(world, &rank));
  FM_MPI(MPI_Comm_size(world, &size));

  // The node leader is the lowest world rank of this rank's shared-memory domain.
  MPI_Comm shared = MPI_COMM_NULL;
  FM_MPI(MPI_Comm_split_type(world, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &shared));
  Communicator sharedComm(shared);
  int leader = rank;
  FM_MPI(MPI_Allreduce(&rank, &leader, 1, MPI_INT, MPI_MIN, sharedComm.get()));
  mine.sharedLeader = leader;
  // The node's name as the MPI library knows it: Open MPI's is the host's name, SimGrid's SMPI's
  // the simulated host's (gethostname there names the simulating machine).
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int nameLength = 0;
  FM_MPI(MPI_Get_processor_name(name, &nameLength));
  if (nameLength > 0) mine.hostname.assign(name, static_cast<std::size_t>(nameLength));

  WireProbe w{};
  std::strncpy(w.hostname.data(), mine.hostname.c_str(), w.hostname.size() - 1);
  w.cpu = mine.cpu;
  w.numaNode = mine.numaNode;
  w.gpuCount = mine.gpuCount;
  w.cpus = mine.cpus;
  w.cpuMask = {};
  for (std::size_t i = 0; i < mine.cpuMask.size() && i < w.cpuMask.size(); ++i) w.cpuMask[i] = mine.cpuMask[i];
  w.sharedLeader = mine.sharedLeader;
  w.memAvailableBytes = mine.memAvailableBytes;
  w.visibleGpus = mine.visibleGpus;
  std::strncpy(w.tool.data(), mine.tool.c_str(), w.tool.size() - 1);
  std::strncpy(w.bootId.data(), mine.bootId.c_str(), w.bootId.size() - 1);
  std::vector<WireProbe> all(static_cast<std::size_t>(size));
  FM_MPI(MPI_Allgather(&w, sizeof(WireProbe), MPI_BYTE, all.data(), sizeof(WireProbe), MPI_BYTE, world));

  std::vector<core::HostProbe> probes;
  probes.reserve(all.size());
  for (const WireProbe& p : all) {
    core::HostProbe h;
    h.hostname = std::string(p.hostname.data());
    h.cpu = p.cpu;
    h.numaNode = p.numaNode;
    h.gpuCount = p.gpuCount;
    h.cpus = p.cpus;
    h.cpuMask.assign(p.cpuMask.begin(), p.cpuMask.end());
    h.sharedLeader = p.sharedLeader;
    h.memAvailableBytes = p.memAvailableBytes;
    h.visibleGpus = p.visibleGpus;
    h.tool = std::string(p.tool.data());
    h.bootId = std::string(p.bootId.data());
    probes.push_back(std::move(h));
  }
  return probes;
}

std::vector<std::string> gatherStrings(MPI_Comm comm, const std::string& mine) {
  int rank = 0;
  int size = 0;
  FM_MPI(MPI_Comm_rank(comm, &rank));
  FM_MPI(MPI_Comm_size(comm, &size));
  int length = static_cast<int>(mine.size());
  std::vector<int> lengths(rank == 0 ? static_cast<std::size_t>(size) : 0);
  FM_MPI(MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, comm));
  std::vector<int> offsets(lengths.size(), 0);
  for (std::size_t i = 1; i < offsets.size(); ++i) offsets[i] = offsets[i - 1] + lengths[i - 1];
  std::string all(rank == 0 && size > 0 ? static_cast<std::size_t>(offsets.back() + lengths.back()) : 0, '\0');
  FM_MPI(MPI_Gatherv(mine.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR, 0, comm));
  std::vector<std::string> out;
  for (std::size_t i = 0; i < lengths.size(); ++i) {
    out.push_back(all.substr(static_cast<std::size_t>(offsets[i]), static_cast<std::size_t>(lengths[i])));
  }
  return out;
}

void broadcastBytes(MPI_Comm comm, std::vector<char>& bytes) {
  long long length = static_cast<long long>(bytes.size());
  FM_MPI(MPI_Bcast(&length, 1, MPI_LONG_LONG, 0, comm));
  bytes.resize(static_cast<std::size_t>(length));
  // MPI counts are ints: in chunks, for any length
  constexpr long long kChunk = 1 << 30;
  for (long long done = 0; done < length; done += kChunk) {
    FM_MPI(MPI_Bcast(bytes.data() + done, static_cast<int>(std::min(kChunk, length - done)), MPI_CHAR, 0, comm));
  }
}

std::string broadcastString(MPI_Comm comm, std::string value) {
  std::vector<char> bytes(value.begin(), value.end());
  broadcastBytes(comm, bytes);
  return {bytes.begin(), bytes.end()};
}

std::vector<int> broadcastInts(MPI_Comm comm, std::vector<int> ints) {
  int count = static_cast<int>(ints.size());
  FM_MPI(MPI_Bcast(&count, 1, MPI_INT, 0, comm));
  ints.resize(static_cast<std::size_t>(count));
  FM_MPI(MPI_Bcast(ints.data(), count, MPI_INT, 0, comm));
  return ints;
}

std::string mpiLibraryVersion() {
  std::array<char, MPI_MAX_LIBRARY_VERSION_STRING> buf{};
  int len = 0;
  FM_MPI(MPI_Get_library_version(buf.data(), &len));
  std::string v(buf.data(), static_cast<std::size_t>(std::max(len, 0)));
  // Open MPI appends build details after the first line; keep the first line.
  if (auto nl = v.find('\n'); nl != std::string::npos) v.resize(nl);
  while (!v.empty() && (v.back() == '\0' || v.back() == ' ')) v.pop_back();
  return v;
}

}  // namespace fabricmap::worker
