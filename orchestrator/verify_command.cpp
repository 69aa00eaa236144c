// `fabricmap verify FILE.h5 --profile P [--profile-file F] [--allow-missing] [--record] [--json]`:
// acceptance against a profile. Exit 0 pass, 1 fail or not judged (a check missing), 2 unusable
// file or profile.
#include <fmt/format.h>

#include <boost/program_options.hpp>
#include <iostream>

#include "core/config.h"
#include "core/error.h"
#include "core/files.h"
#include "core/units.h"
#include "orchestrator/commands.h"
#include "orchestrator/command_line.h"
#include "orchestrator/run/provenance.h"
#include "orchestrator/verdicts/verify.h"
#include "results/h5_reader.h"
#include "results/verdict.h"

namespace fabricmap::orchestrator {
namespace {

constexpr const char* kVerifyUsage =
    "usage: fabricmap verify FILE.h5 (--profile NAME | --profile-file P.txt | --baseline history.json)\n"
    "                        [--allow-missing] [--record] [--json]\n"
    "       fabricmap verify --list-profiles";

std::string listProfiles() {
  std::string out;
  for (const Profile& p : builtinProfiles()) {
    out += fmt::format("{}: class {}, {} GPUs per node{}, intra all_reduce >= {:.1f} GB/s, inter >= {:.1f} GB/s per "
                       "NIC, worst pair >= {:.2f} of median, scaling >= {:.2f}, plateau from {}\n",
                       p.name, p.topologyClass.value_or("any"), p.gpusPerNode.value_or(0),
                       p.gpuModel ? " (" + *p.gpuModel + ")" : "", p.minIntraAllReduceBusbw.value_or(0),
                       p.minInterAllReduceBusbwPerNic.value_or(0), p.minPairFraction.value_or(0),
                       p.minScalingEfficiency.value_or(0), core::formatBytes(p.minPlateauBytes));
    if (p.minGpuMemoryGb || p.minNicRateGbps || p.gpuDirectRequired) {
      out += fmt::format("    hardware: GPU memory >= {:g} GB, active RDMA ports >= {:g} Gb/s, {:g} per GPU, GPUDirect {}, "
                         "NUMA binding {}, node pairs >= {:.2f} of the line rate\n",
                         p.minGpuMemoryGb.value_or(0), p.minNicRateGbps.value_or(0), p.minNicsPerGpu.value_or(0),
                         p.gpuDirectRequired ? "required" : "not required",
                         p.numaBindingRequired ? "required" : "not required", p.minLineRateFraction.value_or(0));
    }
    for (const std::string& s : p.sources) out += "    " + s + "\n";
  }
  return out;
}

}  // namespace

int verifyCommand(const std::vector<std::string>& args) {
  namespace po = boost::program_options;
  po::options_description opts("fabricmap verify options");
  const std::string profileHelp = fmt::format("built-in profile ({}) or custom", profileNames());
  // clang-format off
  opts.add_options()
    ("help,h", "show this help")
    ("json", "print JSON (documented in README.md)")
    ("profile", po::value<std::string>(), profileHelp.c_str())
    ("profile-file", po::value<std::string>(), "a custom profile: key = value lines (README.md)")
    ("allow-missing", "a check the file has no measurement for does not keep the verdict from PASS (without it: "
                      "NOT JUDGED, exit 1)")
    ("record", "write the verdict into the file's /verdict (opens it read-write)")
    ("baseline", po::value<std::string>(), "also judge the file against a run history's baseline "
                                           "(fabricmap history --write-baseline)")
    ("list-profiles", "print the built-in profiles and where their figures come from")
    ("file", po::value<std::string>(), "results file");
  // clang-format on
  po::positional_options_description positional;
  positional.add("file", 1);
  const po::variables_map vm = parseCommandLine(args, opts, positional, kVerifyUsage);
  if (vm.count("help")) {
    std::cout << kVerifyUsage << "\n\n" << opts;
    return 0;
  }
  if (vm.count("list-profiles")) {
    std::cout << listProfiles();
    return 0;
  }
  if (!vm.count("file")) throw core::UsageError(fmt::format("no results file given ({})", kVerifyUsage));
  // the profile and baseline first: a bad one is the caller's mistake whatever the file holds
  Profile profile;
  std::optional<Baseline> baseline;
  if (vm.count("baseline")) baseline = readBaseline(vm["baseline"].as<std::string>());
  const std::string name = vm.count("profile") ? vm["profile"].as<std::string>() : "custom";
  if (baseline && !vm.count("profile") && !vm.count("profile-file")) {
    profile.name = "baseline";
    profile.source = baseline->path;
  } else if (vm.count("profile-file")) {
    if (name != "custom")
      throw core::UsageError(fmt::format("--profile {} is built in; --profile-file goes with --profile custom (or "
                                         "alone); start a file with `base = {}` to adjust a built-in",
                                         name, name));
    profile = readProfileFile(vm["profile-file"].as<std::string>());
  } else if (name == "custom") {
    throw core::UsageError(vm.count("profile") ? "--profile custom needs --profile-file FILE"
                                               : fmt::format("no profile given ({})", kVerifyUsage));
  } else if (auto builtin = findProfile(name)) {
    profile = *builtin;
  } else {
    throw core::UsageError(fmt::format("unknown profile '{}' (built-in: {}; or custom with --profile-file)", name,
                                       profileNames()));
  }
  const std::string path = vm["file"].as<std::string>();
  const results::ResultsFile file = results::readResults(path);
  if (file.topology.ranks.empty()) throw core::UsageError(path + ": no rank topology recorded: nothing to verify");
  const Verification v = verify(profile, file, vm.count("allow-missing") > 0, baseline ? &*baseline : nullptr);
  if (vm.count("record")) {
    results::VerdictRecord record = verdictRecordOf(v);
    record.createdUtc = utcNow(false);
    record.toolVersion = FABRICMAP_VERSION;
    const core::OutputLock lock(path, "fabricmap verify --record");  // no run or verify writes it meanwhile
    results::writeVerdict(path, record);
  }
  if (vm.count("json")) {
    std::cout << verificationToJson(v).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
  } else {
    std::cout << verificationText(v);
  }
  return static_cast<int>(v.pass ? core::ExitCode::kOk : core::ExitCode::kMeasuredFailure);
}

}  // namespace fabricmap::orchestrator
