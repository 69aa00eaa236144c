// Fuzz target, run by hand (not in CI): a results file as raw bytes, as `fabricmap show` reads it.
// Flipped bytes mostly exercise libhdf5's own parser, which is not instrumented and has known
// loops on damaged files (HDF5 1.10.8 spins in H5HG_read on a damaged global heap; see
// tests/fuzz/README.md); fuzz_results_file is the CI target for fabricmap's reader.
#include <cstddef>
#include <cstdint>

#include "core/error.h"
#include "results/console.h"
#include "results/h5_reader.h"
#include "results/json.h"
#include "results/report.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace results = fabricmap::results;
  static const std::string path = fabricmap::fuzz::scratch("run.h5");
  fabricmap::fuzz::writeFile(path, data, size);
  try {
    const results::ResultsFile file = results::readResults(path);
    results::printResults(fabricmap::fuzz::sink(), file);
    (void)results::toJson(file).dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
    (void)results::renderReport(file);
  } catch (const fabricmap::core::UsageError&) {
  }
  return 0;
}
