// The fabric above the nodes (`--fabric FILE`): which host adapter hangs off which switch port and
// how the switches connect, as ibnetdiscover prints an InfiniBand subnet or a hand-written file
// describes an Ethernet/RoCE one (topologies/fabric_file.h reads both; /fabric in results/SCHEMA.md
// stores it). Plain data: devices and the cables between their ports.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace fabricmap::core {

enum class FabricDeviceKind { kHost, kSwitch };

struct FabricDevice {
  FabricDeviceKind kind = FabricDeviceKind::kSwitch;
  // A host adapter: the host's name as the run knows it (the first word of the HCA's node
  // description, "node01 mlx5_0" -> "node01"; the text form's left-hand name). A switch: the
  // text form's name, else its node description, else "S-<guid>".
  std::string name;
  std::string nic;          // a host adapter's device when known ("mlx5_0"); empty otherwise
  std::string guid;         // ibnetdiscover's node GUID ("0x0002c90000ff2d80"); empty in the text form
  std::string description;  // the node description as printed; empty in the text form
  int level = 0;            // 0 host adapters, 1 switches they hang off (leaves), 2 the switches above ...
};

// One cable. Ports are the devices' port numbers, 0 where the source did not say (the text form
// without ":PORT"). `a` is the lower level (the host adapter, or the leaf of a leaf-spine cable).
struct FabricLink {
  int a = -1;  // index into FabricGraph::devices
  int portA = 0;
  int b = -1;
  int portB = 0;
  std::string rate;  // "4xNDR", "100G" when the source said; empty otherwise
};

struct FabricGraph {
  std::string source;  // "ibnetdiscover" or "text"
  std::vector<FabricDevice> devices;
  std::vector<FabricLink> links;
  std::vector<std::string> warnings;  // what was read but not understood as a problem (an unnamed HCA, ...)
};

// Sets every device's level and turns every link so that `a` is the lower end. Host adapters are
// level 0 and a switch is one above its nearest neighbour (breadth-first from the hosts over the
// cables), so a spine with a host of its own counts as a leaf. A part of the fabric with no host is
// numbered from its bottom: level 1 for the switches that are no link's upper end (`b`), else from
// its first device.
void assignLevels(FabricGraph& graph);

// The indices of `host`'s adapters (devices of kind kHost named `host`), in device order.
std::vector<int> adaptersOfHost(const FabricGraph& graph, std::string_view host);

}  // namespace fabricmap::core
