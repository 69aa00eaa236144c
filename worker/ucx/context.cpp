// UCP context, worker, endpoints and waits (see context.h).
#include "worker/ucx/context.h"

#include <sched.h>
#include <ucs/debug/log_def.h>
#include <uct/api/uct.h>

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string_view>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.h"
#include "worker/comm.h"
#include "worker/mpi_check.h"

namespace fabricmap::worker::ucx {
namespace {

std::string statusText(ucs_status_t status) { return ucs_status_string(status); }

// UCX's warnings and errors while it starts, kept instead of printed on every rank: the first
// error (else warning) becomes the reason rank 0 gives. UCX's log hook takes no user data, so the
// capture in progress on this thread is found through one thread-local pointer, set only while a
// CapturedLog lives.
class CapturedLog {
 public:
  CapturedLog() : previous_(active()) {
    active() = this;
    ucs_log_push_handler(&CapturedLog::handle);
  }
  ~CapturedLog() {
    ucs_log_pop_handler();
    active() = previous_;
  }
  CapturedLog(const CapturedLog&) = delete;
  CapturedLog& operator=(const CapturedLog&) = delete;

  // "ucp_init: No such device (no usable transports/devices ...)"
  std::string explain(const std::string& what) const {
    const std::string& said = !error_.empty() ? error_ : warning_;
    return said.empty() ? what : what + " (" + said + ")";
  }

 private:
  static CapturedLog*& active() {
    thread_local CapturedLog* capture = nullptr;
    return capture;
  }
  static ucs_log_func_rc_t handle(const char* /*file*/, unsigned /*line*/, const char* /*function*/,
                                  ucs_log_level_t level, const ucs_log_component_config_t* /*config*/,
                                  const char* format, va_list ap) {
    CapturedLog* capture = active();
    if (capture == nullptr || level > UCS_LOG_LEVEL_WARN) return UCS_LOG_FUNC_RC_CONTINUE;
    char text[512];
    va_list copy;
    va_copy(copy, ap);
    std::vsnprintf(text, sizeof text, format, copy);
    va_end(copy);
    std::string& slot = level <= UCS_LOG_LEVEL_ERROR ? capture->error_ : capture->warning_;
    if (slot.empty()) slot = text;
    return UCS_LOG_FUNC_RC_STOP;
  }

  CapturedLog* previous_;
  std::string error_;
  std::string warning_;
};

// Every rank's bytes on every rank. Collective over `comm`.
std::vector<std::vector<char>> allGather(MPI_Comm comm, const std::vector<char>& mine) {
  int size = 0;
  FM_MPI(MPI_Comm_size(comm, &size));
  int length = static_cast<int>(mine.size());
  std::vector<int> lengths(static_cast<std::size_t>(size));
  FM_MPI(MPI_Allgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, comm));
  std::vector<int> offsets(static_cast<std::size_t>(size));
  int total = 0;
  for (int r = 0; r < size; ++r) {
    offsets[static_cast<std::size_t>(r)] = total;
    total += lengths[static_cast<std::size_t>(r)];
  }
  std::vector<char> all(static_cast<std::size_t>(total));
  FM_MPI(MPI_Allgatherv(mine.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR, comm));
  std::vector<std::vector<char>> out;
  for (int r = 0; r < size; ++r) {
    const auto from = all.begin() + offsets[static_cast<std::size_t>(r)];
    out.emplace_back(from, from + lengths[static_cast<std::size_t>(r)]);
  }
  return out;
}

// The first rank's failure, the same text on every rank ("" when none failed). Collective.
std::string agreedFailure(MPI_Comm world, const std::string& mine) {
  const std::vector<std::string> all = gatherStrings(world, mine);
  std::string first;
  for (std::size_t r = 0; r < all.size() && first.empty(); ++r) {
    if (!all[r].empty()) first = fmt::format("UCX cannot start on rank {}: {}", r, all[r]);
  }
  return broadcastString(world, first);
}

// Why this context cannot move CUDA memory (its memory types lack UCS_MEMORY_TYPE_CUDA); empty
// when it can.
std::string lacksCuda(ucp_context_h context) {
  ucp_context_attr_t attributes{};
  attributes.field_mask = UCP_ATTR_FIELD_MEMORY_TYPES;
  if (const ucs_status_t s = ucp_context_query(context, &attributes); s != UCS_OK) {
    return "ucp_context_query: " + statusText(s);
  }
  if ((attributes.memory_types & UCS_BIT(UCS_MEMORY_TYPE_CUDA)) != 0) return {};
  std::vector<std::string> known;
  for (int t = 0; t < UCS_MEMORY_TYPE_LAST; ++t) {
    if ((attributes.memory_types & UCS_BIT(t)) != 0) known.emplace_back(ucs_memory_type_names[t]);
  }
  return fmt::format("this UCX ({}) moves {} memory only, not CUDA memory: --pair-memory cuda needs a UCX built "
                     "with CUDA (`ucx_info -v` shows --with-cuda; its cuda_copy transport in `ucx_info -d`)",
                     ucp_get_version_string(), fmt::join(known, ", "));
}

}  // namespace

Ucp::Ucp(MPI_Comm world, const UcpOptions& options) {
  FM_MPI(MPI_Comm_rank(world, &rank_));
  FM_MPI(MPI_Comm_size(world, &size_));
  std::string failed = agreedFailure(world, start(options));
  std::vector<char> mine;
  if (failed.empty()) {
    ucp_address_t* address = nullptr;
    std::size_t length = 0;
    if (const ucs_status_t s = ucp_worker_get_address(worker_, &address, &length); s == UCS_OK) {
      mine.assign(reinterpret_cast<const char*>(address), reinterpret_cast<const char*>(address) + length);
      ucp_worker_release_address(worker_, address);
    }
    addresses_ = allGather(world, mine);
    endpoints_.assign(static_cast<std::size_t>(size_), nullptr);
    failed = agreedFailure(world, mine.empty() ? std::string("no worker address") : reachNext());
  }
  if (!failed.empty()) {
    release();  // a constructor that throws has no destructor run
    throw core::UsageError(failed + " (check UCX_TLS and UCX_NET_DEVICES; `ucx_info -d` lists the transports)");
  }
}

std::string Ucp::start(const UcpOptions& options) {
  const CapturedLog log;
  const std::string& netDevices = options.netDevices;
  ucp_config_t* config = nullptr;
  if (const ucs_status_t s = ucp_config_read(nullptr, nullptr, &config); s != UCS_OK) {
    return log.explain("its configuration (UCX_* variables) cannot be read: " + statusText(s));
  }
  if (!netDevices.empty()) {
    if (const ucs_status_t s = ucp_config_modify(config, "NET_DEVICES", netDevices.c_str()); s != UCS_OK) {
      ucp_config_release(config);
      return log.explain("NET_DEVICES=" + netDevices + ": " + statusText(s));
    }
  }
  ucp_params_t params{};
  params.field_mask = UCP_PARAM_FIELD_FEATURES;
  params.features = UCP_FEATURE_TAG | (options.rma ? UCP_FEATURE_RMA : 0);
  const ucs_status_t init = ucp_init(&params, config, &context_);
  ucp_config_release(config);
  if (init != UCS_OK) {
    context_ = nullptr;
    return log.explain("ucp_init: " + statusText(init));
  }
  if (options.cudaMemory) {
    if (std::string missing = lacksCuda(context_); !missing.empty()) return missing;
  }
  ucp_worker_params_t worker{};
  worker.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
  worker.thread_mode = UCS_THREAD_MODE_SINGLE;
  if (const ucs_status_t s = ucp_worker_create(context_, &worker, &worker_); s != UCS_OK) {
    worker_ = nullptr;
    return log.explain("ucp_worker_create: " + statusText(s));
  }
  return {};
}

std::string Ucp::reachNext() {
  if (size_ < 2) return {};
  const CapturedLog log;
  try {
    (void)endpoint((rank_ + 1) % size_);
  } catch (const core::Error& e) {
    return log.explain(e.what());
  }
  return {};
}

Ucp::~Ucp() { release(); }

void Ucp::release() {
  for (ucp_ep_h& ep : endpoints_) {
    if (ep == nullptr) continue;
    // forced: the peer may already be gone, and a flush would wait for it
    ucp_request_param_t close{};
    close.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    close.flags = UCP_EP_CLOSE_FLAG_FORCE;
    const ucs_status_ptr_t request = ucp_ep_close_nbx(ep, &close);
    if (request != nullptr && !UCS_PTR_IS_ERR(request)) {
      while (ucp_request_check_status(request) == UCS_INPROGRESS) ucp_worker_progress(worker_);
      ucp_request_free(request);
    }
    ep = nullptr;
  }
  if (worker_ != nullptr) ucp_worker_destroy(worker_);
  if (context_ != nullptr) ucp_cleanup(context_);
  worker_ = nullptr;
  context_ = nullptr;
}

ucp_ep_h Ucp::endpoint(int peer) {
  ucp_ep_h& ep = endpoints_.at(static_cast<std::size_t>(peer));
  if (ep != nullptr) return ep;
  ucp_ep_params_t params{};
  params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE;
  params.address = reinterpret_cast<const ucp_address_t*>(addresses_.at(static_cast<std::size_t>(peer)).data());
  params.err_mode = UCP_ERR_HANDLING_MODE_NONE;
  if (const ucs_status_t s = ucp_ep_create(worker_, &params, &ep); s != UCS_OK) {
    ep = nullptr;
    throw core::UsageError(fmt::format("no UCX transport reaches rank {} from rank {}: {}", peer, rank_, statusText(s)));
  }
  return ep;
}

void Ucp::progress(unsigned& idle) {
  if (ucp_worker_progress(worker_) != 0) {
    idle = 0;
  } else if (++idle > kSpinsBeforeYield) {
    sched_yield();
  }
}

void Ucp::wait(ucs_status_ptr_t request, const char* what) {
  if (request == nullptr) return;  // done at once
  if (UCS_PTR_IS_ERR(request)) throw FM_FAULT(fmt::format("UCX {}: {}", what, statusText(UCS_PTR_STATUS(request))));
  ucs_status_t status = UCS_INPROGRESS;
  unsigned idle = 0;
  while ((status = ucp_request_check_status(request)) == UCS_INPROGRESS) progress(idle);
  ucp_request_free(request);
  if (status != UCS_OK) throw FM_FAULT(fmt::format("UCX {}: {}", what, statusText(status)));
}

void Ucp::waitAll(std::vector<ucs_status_ptr_t>& requests, const char* what) {
  for (ucs_status_ptr_t r : requests) wait(r, what);
  requests.clear();
}

void Ucp::finish(int peer) {
  ucp_request_param_t param{};
  wait(ucp_ep_flush_nbx(endpoint(peer), &param), "flush");
  std::uint8_t mine = 0;
  std::uint8_t theirs = 0;
  std::vector<ucs_status_ptr_t> both;
  both.push_back(ucp_tag_recv_nbx(worker_, &theirs, 1, tagOf(TagKind::kDone, peer), kFullMask, &param));
  both.push_back(ucp_tag_send_nbx(endpoint(peer), &mine, 1, tagOf(TagKind::kDone, rank_), &param));
  waitAll(both, "handshake");
}

std::string Ucp::endpointInfo(int peer) {
  char* text = nullptr;
  std::size_t length = 0;
  FILE* stream = open_memstream(&text, &length);
  if (stream == nullptr) return {};
  ucp_ep_print_info(endpoint(peer), stream);
  std::fclose(stream);
  std::string out(text, length);
  std::free(text);
  return out;
}

Registered::Registered(ucp_context_h context, std::size_t length, ucs_memory_type_t type, bool remote)
    : context_(context) {
  ucp_mem_map_params_t params{};
  params.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH |
                      UCP_MEM_MAP_PARAM_FIELD_FLAGS | UCP_MEM_MAP_PARAM_FIELD_MEMORY_TYPE;
  params.address = nullptr;
  params.length = length;
  params.flags = UCP_MEM_MAP_ALLOCATE;
  params.memory_type = type;
  if (const ucs_status_t s = ucp_mem_map(context_, &params, &memory_); s != UCS_OK) {
    throw FM_FAULT(fmt::format("UCX cannot allocate {} bytes of {} memory: {}", length,
                               ucs_memory_type_names[type], statusText(s)));
  }
  ucp_mem_attr_t attributes{};
  attributes.field_mask = UCP_MEM_ATTR_FIELD_ADDRESS;
  if (const ucs_status_t s = ucp_mem_query(memory_, &attributes); s != UCS_OK) {
    ucp_mem_unmap(context_, memory_);
    throw FM_FAULT(fmt::format("UCX cannot say where it allocated: {}", statusText(s)));
  }
  data_ = static_cast<std::byte*>(attributes.address);
  if (!remote) return;
  void* key = nullptr;
  std::size_t keyLength = 0;
  if (const ucs_status_t s = ucp_rkey_pack(context_, memory_, &key, &keyLength); s != UCS_OK) {
    ucp_mem_unmap(context_, memory_);
    throw FM_FAULT(fmt::format("UCX cannot pack a remote key: {}", statusText(s)));
  }
  const auto where = reinterpret_cast<std::uint64_t>(data_);
  description_.resize(sizeof where + keyLength);
  std::memcpy(description_.data(), &where, sizeof where);
  std::memcpy(description_.data() + sizeof where, key, keyLength);
  ucp_rkey_buffer_release(key);
}

Registered::~Registered() { ucp_mem_unmap(context_, memory_); }

RemoteBuffer::RemoteBuffer(ucp_ep_h endpoint, const std::vector<char>& description) {
  if (description.size() <= sizeof address_) throw FM_FAULT("a peer's remote key arrived empty");
  std::memcpy(&address_, description.data(), sizeof address_);
  if (const ucs_status_t s = ucp_ep_rkey_unpack(endpoint, description.data() + sizeof address_, &key_); s != UCS_OK) {
    throw FM_FAULT(fmt::format("UCX cannot unpack a peer's remote key: {}", statusText(s)));
  }
}

RemoteBuffer::~RemoteBuffer() { ucp_rkey_destroy(key_); }

std::vector<int> Ucp::connectedPeers() const {
  std::vector<int> peers;
  for (std::size_t r = 0; r < endpoints_.size(); ++r) {
    if (endpoints_[r] != nullptr) peers.push_back(static_cast<int>(r));
  }
  return peers;
}

namespace {

// "  8:rc_mlx5/mlx5_0:1.0 md[4]  -> md[4]/ib/sysdev[255] rma_bw#0 am wireup": the transport and
// device without the path index ("rc_mlx5/mlx5_0:1"), and the lane's uses without their indices.
std::string summarizeLane(std::string_view lane) {
  std::istringstream words{std::string(lane)};
  std::string resource;
  std::string word;
  words >> resource;
  resource = resource.substr(resource.find(':') + 1);
  if (const std::size_t dot = resource.rfind('.'); dot != std::string::npos && dot + 1 < resource.size() &&
                                                   resource.find_first_not_of("0123456789", dot + 1) == std::string::npos) {
    resource.resize(dot);
  }
  std::vector<std::string> uses;
  bool afterArrow = false;
  bool pastTarget = false;
  while (words >> word) {
    if (word == "->") {
      afterArrow = true;
    } else if (afterArrow && !pastTarget) {
      pastTarget = true;  // "md[4]/ib/sysdev[255]": the peer's side
    } else if (pastTarget) {
      const std::string use = word.substr(0, word.find('#'));
      if (std::find(uses.begin(), uses.end(), use) == uses.end()) uses.push_back(use);
    }
  }
  return uses.empty() ? resource : fmt::format("{} ({})", resource, fmt::join(uses, ", "));
}

}  // namespace

std::string summarizeEndpoint(const std::string& printed) {
  std::vector<std::string> parts;
  std::string rendezvous;
  std::istringstream lines(printed);
  for (std::string line; std::getline(lines, line);) {
    const std::string_view l(line);
    if (const std::size_t lane = l.find("lane["); lane != std::string_view::npos) {
      const std::size_t colon = l.find("]:", lane);
      if (colon != std::string_view::npos) parts.push_back(summarizeLane(l.substr(colon + 2)));
    } else if (const std::size_t tag = l.find("tag_send:"); tag != std::string_view::npos && rendezvous.empty()) {
      // "0..<egr/short>..8185..<egr/bcopy>..8192..<rndv>..(inf)": the size before <rndv>
      const std::size_t rndv = l.find("..<rndv>", tag);
      const std::size_t from = rndv == std::string_view::npos ? rndv : l.rfind("..", rndv - 1);
      if (from != std::string_view::npos) rendezvous = std::string(l.substr(from + 2, rndv - from - 2));
    }
  }
  if (parts.empty()) return {};
  if (!rendezvous.empty()) parts.push_back(fmt::format("tag rendezvous from {} B", rendezvous));
  return fmt::format("{}", fmt::join(parts, "; "));
}

namespace {

// Whether the memory domain `name` of `component` registers CUDA memory; false where it cannot be
// opened.
bool registersCuda(uct_component_h component, const char* name) {
  uct_md_config_t* config = nullptr;
  if (uct_md_config_read(component, nullptr, nullptr, &config) != UCS_OK) return false;
  uct_md_h md = nullptr;
  const ucs_status_t opened = uct_md_open(component, name, config, &md);
  uct_config_release(config);
  if (opened != UCS_OK) return false;
  uct_md_attr_t attributes{};
  const bool cuda = uct_md_query(md, &attributes) == UCS_OK &&
                    (attributes.cap.reg_mem_types & UCS_BIT(UCS_MEMORY_TYPE_CUDA)) != 0;
  uct_md_close(md);
  return cuda;
}

// A component's memory domains, by name.
std::vector<uct_md_resource_desc_t> domainsOf(uct_component_h component) {
  uct_component_attr_t attributes{};
  attributes.field_mask = UCT_COMPONENT_ATTR_FIELD_MD_RESOURCE_COUNT;
  if (uct_component_query(component, &attributes) != UCS_OK) return {};
  std::vector<uct_md_resource_desc_t> domains(attributes.md_resource_count);
  attributes.field_mask = UCT_COMPONENT_ATTR_FIELD_MD_RESOURCES;
  attributes.md_resources = domains.data();
  if (uct_component_query(component, &attributes) != UCS_OK) return {};
  return domains;
}

// "rc_mlx5/mlx5_0:1 (rma_bw, am_bw)" -> transport "rc_mlx5", device "mlx5_0", uses "rma_bw, am_bw".
struct Lane {
  std::string transport;
  std::string device;
  std::string uses;
};

std::vector<Lane> lanesOf(const std::string& summary) {
  std::vector<Lane> lanes;
  std::size_t at = 0;
  while (at < summary.size()) {
    std::size_t end = summary.find("; ", at);
    if (end == std::string::npos) end = summary.size();
    const std::string part = summary.substr(at, end - at);
    at = end + 2;
    const std::size_t slash = part.find('/');
    if (slash == std::string::npos) continue;  // "tag rendezvous from ..."
    const std::size_t space = part.find(' ', slash);
    const std::string device = part.substr(slash + 1, space == std::string::npos ? std::string::npos : space - slash - 1);
    lanes.push_back({part.substr(0, slash), device.substr(0, device.find(':')),
                     space == std::string::npos ? std::string() : part.substr(space + 1)});
  }
  return lanes;
}

}  // namespace

std::vector<std::string> cudaRegisteringDomains() {
  std::vector<std::string> names;
  uct_component_h* components = nullptr;
  unsigned count = 0;
  if (uct_query_components(&components, &count) != UCS_OK) return names;
  for (unsigned c = 0; c < count; ++c) {
    for (const uct_md_resource_desc_t& domain : domainsOf(components[c])) {
      if (registersCuda(components[c], domain.md_name)) names.emplace_back(domain.md_name);
    }
  }
  uct_release_component_list(components);
  return names;
}

std::string cudaPathOf(const std::string& lanes, const std::vector<std::string>& domains) {
  const std::vector<Lane> all = lanesOf(lanes);
  for (const Lane& lane : all) {
    if (lane.transport == "cuda_ipc") return "CUDA IPC";
  }
  for (const Lane& lane : all) {
    const bool bandwidth = lane.uses.find("_bw") != std::string::npos;
    if (bandwidth && std::find(domains.begin(), domains.end(), lane.device) != domains.end()) {
      return "GPUDirect RDMA on " + lane.device;
    }
  }
  return "staged through host memory";
}

std::string versionString() { return ucp_get_version_string(); }

}  // namespace fabricmap::worker::ucx
