#!/usr/bin/env python3
"""Writes the saved sysfs trees of tests/data/sysfs (committed; rerun after changing this file).

Each tree is the part of /sys that `fabricmap inventory` reads, laid out as the kernel lays it
out on an 8-GPU HGX H100 node: two sockets, four PCIe switches per socket pair of root complexes,
each switch holding one GPU and one ConnectX-7 (a 400G NDR InfiniBand port, mlx5_N, its IPoIB
netdev ibpNs0), a 25G management Ethernet port, relative symlinks as in a real /sys
(/bus/pci/devices/*, /class/infiniband/*, /class/net/*, each device's `device` link), the
ports' state, rate and error counters, and /module/nvidia_peermem.

  healthy-8gpu-8nic    the node as sold: every link at its maximum, nothing raised
  nic-200g-port-down   mlx5_3 trained at 200G HDR, mlx5_5's port down (Disabled)
  gpu-pcie-x8          GPU 3 (0000:4d:00.0) at x8 of x16
  no-peermem           no peer-memory module loaded
  counters-before      the healthy node with some error counts at the start of a run...
  counters-after       ...and at its end: mlx5_2's symbol_error +12 and link_downed +1
"""
import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
# root complex bus per GPU/NIC pair; sockets: the first four on NUMA 0, the others on NUMA 1
ROOT_BUSES = [0x18, 0x2a, 0x3a, 0x4a, 0x9a, 0xab, 0xba, 0xca]
COUNTERS = ["symbol_error", "link_error_recovery", "link_downed", "port_rcv_errors",
            "port_rcv_remote_physical_errors", "port_rcv_switch_relay_errors", "port_xmit_discards",
            "port_xmit_constraint_errors", "port_rcv_constraint_errors", "local_link_integrity_errors",
            "excessive_buffer_overrun_errors", "VL15_dropped"]


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text + "\n")


def link(target, name):
    """A relative symlink at `name` to `target` (both absolute paths inside the tree)."""
    os.makedirs(os.path.dirname(name), exist_ok=True)
    os.symlink(os.path.relpath(target, os.path.dirname(name)), name)


def bdf(bus, dev=0, fn=0):
    return f"0000:{bus:02x}:{dev:02x}.{fn}"


def pci(root, chain, attrs):
    """Creates the chain of PCI functions under its root complex; returns the last one's path."""
    path = os.path.join(root, "devices", f"pci0000:{int(chain[0][5:7], 16):02x}")
    for f in chain:
        path = os.path.join(path, f)
        os.makedirs(path, exist_ok=True)
        bus_link = os.path.join(root, "bus/pci/devices", f)
        if not os.path.lexists(bus_link):
            link(path, bus_link)
    for k, v in attrs.items():
        write(os.path.join(path, k), v)
    return path


def pcie(speed, width, max_speed="32.0 GT/s PCIe", max_width=16):
    return {"current_link_speed": speed, "current_link_width": str(width),
            "max_link_speed": max_speed, "max_link_width": str(max_width)}


def bridge(root, chain, numa):
    pci(root, chain, dict(pcie("32.0 GT/s PCIe", 16), vendor="0x1000", **{"class": "0x060400"},
                          numa_node=str(numa)))


def node(root, rate=None, down=(), gpu_width=None, peermem=True, counters=None):
    rate = rate or {}
    gpu_width = gpu_width or {}
    counters = counters or {}
    for g, bus in enumerate(ROOT_BUSES):
        numa = 0 if g < 4 else 1
        port, up, down_gpu, down_nic = bdf(bus, 1), bdf(bus + 1), bdf(bus + 2, 0), bdf(bus + 2, 1)
        bridge(root, [port], numa)
        bridge(root, [port, up], numa)
        bridge(root, [port, up, down_gpu], numa)
        bridge(root, [port, up, down_nic], numa)
        cpus = "0-55,112-167" if numa == 0 else "56-111,168-223"
        gpu = bdf(bus + 3)
        pci(root, [port, up, down_gpu, gpu],
            dict(pcie("32.0 GT/s PCIe", gpu_width.get(g, 16)), vendor="0x10de", device="0x2330",
                 numa_node=str(numa), local_cpulist=cpus, **{"class": "0x030200"}))
        nic = bdf(bus + 4)
        nic_dir = pci(root, [port, up, down_nic, nic],
                      dict(pcie("32.0 GT/s PCIe", 16), vendor="0x15b3", device="0x1021",
                           numa_node=str(numa), local_cpulist=cpus, **{"class": "0x020700"}))
        name, netdev = f"mlx5_{g}", f"ibp{bus + 4}s0"
        dev = os.path.join(nic_dir, "infiniband", name)
        link(nic_dir, os.path.join(dev, "device"))
        p1 = os.path.join(dev, "ports/1")
        is_down = g in down
        write(os.path.join(p1, "state"), "1: DOWN" if is_down else "4: ACTIVE")
        write(os.path.join(p1, "phys_state"), "3: Disabled" if is_down else "5: LinkUp")
        write(os.path.join(p1, "rate"), rate.get(g, "400 Gb/sec (4X NDR)"))
        write(os.path.join(p1, "link_layer"), "InfiniBand")
        for c in COUNTERS:
            write(os.path.join(p1, "counters", c), str(counters.get((g, c), 0)))
        link(dev, os.path.join(root, "class/infiniband", name))
        net = os.path.join(nic_dir, "net", netdev)
        write(os.path.join(net, "type"), "32")
        write(os.path.join(net, "operstate"), "down" if is_down else "up")
        link(nic_dir, os.path.join(net, "device"))
        link(net, os.path.join(root, "class/net", netdev))
    # the management port: a plain Ethernet NIC on the first socket's chipset
    mgmt = pci(root, [bdf(0x04)], dict(pcie("8.0 GT/s PCIe", 8, "8.0 GT/s PCIe", 8), vendor="0x8086",
                                       numa_node="0", **{"class": "0x020000"}))
    eth = os.path.join(mgmt, "net/eno1")
    write(os.path.join(eth, "type"), "1")
    write(os.path.join(eth, "speed"), "25000")
    write(os.path.join(eth, "operstate"), "up")
    link(mgmt, os.path.join(eth, "device"))
    link(eth, os.path.join(root, "class/net/eno1"))
    # a virtual interface: no device, not a NIC
    write(os.path.join(root, "devices/virtual/net/lo/type"), "772")
    link(os.path.join(root, "devices/virtual/net/lo"), os.path.join(root, "class/net/lo"))
    if peermem:
        write(os.path.join(root, "module/nvidia_peermem/refcnt"), "0")
    write(os.path.join(root, "module/nvidia/refcnt"), "12")


TREES = {
    "healthy-8gpu-8nic": {},
    "nic-200g-port-down": {"rate": {3: "200 Gb/sec (4X HDR)"}, "down": (5,)},
    "gpu-pcie-x8": {"gpu_width": {3: 8}},
    "no-peermem": {"peermem": False},
    "counters-before": {"counters": {(2, "symbol_error"): 3, (6, "port_xmit_discards"): 40}},
    "counters-after": {"counters": {(2, "symbol_error"): 15, (2, "link_downed"): 1, (6, "port_xmit_discards"): 40}},
}


def main():
    for name, spec in TREES.items():
        root = os.path.join(HERE, name)
        shutil.rmtree(root, ignore_errors=True)
        node(root, **spec)
    return 0


if __name__ == "__main__":
    sys.exit(main())
