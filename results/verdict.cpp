// /verdict: written in place by `verify --record`, the only change fabricmap makes to a file
// after its run.
#include "results/verdict.h"

#include <unistd.h>

#include <filesystem>
#include <variant>

#include "core/error.h"
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

}  // namespace

void writeVerdict(const std::string& path, const VerdictRecord& v) {
  h5::silenceErrorStack();
  std::error_code ec;
  if (std::filesystem::exists(journalPath(path), ec))
    throw core::UsageError(path + ": its run did not end cleanly (a journal exists); no verdict recorded");
  if (!h5::isHdf5File(path)) throw core::UsageError(path + ": not an HDF5 file; no verdict recorded");
  if (access(path.c_str(), W_OK) != 0) throw core::UsageError(path + ": not writable; no verdict recorded");
  try {
    const h5::Handle file = h5::openFile(path, true);
    const h5::Handle group = h5::ensureGroup(file.get(), "/verdict");
    h5::writeAttribute(group.get(), "pass", v.pass);
    h5::writeAttribute(group.get(), "verdict", std::string(v.pass ? "pass" : "fail"));
    h5::writeAttribute(group.get(), "profile", v.profile);
    h5::writeAttribute(group.get(), "profile_source", v.profileSource);
    h5::writeAttribute(group.get(), "checks", static_cast<std::int64_t>(v.checks));
    h5::writeAttribute(group.get(), "failed", static_cast<std::int64_t>(v.failed));
    h5::writeAttribute(group.get(), "missing", static_cast<std::int64_t>(v.missing));
    h5::writeAttribute(group.get(), "allow_missing", v.allowMissing);
    h5::writeAttribute(group.get(), "reasons", v.reasons);
    h5::writeAttribute(group.get(), "created_utc", v.createdUtc);
    h5::writeAttribute(group.get(), "tool_version", v.toolVersion);
    h5::flush(file.get());
  } catch (const core::RuntimeFault& e) {
    throw core::UsageError(path + ": cannot record the verdict: " + e.what());
  }
}

std::optional<VerdictRecord> readVerdict(const std::string& path) {
  h5::silenceErrorStack();
  const h5::Handle file = h5::openFile(path, false);
  if (!h5::exists(file.get(), "/verdict")) return std::nullopt;
  const h5::Handle group = h5::openGroup(file.get(), "/verdict");
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
