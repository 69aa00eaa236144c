// Reads a cluster's fabric topology file (`--fabric FILE`) into a core::FabricGraph: the output of
// `ibnetdiscover` for an InfiniBand subnet, or a hand-written "child -> parent" list for an
// Ethernet/RoCE fabric (topologies/README.md documents both).
#pragma once

#include <string>
#include <string_view>

#include "core/fabric.h"

namespace fabricmap::topologies {

// Tells the two formats apart by content and parses the one found; every line is understood or
// refused.
//
// ibnetdiscover's default output (and ibsim's net files, a subset of it): `vendid=`, `devid=`,
// `sysimgguid=`, `switchguid=`/`caguid=`/`rtguid=` lines, a `Switch`/`Ca`/`Rt` (ibsim: `Hca`)
// line per node, then one line per cabled port; `-g` adds `Chassis`, `Non-Chassis Nodes`,
// `Hostname:` lines and `[ext N]` ports. Every cable appears once from each end: both ends must
// agree, and the graph holds one link per cable. A host adapter is named by the first word of its
// node description ("node01 mlx5_0": host node01, nic mlx5_0; "node01 HCA-1", the old OFED
// numbering: nic empty); an adapter whose description is a firmware default or empty keeps its
// node id ("H-<guid>") and adds a warning. A switch (or router) is named by its description when
// that is unique among them, else by its node id ("S-<guid>").
//
// The text form, one cable per line, `#` starting a comment:
//   CHILD -> PARENT      CHILD: host | host:nic | switch, each optionally :PORT
//                        PARENT: switch, optionally :PORT (PORT: 1..65535)
//   node01 -> leaf1
//   node01:mlx5_1 -> leaf2:7
//   leaf1:33 -> spine1:1
// Names on a right-hand side are switches; names only ever on the left are hosts.
//
// Levels are core::assignLevels'. Throws core::UsageError "FILE:LINE: what is wrong" for a line
// neither format knows, a contradiction between lines, a cycle among switches, or no device at all.
core::FabricGraph parseFabric(std::string_view text, const std::string& fileName);

// Reads and parses a file; a missing or unreadable one is a core::UsageError with its path.
core::FabricGraph readFabricFile(const std::string& path);

}  // namespace fabricmap::topologies
