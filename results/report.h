// The HTML report of a results file (`fabricmap report`): one self-contained page, inline CSS and
// SVG, no scripts and nothing fetched, so it opens anywhere (a ticket attachment, an air-gapped
// cluster). Pure formatting of the records; every text from the file is escaped.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "results/h5_reader.h"

namespace fabricmap::results {

// A section the caller judged and formatted (the advice of orchestrator/verdicts/advise.h): shown
// after the measured sections, before provenance, with a link in the page's navigation. `html` is
// the section's body, already escaped by whoever wrote it.
struct ReportSection {
  std::string id;     // the anchor ("advice")
  std::string title;  // the heading and the link's text
  std::string html;
};

// The whole page.
std::string renderReport(const ResultsFile& file, const std::vector<ReportSection>& extra = {});

// The inventory section (report_inventory.cpp): each node's NICs, PCIe links, GPU memory,
// GPUDirect and error counters, the cells a finding names marked; empty without /inventory.
std::string renderInventory(const ResultsFile& file);

// Text for HTML element content and attribute values: & < > " ' escaped, control characters and
// invalid UTF-8 replaced by U+FFFD (a hostname or message may hold anything).
std::string htmlEscape(std::string_view text);

// Matrices above this many rows are shown binned (blocks of rows and columns, each cell the
// block's minimum), so a 512-node run stays a readable, small page.
inline constexpr int kReportMaxCells = 64;

}  // namespace fabricmap::results
