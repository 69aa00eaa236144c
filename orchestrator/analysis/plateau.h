// The large-message plateau of a busbw curve: the figure `compare` shows and `verify` judges. An
// average over a whole sweep (nccl-tests' "Avg bus bandwidth") is dominated by the small sizes and
// says nothing about what the fabric delivers; the plateau is what large messages reach.
//
// Rule: the plateau sizes of a scope and op are the measured sizes of at least a quarter of the
// largest size measured there (with a factor-2 sweep: the top three sizes, L/4, L/2, L). A group's
// plateau busbw is the median of its busbw (from the median time) over its rows at those sizes,
// in-place and out-of-place alike; the scope's figure is the median over its groups. Rows with
// wrong results, or without a positive busbw, are left out.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/records.h"

namespace fabricmap::orchestrator {

struct GroupPlateau {
  int group = 0;
  std::string ranks;  // world ranks as ranges, as the rows name them
  int firstRank = -1;  // the lowest world rank of the group (-1: unknown)
  double busbw = 0;    // GB/s
  int samples = 0;     // rows at the plateau sizes
};

struct Plateau {
  std::string scope;
  std::string op;
  int nranks = 0;  // ranks per group
  std::uint64_t fromBytes = 0;  // the plateau sizes measured: fromBytes..toBytes
  std::uint64_t toBytes = 0;
  int sizes = 0;
  double busbw = 0;  // GB/s, median over groups of each group's plateau (the peak: results/busbw_peak.h)
  std::vector<GroupPlateau> groups;  // by group index; groups without a plateau row are absent
};

// The plateau sizes among `sizes` (any order, duplicates allowed): ascending.
std::vector<std::uint64_t> plateauSizes(std::vector<std::uint64_t> sizes);

// The plateau of `scope`/`op` (nccl-tests op name) in `rows`; nothing when no usable row exists.
std::optional<Plateau> plateauOf(const std::vector<core::CollectiveRecord>& rows, std::string_view scope,
                                 std::string_view op);

// The lowest rank of a ranks text ("0-3", "4,6", "2"); -1 when it starts with no number.
int firstRankOf(std::string_view ranks);

}  // namespace fabricmap::orchestrator
