// Column lists of schema v1 (see schema.h and SCHEMA.md).
#include "results/schema.h"

#include <cstdint>
#include <optional>
#include <string_view>
#include <type_traits>

#include "core/error.h"

namespace fabricmap::results {
namespace {

using h5::ColumnType;
using h5::Value;

// Enums stored by their names (core/findings.h): a text column.
std::optional<core::Severity> parseNamed(std::string_view text, const core::Severity*) {
  return core::parseSeverity(text);
}
std::optional<core::FindingKind> parseNamed(std::string_view text, const core::FindingKind*) {
  return core::parseFindingKind(text);
}
std::optional<core::StepKind> parseNamed(std::string_view text, const core::StepKind*) {
  return core::parseStepKind(text);
}
template <class F>
constexpr bool kNamedEnum =
    std::is_same_v<F, core::Severity> || std::is_same_v<F, core::FindingKind> || std::is_same_v<F, core::StepKind>;

// Converts between a record field and its column value. Numbers read from a file may come back
// as another numeric alternative (an old file, an attribute); convert rather than fail. A named
// enum's text must be one of its names.
template <class T>
T as(const Value& v) {
  if constexpr (kNamedEnum<T>) {
    const auto* text = std::get_if<std::string>(&v);
    const auto value = text != nullptr ? parseNamed(*text, static_cast<const T*>(nullptr)) : std::nullopt;
    if (!value) {
      throw core::UsageError("'" + (text != nullptr ? *text : std::string()) +
                             "' is not a finding severity, finding kind or step kind fabricmap knows");
    }
    return *value;
  } else if constexpr (std::is_same_v<T, std::string>) {
    if (const auto* s = std::get_if<std::string>(&v)) return *s;
    return {};
  } else {
    return std::visit(
        [](const auto& x) -> T {
          using X = std::decay_t<decltype(x)>;
          if constexpr (std::is_same_v<X, std::string>) {
            return T{};
          } else {
            return h5::numberAs<T>(x, T{});
          }
        },
        v);
  }
}

template <class F>
Value store(const F& field) {
  if constexpr (kNamedEnum<F>) {
    return std::string(core::name(field));
  } else if constexpr (std::is_same_v<F, bool>) {
    return field;
  } else if constexpr (std::is_same_v<F, std::string>) {
    return field;
  } else if constexpr (std::is_floating_point_v<F>) {
    return static_cast<double>(field);
  } else if constexpr (std::is_unsigned_v<F>) {
    return static_cast<std::uint64_t>(field);
  } else {
    return static_cast<std::int64_t>(field);
  }
}

template <class F>
constexpr ColumnType typeOf() {
  if constexpr (kNamedEnum<F>) {
    return ColumnType::kText;
  } else if constexpr (std::is_same_v<F, bool>) {
    return ColumnType::kBool;
  } else if constexpr (std::is_same_v<F, std::string>) {
    return ColumnType::kText;
  } else if constexpr (std::is_floating_point_v<F>) {
    return ColumnType::kFloat;
  } else if constexpr (std::is_unsigned_v<F>) {
    return ColumnType::kUInt;
  } else {
    return ColumnType::kInt;
  }
}

}  // namespace

// One column bound to a record member (or a member of a member, e.g. timeUs.mean).
#define FM_COLUMN(R, member, colname, unit)                                                \
  Column<R> {                                                                              \
    colname, typeOf<std::decay_t<decltype(R{}.member)>>(), unit,                           \
        [](const R& r) -> Value { return store(r.member); },                               \
        [](R& r, const Value& v) { r.member = as<std::decay_t<decltype(r.member)>>(v); }   \
  }

// The same column, read under `former` in files of an older schema.
#define FM_COLUMN_WAS(R, member, colname, unit, former)                                    \
  Column<R> {                                                                              \
    colname, typeOf<std::decay_t<decltype(R{}.member)>>(), unit,                           \
        [](const R& r) -> Value { return store(r.member); },                               \
        [](R& r, const Value& v) { r.member = as<std::decay_t<decltype(r.member)>>(v); },  \
        former                                                                             \
  }

// A time summary (core::Summary) as six columns, named alike in every table. The training and
// scaling tables named them time_min ... time_p95 before schema v3: `former` is that prefix, or
// "time_us_" where the names never changed.
#define FM_TIME_COLUMNS(R, member, former)                               \
  FM_COLUMN_WAS(R, member.min, "time_us_min", "us", former "min"),       \
      FM_COLUMN_WAS(R, member.median, "time_us_median", "us", former "median"), \
      FM_COLUMN_WAS(R, member.mean, "time_us_mean", "us", former "mean"),       \
      FM_COLUMN_WAS(R, member.max, "time_us_max", "us", former "max"),          \
      FM_COLUMN_WAS(R, member.p95, "time_us_p95", "us", former "p95"),          \
      FM_COLUMN(R, member.cv, "time_cv", "")

const std::vector<Column<core::Provenance>>& provenanceColumns() {
  using R = core::Provenance;
  static const std::vector<Column<R>> kColumns{
      FM_COLUMN(R, schemaVersion, "schema_version", ""),
      FM_COLUMN(R, toolVersion, "tool_version", ""),
      FM_COLUMN(R, gitRevision, "git_revision", ""),
      FM_COLUMN(R, createdUtc, "created_utc", ""),
      FM_COLUMN(R, commandLine, "command_line", ""),
      FM_COLUMN(R, backend, "backend", ""),
      FM_COLUMN(R, mpiVersion, "mpi_version", ""),
      FM_COLUMN(R, mpiTransport, "mpi_transport", ""),
      FM_COLUMN(R, ncclVersion, "nccl_version", ""),
      FM_COLUMN(R, cudaRuntimeVersion, "cuda_runtime_version", ""),
      FM_COLUMN(R, cudaDriverVersion, "cuda_driver_version", ""),
      FM_COLUMN(R, ncclEnvironment, "nccl_environment", ""),
      FM_COLUMN(R, ucxVersion, "ucx_version", ""),
      FM_COLUMN(R, ucxEnvironment, "ucx_environment", ""),
      FM_COLUMN(R, slurmJobId, "slurm_job_id", ""),
      FM_COLUMN(R, slurmNodelist, "slurm_nodelist", ""),
      FM_COLUMN(R, slurmPartition, "slurm_partition", ""),
      FM_COLUMN(R, slurmGpusPerNode, "slurm_gpus_per_node", ""),
      FM_COLUMN(R, launcher, "launcher", ""),
      FM_COLUMN(R, hostnames, "hostnames", ""),
      FM_COLUMN(R, worldSize, "world_size", ""),
      FM_COLUMN(R, nodeCount, "node_count", ""),
      FM_COLUMN(R, emulated, "emulated", ""),
      FM_COLUMN(R, ranksPerNode, "ranks_per_node", ""),
      FM_COLUMN(R, plannedSteps, "planned_steps", ""),
      FM_COLUMN(R, runConfig, "run_config", "json"),
      FM_COLUMN(R, runArguments, "run_arguments", "json"),
      FM_COLUMN(R, resumed, "resumed", ""),
      FM_COLUMN(R, importedFrom, "imported_from", "json"),
  };
  return kColumns;
}

const std::vector<Column<core::RankRecord>>& rankColumns() {
  using R = core::RankRecord;
  static const std::vector<Column<R>> kColumns{
      FM_COLUMN(R, rank, "rank", ""),
      FM_COLUMN(R, node, "node", ""),
      FM_COLUMN(R, localRank, "local_rank", ""),
      FM_COLUMN(R, hostname, "hostname", ""),
      FM_COLUMN(R, cpu, "cpu", ""),
      FM_COLUMN(R, numaNode, "numa_node", ""),
      FM_COLUMN(R, gpuIndex, "gpu_index", ""),
      FM_COLUMN(R, gpuUuid, "gpu_uuid", ""),
      FM_COLUMN(R, gpuName, "gpu_name", ""),
      FM_COLUMN(R, gpuBusId, "gpu_bus_id", ""),
      FM_COLUMN(R, gpuMemoryBytes, "gpu_memory_bytes", "B"),
      FM_COLUMN(R, nic, "nic", ""),
      FM_COLUMN(R, nicPath, "nic_path", ""),
      FM_COLUMN(R, cpus, "cpus", ""),
      FM_COLUMN(R, nearGpu, "near_gpu", ""),
      FM_COLUMN(R, nearNic, "near_nic", ""),
      FM_COLUMN(R, pinnedNic, "nic_pinned", ""),
  };
  return kColumns;
}

const std::vector<Column<core::NodeRecord>>& nodeColumns() {
  using R = core::NodeRecord;
  static const std::vector<Column<R>> kColumns{
      FM_COLUMN(R, node, "node", ""),
      FM_COLUMN(R, name, "name", ""),
      FM_COLUMN(R, hostname, "hostname", ""),
      FM_COLUMN(R, ranks, "ranks", ""),
      FM_COLUMN(R, gpus, "gpus", ""),
      FM_COLUMN(R, cpus, "cpus", ""),
      FM_COLUMN(R, memAvailableBytes, "mem_available_bytes", "B"),
      FM_COLUMN(R, bootId, "boot_id", ""),
      FM_COLUMN(R, nics, "nics", ""),
      FM_COLUMN(R, topologyClass, "class", ""),
      FM_COLUMN(R, nvswitch, "nvswitch", ""),
      FM_COLUMN(R, topologyWarnings, "warnings", ""),
  };
  return kColumns;
}

const std::vector<Column<core::ScopeRecord>>& scopeColumns() {
  using R = core::ScopeRecord;
  static const std::vector<Column<R>> kColumns{
      FM_COLUMN(R, scope, "scope", ""),
      FM_COLUMN(R, groups, "groups", ""),
      FM_COLUMN(R, members, "members", ""),
      FM_COLUMN(R, status, "status", ""),
      FM_COLUMN(R, reason, "reason", ""),
  };
  return kColumns;
}

const std::vector<Column<core::StepRecord>>& stepColumns() {
  using R = core::StepRecord;
  static const std::vector<Column<R>> kColumns{
      FM_COLUMN(R, step, "step", ""),
      FM_COLUMN(R, kind, "kind", ""),
      FM_COLUMN(R, scope, "scope", ""),
      FM_COLUMN(R, op, "op", ""),
      FM_COLUMN(R, dtype, "dtype", ""),
      FM_COLUMN(R, redop, "redop", ""),
      FM_COLUMN(R, bytes, "bytes", "B"),
      FM_COLUMN(R, inPlace, "in_place", ""),
      FM_COLUMN(R, groups, "groups", ""),
      FM_COLUMN(R, status, "status", ""),
      FM_COLUMN(R, reason, "reason", ""),
      FM_COLUMN(R, seconds, "seconds", "s"),
      FM_COLUMN(R, noisy, "noisy", ""),
  };
  return kColumns;
}

const std::vector<Column<core::CollectiveRecord>>& collectiveColumns() {
  using R = core::CollectiveRecord;
  static const std::vector<Column<R>> kColumns{
      FM_COLUMN(R, step, "step", ""),
      FM_COLUMN(R, scope, "scope", ""),
      FM_COLUMN(R, group, "group", ""),
      FM_COLUMN(R, ranks, "ranks", ""),
      FM_COLUMN(R, nranks, "nranks", ""),
      FM_COLUMN(R, op, "op", ""),
      FM_COLUMN(R, dtype, "dtype", ""),
      FM_COLUMN(R, redop, "redop", ""),
      FM_COLUMN(R, root, "root", ""),
      FM_COLUMN(R, inPlace, "in_place", ""),
      FM_COLUMN(R, bytes, "bytes", "B"),
      FM_COLUMN(R, count, "count", "elements"),
      FM_COLUMN(R, iters, "iters", ""),
      FM_COLUMN(R, warmup, "warmup", ""),
      FM_TIME_COLUMNS(R, timeUs, "time_us_"),
      FM_COLUMN(R, algbw, "algbw", "GB/s"),
      FM_COLUMN(R, busbw, "busbw", "GB/s"),
      FM_COLUMN(R, algbwMedian, "algbw_median", "GB/s"),
      FM_COLUMN(R, busbwMedian, "busbw_median", "GB/s"),
      FM_COLUMN(R, checked, "checked", ""),
      FM_COLUMN(R, wrong, "wrong", "elements"),
      FM_COLUMN(R, wrongRanks, "wrong_ranks", ""),
  };
  return kColumns;
}

const std::vector<Column<core::PairRecord>>& pairColumns() {
  using R = core::PairRecord;
  static const std::vector<Column<R>> kColumns{
      FM_COLUMN(R, step, "step", ""),
      FM_COLUMN(R, level, "level", ""),
      FM_COLUMN(R, a, "a", ""),
      FM_COLUMN(R, b, "b", ""),
      FM_COLUMN(R, sample, "sample", ""),
      FM_COLUMN(R, bytes, "bytes", "B"),
      FM_COLUMN(R, window, "window", ""),
      FM_COLUMN(R, iters, "iters", ""),
      FM_COLUMN(R, streams, "streams", ""),
      FM_COLUMN(R, bwAB, "bw_ab", "GB/s"),
      FM_COLUMN(R, bwBA, "bw_ba", "GB/s"),
      FM_COLUMN(R, bwBidir, "bw_bidir", "GB/s"),
      FM_COLUMN(R, latencyUs, "latency_us", "us"),
      FM_COLUMN(R, wrong, "wrong", "elements"),
      FM_COLUMN(R, cv, "time_cv", ""),
  };
  return kColumns;
}

const std::vector<Column<core::CopyRecord>>& copyColumns() {
  using R = core::CopyRecord;
  static const std::vector<Column<R>> kColumns{
      FM_COLUMN(R, step, "step", ""),
      FM_COLUMN(R, node, "node", ""),
      FM_COLUMN(R, a, "a", ""),
      FM_COLUMN(R, b, "b", ""),
      FM_COLUMN(R, rankA, "rank_a", ""),
      FM_COLUMN(R, rankB, "rank_b", ""),
      FM_COLUMN(R, gpuA, "gpu_a", ""),
      FM_COLUMN(R, gpuB, "gpu_b", ""),
      FM_COLUMN(R, method, "method", ""),
      FM_COLUMN(R, path, "path", ""),
      FM_COLUMN(R, bytes, "bytes", "B"),
      FM_COLUMN(R, iters, "iters", ""),
      FM_COLUMN(R, writeAB, "write_ab", "GB/s"),
      FM_COLUMN(R, writeBA, "write_ba", "GB/s"),
      FM_COLUMN(R, writeBidir, "write_bidir", "GB/s"),
      FM_COLUMN(R, readAB, "read_ab", "GB/s"),
      FM_COLUMN(R, readBA, "read_ba", "GB/s"),
      FM_COLUMN(R, readBidir, "read_bidir", "GB/s"),
      FM_COLUMN(R, wrong, "wrong", "elements"),
  };
  return kColumns;
}

const std::vector<Column<core::LayoutPlace>>& layoutColumns() {
  using R = core::LayoutPlace;
  static const std::vector<Column<R>> kColumns{
      FM_COLUMN(R, rank, "rank", ""),
      FM_COLUMN(R, tpGroup, "tp_group", ""),
      FM_COLUMN(R, tpIndex, "tp_index", ""),
      FM_COLUMN(R, ppGroup, "pp_group", ""),
      FM_COLUMN(R, ppIndex, "pp_index", ""),
      FM_COLUMN(R, dpGroup, "dp_group", ""),
      FM_COLUMN(R, dpIndex, "dp_index", ""),
      FM_COLUMN(R, epGroup, "ep_group", ""),
      FM_COLUMN(R, epIndex, "ep_index", ""),
  };
  return kColumns;
}

const std::vector<Column<core::TrainingRecord>>& trainingColumns() {
  using R = core::TrainingRecord;
  static const std::vector<Column<R>> kColumns{
      FM_COLUMN(R, step, "step", ""),
      FM_COLUMN(R, mode, "mode", ""),
      FM_COLUMN(R, traffic, "traffic", ""),
      FM_COLUMN(R, ops, "ops", ""),
      FM_COLUMN(R, groups, "groups", ""),
      FM_COLUMN(R, nranks, "nranks", ""),
      FM_COLUMN(R, bytes, "bytes", "B"),
      FM_COLUMN(R, messages, "messages", ""),
      FM_COLUMN(R, iters, "iters", ""),
      FM_COLUMN(R, warmup, "warmup", ""),
      FM_TIME_COLUMNS(R, timeUs, "time_"),
      FM_COLUMN(R, algbw, "algbw", "GB/s"),
      FM_COLUMN(R, busbw, "busbw", "GB/s"),
      FM_COLUMN(R, interference, "interference", ""),
      FM_COLUMN(R, noisy, "noisy", ""),
  };
  return kColumns;
}

const std::vector<Column<core::ScalingRecord>>& scalingColumns() {
  using R = core::ScalingRecord;
  static const std::vector<Column<R>> kColumns{
      FM_COLUMN(R, step, "step", ""),
      FM_COLUMN(R, level, "level", ""),
      FM_COLUMN(R, n, "n", ""),
      FM_COLUMN(R, groups, "groups", ""),
      FM_COLUMN(R, nranks, "nranks", ""),
      FM_COLUMN(R, op, "op", ""),
      FM_COLUMN(R, bytes, "bytes", "B"),
      FM_COLUMN(R, iters, "iters", ""),
      FM_TIME_COLUMNS(R, timeUs, "time_"),
      FM_COLUMN(R, algbw, "algbw", "GB/s"),
      FM_COLUMN(R, busbw, "busbw", "GB/s"),
      FM_COLUMN(R, efficiency, "efficiency", ""),
      FM_COLUMN(R, noisy, "noisy", ""),
      FM_COLUMN(R, wrong, "wrong", "elements"),
  };
  return kColumns;
}

const std::vector<Column<core::StorageRecord>>& storageColumns() {
  using R = core::StorageRecord;
  static const std::vector<Column<R>> kColumns{
      FM_COLUMN(R, step, "step", ""),
      FM_COLUMN(R, test, "test", ""),
      FM_COLUMN(R, level, "level", ""),
      FM_COLUMN(R, rank, "rank", ""),
      FM_COLUMN(R, node, "node", ""),
      FM_COLUMN(R, ranks, "ranks", ""),
      FM_COLUMN(R, bytes, "bytes", "B"),
      FM_COLUMN(R, ops, "ops", ""),
      FM_COLUMN(R, blockBytes, "block_bytes", "B"),
      FM_COLUMN(R, seconds, "seconds", "s"),
      FM_COLUMN(R, gbps, "gbps", "GB/s"),
      FM_COLUMN(R, iops, "iops", "1/s"),
      FM_COLUMN(R, cache, "cache", ""),
  };
  return kColumns;
}

const std::vector<Column<core::Finding>>& findingColumns() {
  using R = core::Finding;
  static const std::vector<Column<R>> kColumns{
      FM_COLUMN(R, severity, "severity", ""),
      FM_COLUMN(R, kind, "kind", ""),
      FM_COLUMN(R, subject, "subject", ""),
      FM_COLUMN(R, measured, "measured", ""),
      FM_COLUMN(R, expected, "expected", ""),
      FM_COLUMN(R, ratio, "ratio", ""),
      FM_COLUMN(R, unit, "unit", ""),
      FM_COLUMN(R, message, "message", ""),
      FM_COLUMN(R, nodeA, "node_a", ""),
      FM_COLUMN(R, nodeB, "node_b", ""),
      FM_COLUMN(R, rank, "rank", ""),
      FM_COLUMN(R, confidence, "confidence", ""),
  };
  return kColumns;
}

const std::vector<Column<core::ImportRecord>>& importColumns() {
  using R = core::ImportRecord;
  static const std::vector<Column<R>> kColumns{
      FM_COLUMN(R, file, "file", ""),
      FM_COLUMN(R, format, "format", ""),
      FM_COLUMN(R, op, "op", ""),
      FM_COLUMN(R, toolVersion, "tool_version", ""),
      FM_COLUMN(R, ncclVersion, "nccl_version", ""),
      FM_COLUMN(R, parameters, "parameters", ""),
      FM_COLUMN(R, ranks, "ranks", ""),
      FM_COLUMN(R, nodes, "nodes", ""),
      FM_COLUMN(R, rows, "rows", ""),
      FM_COLUMN(R, firstStep, "first_step", ""),
      FM_COLUMN(R, lastStep, "last_step", ""),
      FM_COLUMN(R, outOfBounds, "out_of_bounds", ""),
      FM_COLUMN(R, avgBusBandwidth, "avg_bus_bandwidth", "GB/s"),
      FM_COLUMN(R, avgBusBandwidthLine, "avg_bus_bandwidth_line", ""),
  };
  return kColumns;
}

const std::vector<Column<core::NicRecord>>& nicColumns() {
  using R = core::NicRecord;
  static const std::vector<Column<R>> kColumns{
      FM_COLUMN(R, node, "node", ""),
      FM_COLUMN(R, device, "device", ""),
      FM_COLUMN(R, port, "port", ""),
      FM_COLUMN(R, kind, "kind", ""),
      FM_COLUMN(R, state, "state", ""),
      FM_COLUMN(R, physState, "phys_state", ""),
      FM_COLUMN(R, rateGbps, "rate", "Gb/s"),
      FM_COLUMN(R, width, "width", ""),
      FM_COLUMN(R, speed, "speed", ""),
      FM_COLUMN(R, linkLayer, "link_layer", ""),
      FM_COLUMN(R, netdev, "netdev", ""),
      FM_COLUMN(R, pciBusId, "pci_bus_id", ""),
      FM_COLUMN(R, numaNode, "numa_node", ""),
  };
  return kColumns;
}

const std::vector<Column<core::PcieRecord>>& pcieColumns() {
  using R = core::PcieRecord;
  static const std::vector<Column<R>> kColumns{
      FM_COLUMN(R, node, "node", ""),
      FM_COLUMN(R, device, "device", ""),
      FM_COLUMN(R, busId, "bus_id", ""),
      FM_COLUMN(R, gpu, "gpu", ""),
      FM_COLUMN(R, speedGTs, "speed", "GT/s"),
      FM_COLUMN(R, maxSpeedGTs, "max_speed", "GT/s"),
      FM_COLUMN(R, width, "width", ""),
      FM_COLUMN(R, maxWidth, "max_width", ""),
      FM_COLUMN(R, slotMaxSpeedGTs, "slot_max_speed", "GT/s"),
      FM_COLUMN(R, slotMaxWidth, "slot_max_width", ""),
      FM_COLUMN(R, numaNode, "numa_node", ""),
      FM_COLUMN(R, localCpus, "local_cpus", ""),
  };
  return kColumns;
}

const std::vector<Column<core::GpuInventoryRecord>>& gpuInventoryColumns() {
  using R = core::GpuInventoryRecord;
  static const std::vector<Column<R>> kColumns{
      FM_COLUMN(R, node, "node", ""),
      FM_COLUMN(R, index, "index", ""),
      FM_COLUMN(R, busId, "bus_id", ""),
      FM_COLUMN(R, name, "name", ""),
      FM_COLUMN(R, memoryBytes, "memory_bytes", "B"),
      FM_COLUMN(R, numaNode, "numa_node", ""),
      FM_COLUMN(R, nic, "nic", ""),
      FM_COLUMN(R, nicPath, "nic_path", ""),
      FM_COLUMN(R, ecc, "ecc", ""),
      FM_COLUMN(R, eccPending, "ecc_pending", ""),
      FM_COLUMN(R, retiredSingleBit, "retired_pages_sbe", ""),
      FM_COLUMN(R, retiredDoubleBit, "retired_pages_dbe", ""),
      FM_COLUMN(R, retirePending, "retire_pending", ""),
      FM_COLUMN(R, remappedCorrectable, "remapped_rows_correctable", ""),
      FM_COLUMN(R, remappedUncorrectable, "remapped_rows_uncorrectable", ""),
      FM_COLUMN(R, remapPending, "remap_pending", ""),
      FM_COLUMN(R, remapFailed, "remap_failed", ""),
  };
  return kColumns;
}

const std::vector<Column<core::NodeInventoryRecord>>& nodeInventoryColumns() {
  using R = core::NodeInventoryRecord;
  static const std::vector<Column<R>> kColumns{
      FM_COLUMN(R, node, "node", ""),
      FM_COLUMN(R, gpus, "gpus", ""),
      FM_COLUMN(R, gpuDirect, "gpudirect", ""),
      FM_COLUMN(R, gpuDirectHow, "gpudirect_how", ""),
      FM_COLUMN(R, notes, "notes", ""),
  };
  return kColumns;
}

const std::vector<Column<core::CounterRecord>>& counterColumns() {
  using R = core::CounterRecord;
  static const std::vector<Column<R>> kColumns{
      FM_COLUMN(R, node, "node", ""),
      FM_COLUMN(R, device, "device", ""),
      FM_COLUMN(R, port, "port", ""),
      FM_COLUMN(R, counter, "counter", ""),
      FM_COLUMN(R, start, "start", ""),
      FM_COLUMN(R, end, "end", ""),
  };
  return kColumns;
}

const std::vector<Column<core::EndpointRecord>>& endpointColumns() {
  using R = core::EndpointRecord;
  static const std::vector<Column<R>> kColumns{
      FM_COLUMN(R, rank, "rank", ""),
      FM_COLUMN(R, peers, "peers", ""),
      FM_COLUMN(R, transports, "transports", ""),
  };
  return kColumns;
}

const std::vector<Column<core::FabricDevice>>& fabricDeviceColumns() {
  using R = core::FabricDevice;
  static const std::vector<Column<R>> kColumns{
      Column<R>{"kind", ColumnType::kText, "",
                [](const R& r) -> Value { return std::string(r.kind == core::FabricDeviceKind::kHost ? "host" : "switch"); },
                [](R& r, const Value& v) {
                  r.kind = as<std::string>(v) == "host" ? core::FabricDeviceKind::kHost : core::FabricDeviceKind::kSwitch;
                }},
      FM_COLUMN(R, name, "name", ""),
      FM_COLUMN(R, nic, "nic", ""),
      FM_COLUMN(R, guid, "guid", ""),
      FM_COLUMN(R, description, "description", ""),
      FM_COLUMN(R, level, "level", ""),
  };
  return kColumns;
}

const std::vector<Column<core::FabricLink>>& fabricLinkColumns() {
  using R = core::FabricLink;
  static const std::vector<Column<R>> kColumns{
      FM_COLUMN(R, a, "a", ""),         FM_COLUMN(R, portA, "port_a", ""), FM_COLUMN(R, b, "b", ""),
      FM_COLUMN(R, portB, "port_b", ""), FM_COLUMN(R, rate, "rate", ""),
  };
  return kColumns;
}

#undef FM_TIME_COLUMNS
#undef FM_COLUMN_WAS
#undef FM_COLUMN

template <>
RowTable<core::CollectiveRecord> rowTable() {
  return {core::StepKind::kCollective, kCollectivesTable, "row", collectiveColumns()};
}
template <>
RowTable<core::CopyRecord> rowTable() {
  return {core::StepKind::kCopy, kCopiesTable, "copy", copyColumns()};
}
template <>
RowTable<core::PairRecord> rowTable() {
  return {core::StepKind::kPairwise, kPairsTable, "pair", pairColumns()};
}
template <>
RowTable<core::ScalingRecord> rowTable() {
  return {core::StepKind::kScaling, kScalingTable, "scaling", scalingColumns()};
}
template <>
RowTable<core::TrainingRecord> rowTable() {
  return {core::StepKind::kTraining, kTrainingTable, "training", trainingColumns()};
}
template <>
RowTable<core::StorageRecord> rowTable() {
  return {core::StepKind::kStorage, kStorageTable, "storage", storageColumns()};
}

}  // namespace fabricmap::results
