// Open MPI's selected pml, btls and mtl (see mpi_transport.h). Open MPI has no interface that names
// the selected components (its `pml` and `btl` control variables hold what was asked for), so:
// - the pml and mtl: Open MPI's exported `mca_pml_base_selected_component` and
//   `ompi_mtl_base_selected_component`, whose first fields are opal/mca/mca.h's
//   mca_base_component_2_1_0_t: three ints, the project name (16 chars), three ints, the framework
//   name (32), three ints, the component name (64). Read only when the project and framework
//   names are there as expected (Open MPI 3 to 5 keep this layout).
// - the btls: Open MPI unloads the btl components that did not initialize, and their control
//   variables go with them; the "btl_NAME_*" variables left after MPI_Init are the btls in use.
// SimGrid's SMPI (the sim build) has no MPI_T interface and one transport, its network model.
#include "worker/mpi_transport.h"

#include "core/config.h"
#if FABRICMAP_HAVE_SIM
namespace fabricmap::worker {
std::string mpiTransport() { return "smpi (simulated network)"; }
}  // namespace fabricmap::worker
#else

#include <dlfcn.h>
#include <mpi.h>

#include <cstring>
#include <set>
#include <string_view>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace fabricmap::worker {
namespace {

constexpr std::size_t kProjectAt = 12;    // after the component struct's three version ints
constexpr std::size_t kFrameworkAt = 40;  // after the project name (16) and its three ints
constexpr std::size_t kComponentAt = 84;  // after the framework name (32) and its three ints
constexpr std::size_t kComponentLength = 64;

// The name of the component Open MPI selected for `framework`, from the exported `symbol`; empty
// when there is none or it does not look like Open MPI's component structure.
std::string selectedComponent(const char* symbol, std::string_view framework) {
  const auto* component = static_cast<const char*>(dlsym(RTLD_DEFAULT, symbol));
  if (component == nullptr) return {};
  if (std::string_view(component + kProjectAt, strnlen(component + kProjectAt, 16)) != "ompi") return {};
  if (std::string_view(component + kFrameworkAt, strnlen(component + kFrameworkAt, 32)) != framework) return {};
  return {component + kComponentAt, strnlen(component + kComponentAt, kComponentLength - 1)};
}

// The btl components still loaded (their "btl_NAME_*" control variables), sorted.
std::set<std::string> loadedBtls() {
  std::set<std::string> names;
  int provided = 0;
  if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS) return names;
  int count = 0;
  MPI_T_cvar_get_num(&count);
  for (int i = 0; i < count; ++i) {
    char name[256];
    int nameLength = sizeof name;
    int verbosity = 0;
    int bind = 0;
    int scope = 0;
    MPI_Datatype type = MPI_DATATYPE_NULL;
    MPI_T_enum enumeration = MPI_T_ENUM_NULL;
    if (MPI_T_cvar_get_info(i, name, &nameLength, &verbosity, &type, &enumeration, nullptr, nullptr, &bind,
                            &scope) != MPI_SUCCESS) {
      continue;
    }
    const std::string_view n(name);
    if (!n.starts_with("btl_")) continue;
    const std::string_view rest = n.substr(4);
    const std::string_view component = rest.substr(0, rest.find('_'));
    if (component != "base" && component.size() < rest.size()) names.emplace(component);
  }
  MPI_T_finalize();
  return names;
}

}  // namespace

std::string mpiTransport() {
  const std::string pml = selectedComponent("mca_pml_base_selected_component", "pml");
  if (pml.empty()) return {};
  if (pml == "ob1") {
    const std::set<std::string> btls = loadedBtls();
    return btls.empty() ? "pml ob1" : fmt::format("pml ob1, btl {}", fmt::join(btls, ","));
  }
  if (pml == "cm") {
    const std::string mtl = selectedComponent("ompi_mtl_base_selected_component", "mtl");
    return mtl.empty() ? "pml cm" : "pml cm, mtl " + mtl;
  }
  return "pml " + pml;
}

}  // namespace fabricmap::worker
#endif  // FABRICMAP_HAVE_SIM
