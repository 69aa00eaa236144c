// /verdict: written by `verify --record`, the only change fabricmap makes to a file after its run.
#include "results/verdict.h"

#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <variant>

#include <fmt/format.h>

#include "core/error.h"
#include "core/files.h"
#include "results/h5.h"
#include "results/journal.h"

namespace fabricmap::results {
namespace {

template <typename T>
T attributeOr(hid_t group, const std::string& name, T fallback) {
  const auto v = h5::readAttribute(group, name);
  if (!v) return fallback;
  if (const T* value = std::get_if<T>(&*v)) return *value;
  return fallback;
}

void writeAttributes(const std::string& path, const VerdictRecord& v) {
  {
    const h5::Handle file = h5::openFile(path, true);
    const h5::Handle group = h5::ensureGroup(file.get(), "/verdict");
    h5::writeAttribute(group.get(), "pass", v.pass);
    h5::writeAttribute(group.get(), "verdict", std::string(name(acceptanceOf(v))));
    h5::writeAttribute(group.get(), "profile", v.profile);
    h5::writeAttribute(group.get(), "profile_source", v.profileSource);
    h5::writeAttribute(group.get(), "checks", static_cast<std::int64_t>(v.checks));
    h5::writeAttribute(group.get(), "failed", static_cast<std::int64_t>(v.failed));
    h5::writeAttribute(group.get(), "missing", static_cast<std::int64_t>(v.missing));
    h5::writeAttribute(group.get(), "allow_missing", v.allowMissing);
    h5::writeAttribute(group.get(), "reasons", v.reasons);
    h5::writeAttribute(group.get(), "created_utc", v.createdUtc);
    h5::writeAttribute(group.get(), "tool_version", v.toolVersion);
  }  // closed: everything is in the file before it is synced
  const int fd = ::open(path.c_str(), O_RDONLY);
  const bool synced = fd >= 0 && ::fsync(fd) == 0;
  if (fd >= 0) ::close(fd);
  if (!synced) throw FM_FAULT("cannot sync '" + path + "'");
}

}  // namespace

Acceptance acceptanceOf(const VerdictRecord& v) {
  if (v.failed > 0) return Acceptance::kFail;
  if (v.pass && v.checks > v.missing) return Acceptance::kPass;
  return v.missing > 0 ? Acceptance::kNotJudged : Acceptance::kFail;
}

std::string_view name(Acceptance a) {
  switch (a) {
    case Acceptance::kPass: return "pass";
    case Acceptance::kFail: return "fail";
    case Acceptance::kNotJudged: return "not_judged";
  }
  return "fail";
}

std::string_view title(Acceptance a) {
  switch (a) {
    case Acceptance::kPass: return "PASS";
    case Acceptance::kFail: return "FAIL";
    case Acceptance::kNotJudged: return "NOT JUDGED";
  }
  return "FAIL";
}

std::string acceptanceHeadline(const VerdictRecord& v) {
  const int passed = v.checks - v.failed - v.missing;
  const Acceptance a = acceptanceOf(v);
  const std::string head = fmt::format("ACCEPTANCE: {} against profile {}: ", title(a), v.profile);
  switch (a) {
    case Acceptance::kPass:
      return head + (v.missing == 0 ? fmt::format("{} of {} checks passed", passed, v.checks)
                                            : fmt::format("the {} judged checks passed, {} of {} missing (allowed)",
                                                          passed, v.missing, v.checks));
    case Acceptance::kFail:
      return head + fmt::format("{} of {} checks failed, {} passed, {} missing", v.failed, v.checks, passed, v.missing);
    case Acceptance::kNotJudged:
      return head + fmt::format("{} of {} checks missing ({} judged, {} passed)", v.missing, v.checks,
                                v.checks - v.missing, passed);
  }
  return head;
}

void writeVerdict(const std::string& path, const VerdictRecord& v) {
  h5::silenceErrorStack();
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists(journalPath(path), ec))
    throw core::UsageError(path + ": its run did not end cleanly (a journal exists); no verdict recorded");
  core::requireRegularFile(path, "results file");
  if (!h5::isHdf5File(path)) throw core::UsageError(path + ": not an HDF5 file; no verdict recorded");
  if (access(path.c_str(), W_OK) != 0) throw core::UsageError(path + ": not writable; no verdict recorded");
  const std::string partial = path + ".verdict";
  try {
    // a copy, not the file itself: HDF5 rewrites metadata in place, and a kill between two of its
    // writes would leave the only copy of the measurements unreadable
    fs::remove(partial, ec);  // ours: whatever stands there (a FIFO would block the copy) goes
    if (!fs::copy_file(path, partial, fs::copy_options::overwrite_existing, ec) || ec) {
      throw FM_FAULT("cannot copy it beside itself to '" + partial + "': " + ec.message());
    }
    writeAttributes(partial, v);
    fs::rename(partial, path, ec);
    if (ec) throw FM_FAULT("cannot rename '" + partial + "' over it: " + ec.message());
  } catch (const core::Error& e) {
    fs::remove(partial, ec);
    throw core::UsageError(path + ": cannot record the verdict: " + e.reason());
  }
}

std::optional<VerdictRecord> readVerdict(const std::string& path) {
  h5::silenceErrorStack();
  const h5::Handle file = h5::openFile(path, false);
  return readVerdict(file.get());
}

std::optional<VerdictRecord> readVerdict(hid_t file) {
  if (!h5::exists(file, "/verdict")) return std::nullopt;
  const h5::Handle group = h5::openGroup(file, "/verdict");
  VerdictRecord v;
  v.pass = attributeOr(group.get(), "pass", false);
  v.profile = attributeOr(group.get(), "profile", std::string());
  v.profileSource = attributeOr(group.get(), "profile_source", std::string());
  v.checks = static_cast<int>(attributeOr(group.get(), "checks", std::int64_t{0}));
  v.failed = static_cast<int>(attributeOr(group.get(), "failed", std::int64_t{0}));
  v.missing = static_cast<int>(attributeOr(group.get(), "missing", std::int64_t{0}));
  v.allowMissing = attributeOr(group.get(), "allow_missing", false);
  v.reasons = attributeOr(group.get(), "reasons", std::string());
  v.createdUtc = attributeOr(group.get(), "created_utc", std::string());
  v.toolVersion = attributeOr(group.get(), "tool_version", std::string());
  return v;
}

}  // namespace fabricmap::results
