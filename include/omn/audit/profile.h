// Statistics of the Q/K gains, in float64 from the exact stored values. Every definition is in
// docs/profile.md; the JSON layout is docs/schema/profile.schema.json.
#pragma once
#include <vector>

#include <nlohmann/json.hpp>

#include "omn/audit/gain_set.h"

namespace omn::audit {

struct ProfileOptions {
  double threshold = 1.43;                               // share above (strictly greater)
  std::vector<double> hist_edges = {0, 1, 2, 4, 8, 16, 32};
  double pivot = 1.0;  // an edge <= pivot belongs to the interval on its right, else to the left
  int top_k = 10;
};

// Validates the options (edges strictly increasing, top_k >= 0); throws UsageError.
void validate(const ProfileOptions& o);

// The "statistics", "histogram", "negatives", "non_finite", "layers", "steepest_change", "top" and
// "options" members of a profile document. A NaN or infinite gain is counted (count_non_finite)
// and listed with its place (non_finite, the first 100), never binned, averaged or ranked.
nlohmann::json computeProfile(const GainSet& gains, const ProfileOptions& options);

// Histogram bin labels for the edges and pivot, e.g. "<0", "[0,1)", "[1,2]", "(2,4]", ">32".
std::vector<std::string> histogramLabels(const ProfileOptions& o);

}  // namespace omn::audit
