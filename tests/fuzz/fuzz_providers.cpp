// Fuzz target: a providers file (`fabricmap compare --providers`), parsed, then matched to two
// compared files as the command does. A bad file must be a UsageError naming the file (and its
// line), never a crash; a parsed one yields only figures within the documented bounds.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "orchestrator/verdicts/providers.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace orch = fabricmap::orchestrator;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const orch::Providers providers = orch::parseProviders(text, "fuzz.txt");
    for (const orch::ProviderLine& l : providers.lines) {
      if (l.subject.empty() || l.line < 1) __builtin_trap();
      if (l.pricePerGpuHour && !(*l.pricePerGpuHour >= 0 && *l.pricePerGpuHour <= orch::kMaxPricePerGpuHour))
        __builtin_trap();
      if (l.gpuMemoryBytes && !(*l.gpuMemoryBytes >= static_cast<double>(orch::kMinGpuMemoryBytes) &&
                                *l.gpuMemoryBytes <= static_cast<double>(orch::kMaxGpuMemoryBytes)))
        __builtin_trap();
    }
    const std::vector<orch::ComparedFile> files{{"runs/a100.h5", "a100"}, {"gh200.h5", "gh200.h5"}};
    (void)orch::offersFor(files, &providers, {}, 1.0);
  } catch (const fabricmap::core::UsageError& e) {
    if (std::string_view(e.what()).rfind("fuzz.txt", 0) != 0) __builtin_trap();  // every error names the file
  }
  return 0;
}
