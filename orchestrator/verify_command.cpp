// `fabricmap verify FILE.h5 --profile P [--profile-file F] [--allow-missing] [--record] [--json]`:
// acceptance against a profile. Exit 0 pass, 1 fail, 2 unusable file or profile.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <boost/program_options.hpp>
#include <iostream>

#include "core/config.h"
#include "core/error.h"
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

std::string statusText(CheckStatus s) {
  switch (s) {
    case CheckStatus::kPass: return "PASS";
    case CheckStatus::kFail: return "FAIL";
    case CheckStatus::kMissing: return "MISSING";
  }
  return "MISSING";
}

std::string verdictLine(const Verification& v) {
  const int total = static_cast<int>(v.checks.size());
  std::vector<std::string> failed;
  std::vector<std::string> missing;
  for (const Check& c : v.checks) {
    if (c.status == CheckStatus::kFail) failed.push_back(c.check + " " + c.subject);
    if (c.status == CheckStatus::kMissing) missing.push_back(c.check + " " + c.subject);
  }
  std::string line = fmt::format("VERDICT: {} (", v.pass ? "PASS" : "FAIL");
  if (v.failed == 0 && v.missing == 0) return line + fmt::format("{} of {} checks passed)", total, total);
  std::vector<std::string> parts;
  if (!failed.empty())
    parts.push_back(fmt::format("{} of {} checks failed: {}", failed.size(), total, fmt::join(failed, ", ")));
  if (!missing.empty()) {
    parts.push_back(fmt::format("{} not measured{}: {}", missing.size(),
                                v.allowMissing ? " (allowed by --allow-missing)" : "", fmt::join(missing, ", ")));
  }
  return line + fmt::format("{})", fmt::join(parts, "; "));
}

std::string verificationText(const Verification& v) {
  std::size_t w[4] = {5, 7, 8, 8};
  for (const Check& c : v.checks) {
    w[0] = std::max(w[0], c.check.size());
    w[1] = std::max(w[1], c.subject.size());
    w[2] = std::max(w[2], c.measured.size() + (c.unit.empty() ? 0 : c.unit.size() + 1));
    w[3] = std::max(w[3], c.required.size() + (c.unit.empty() ? 0 : c.unit.size() + 1));
  }
  const auto withUnit = [](const std::string& text, const std::string& unit) {
    return unit.empty() || text == "-" ? text : text + " " + unit;
  };
  std::string out = fmt::format("# fabricmap verify: {} against profile {} ({})\n#\n", v.file, v.profile.name,
                                v.profile.source);
  out += fmt::format("# {:<{}}  {:<{}}  {:>{}}  {:>{}}  {}\n", "check", w[0], "subject", w[1], "measured", w[2],
                     "required", w[3], "result");
  for (const Check& c : v.checks) {
    out += fmt::format("  {:<{}}  {:<{}}  {:>{}}  {:>{}}  {}\n", c.check, w[0], c.subject, w[1],
                       withUnit(c.measured, c.unit), w[2], withUnit(c.required, c.unit), w[3], statusText(c.status));
  }
  out += "#\n# how each figure was measured (thresholds judged on the large-message plateau):\n";
  for (const Check& c : v.checks) {
    if (!c.detail.empty()) out += fmt::format("#   {} {}: {}\n", c.check, c.subject, c.detail);
  }
  for (const std::string& s : v.profile.sources) out += fmt::format("# requirement: {}\n", s);
  for (const std::string& n : v.notes) out += fmt::format("# note: {}\n", n);
  out += verdictLine(v) + "\n";
  return out;
}

}  // namespace

int verifyCommand(const std::vector<std::string>& args) {
  namespace po = boost::program_options;
  po::options_description opts("fabricmap verify options");
  // clang-format off
  opts.add_options()
    ("help,h", "show this help")
    ("json", "print JSON (documented in README.md)")
    ("profile", po::value<std::string>(), "built-in profile (hgx-h100-8, hgx-a100-8, hgx-h200-8, pcie-8) or custom")
    ("profile-file", po::value<std::string>(), "a custom profile: key = value lines (README.md)")
    ("allow-missing", "a check the file has no measurement for does not fail the verdict")
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
    results::VerdictRecord record;
    record.pass = v.pass;
    record.profile = v.profile.name;
    record.profileSource = v.profile.source;
    record.checks = static_cast<int>(v.checks.size());
    record.failed = v.failed;
    record.missing = v.missing;
    record.allowMissing = v.allowMissing;
    record.reasons = fmt::format("{}", fmt::join(v.reasons, "\n"));
    record.createdUtc = utcNow(false);
    record.toolVersion = FABRICMAP_VERSION;
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
