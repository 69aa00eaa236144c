// Fuzz target: a results journal (FILE.h5.journal) as `fabricmap show` reads it when a run died:
// read, then printed as text and as JSON. A damaged journal must be a UsageError or read as far as
// its whole steps go, never a crash.
#include <cstddef>
#include <cstdint>

#include "core/error.h"
#include "results/console.h"
#include "results/journal.h"
#include "results/json.h"
#include "results/report.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace results = fabricmap::results;
  static const std::string path = fabricmap::fuzz::scratch("run.h5");
  fabricmap::fuzz::writeFile(results::journalPath(path), data, size);
  try {
    if (const auto file = results::readJournal(results::journalPath(path), path)) {
      results::printResults(fabricmap::fuzz::sink(), *file);
      (void)results::toJson(*file).dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
      (void)results::renderReport(*file);
    }
  } catch (const fabricmap::core::UsageError&) {
  }
  return 0;
}
