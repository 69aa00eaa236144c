// Fuzz target: the sysfs readers of `fabricmap inventory` (topologies/inventory.h) on hostile
// attribute texts. A small tree (one GPU and one RDMA NIC behind a switch port, an Ethernet port)
// is laid out once; each input is split at newlines into the attributes the readers parse (port
// state, physical state, rate, link layer, an error counter, PCIe speeds and widths, Ethernet
// speed, the GPU's local CPUs), read, judged by the inventory rules (a rank's binding too) and
// compared with a second read. Any text must give
// values or unknowns, never a crash. The input is also read as the JSON a node's first rank sends
// in a run (and as a node's GPU description, /inventory/gpus), and every read inventory must
// survive JSON and the results file's rows unchanged. What is left after the attributes is also a
// kernel release (GPUDirect by dma-buf).
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "orchestrator/analysis/inventory_rules.h"
#include "tests/fuzz/fuzz_input.h"
#include "topologies/cuda_driver.h"
#include "topologies/inventory.h"
#include "topologies/inventory_records.h"
#include "topologies/node_records.h"

namespace {

namespace fs = std::filesystem;

struct Tree {
  fs::path root;
  fs::path port;  // class/infiniband/mlx5_0/ports/1
  fs::path gpu;   // the GPU's PCI function
  fs::path slot;  // the switch port above it
  fs::path eth;   // class/net/eno1's device directory
};

void put(const fs::path& file, std::string_view text) {
  fs::create_directories(file.parent_path());
  fabricmap::fuzz::writeFile(file.string(), reinterpret_cast<const std::uint8_t*>(text.data()), text.size());
}

const Tree& tree() {
  static const Tree t = [] {
    Tree x;
    x.root = fabricmap::fuzz::scratch("sys");
    const fs::path rc = x.root / "devices/pci0000:18";
    x.slot = rc / "0000:18:01.0";
    x.gpu = x.slot / "0000:19:00.0";
    const fs::path nic = x.slot / "0000:1a:00.0";
    const fs::path mgmt = x.root / "devices/pci0000:04/0000:04:00.0";
    for (const fs::path& f : {x.slot, x.gpu, nic, mgmt}) {
      fs::create_directories(f);
      fs::create_directories(x.root / "bus/pci/devices");
      fs::create_directory_symlink(f, x.root / "bus/pci/devices" / f.filename());
    }
    put(x.gpu / "vendor", "0x10de");
    put(x.gpu / "class", "0x030200");
    const fs::path dev = nic / "infiniband/mlx5_0";
    fs::create_directories(dev);
    fs::create_directory_symlink(nic, dev / "device");
    fs::create_directories(x.root / "class/infiniband");
    fs::create_directory_symlink(dev, x.root / "class/infiniband/mlx5_0");
    x.port = dev / "ports/1";
    x.eth = mgmt / "net/eno1";
    fs::create_directories(x.eth);
    fs::create_directory_symlink(mgmt, x.eth / "device");
    fs::create_directories(x.root / "class/net");
    fs::create_directory_symlink(x.eth, x.root / "class/net/eno1");
    put(x.root / "module/nvidia_peermem/refcnt", "0");
    return x;
  }();
  return t;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace topo = fabricmap::topologies;
  const Tree& t = tree();
  const std::vector<fs::path> files = {
      t.port / "state",           t.port / "phys_state",        t.port / "rate",
      t.port / "link_layer",      t.port / "counters/symbol_error", t.gpu / "current_link_speed",
      t.gpu / "current_link_width", t.gpu / "max_link_speed",    t.gpu / "max_link_width",
      t.slot / "max_link_speed",  t.eth / "speed",              t.eth / "type",
      t.gpu / "local_cpulist"};
  std::string_view rest(reinterpret_cast<const char*>(data), size);
  for (const fs::path& f : files) {
    const std::size_t end = rest.find('\n');
    put(f, rest.substr(0, end));
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
  }
  const topo::Inventory first = topo::readInventory(t.root);
  const auto findings = fabricmap::orchestrator::inventoryFindings(first, {"fuzz", 0});
  put(t.port / "counters/symbol_error", rest);  // what is left: the counter's second read
  const auto grown = fabricmap::orchestrator::linkErrorFindings(first, topo::readInventory(t.root), {"fuzz", 0});
  for (const auto& f : findings) std::fputs(f.message.c_str(), fabricmap::fuzz::sink());
  for (const auto& f : grown) std::fputs(f.message.c_str(), fabricmap::fuzz::sink());
  // a rank on the GPU, its CPUs what is left of the input, judged against the GPU's local CPUs
  fabricmap::core::Topology ranks;
  ranks.inventory = topo::inventoryRows(first, 0);
  ranks.ranks.resize(1);
  ranks.ranks[0].gpuBusId = "0000:19:00.0";
  ranks.ranks[0].cpus = std::string(rest.substr(0, 256));
  ranks.ranks[0].nic = "mlx5_0";
  for (const auto& f : fabricmap::orchestrator::bindingFindings(ranks)) std::fputs(f.message.c_str(), fabricmap::fuzz::sink());
  fabricmap::orchestrator::recordBindings(ranks);
  // what is left as a kernel release, deciding GPUDirect by dma-buf
  const topo::GpuDirect viaDmaBuf = topo::withDmaBuf(first.gpuDirect, {topo::Tristate::kYes, "fuzz"}, rest);
  std::fputs(viaDmaBuf.how.c_str(), fabricmap::fuzz::sink());
  // the same input as the JSON a node's first rank sends rank 0, and the inventory read through
  // JSON and the results file's rows: every value kept, whatever it is
  const auto json = nlohmann::json::parse(std::string_view(reinterpret_cast<const char*>(data), size), nullptr, false);
  if (!json.is_discarded()) {
    const topo::Inventory sent = topo::fromInventoryJson(json);
    const auto judged = fabricmap::orchestrator::inventoryFindings(sent, {"fuzz", 0});
    for (const auto& f : judged) std::fputs(f.message.c_str(), fabricmap::fuzz::sink());
    // and as a node's GPU description (its gpu_list): /inventory/gpus rows, judged
    if (json.is_object()) {
      fabricmap::core::Topology gpus;
      gpus.inventory.gpus = topo::gpuInventoryRows(json, 0);
      for (const auto& f : fabricmap::orchestrator::gpuHealthFindings(gpus)) {
        std::fputs(f.message.c_str(), fabricmap::fuzz::sink());
      }
    }
  }
  // through JSON as a run sends it (text that is not UTF-8 replaced), then the file's rows
  const auto text = [](const topo::Inventory& inv) {
    return topo::inventoryJson(inv).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  };
  topo::Inventory read = first;
  read.notes.clear();  // the rows join them into one text
  const topo::Inventory back = topo::fromInventoryJson(nlohmann::json::parse(text(read)));
  if (text(topo::inventoryOf(topo::inventoryRows(back, 0), 0)) != text(read)) __builtin_trap();
  return 0;
}
