// Statistics of the Q/K gains, in float64 from the exact stored values. Every definition is in
// docs/profile.md; the JSON layout is docs/schema/profile.schema.json.
#pragma once
#include <cmath>
#include <string>
#include <vector>

#include "omn/audit/gain_set.h"
#include "omn/documents/profile_document.h"

namespace omn::audit {

// A range of gain values whose coordinates the profile counts (/statistics/counts). Each end is
// open or closed; an infinite end is open. Written in interval notation, "[1,2]" or "(32,inf)":
// that label is the range's key in the document, so a gate can find it again.
struct CountRange {
  double lo = -INFINITY, hi = INFINITY;
  bool lo_closed = false, hi_closed = false;

  std::string label() const;  // "[1,2]", "(32,inf)": each end in its shortest round-trip form
  bool contains(double x) const;
};

// Parses "[a,b]", "(a,b)", "[a,b)", "(a,b]" (a and b numbers, inf or -inf) or ">x", ">=x", "<x",
// "<=x"; throws UsageError naming `flag` and the text.
CountRange parseCountRange(const std::string& text, const std::string& flag);

struct ProfileOptions {
  double threshold = 1.43;                               // share above (strictly greater)
  std::vector<double> hist_edges = {0, 1, 2, 4, 8, 16, 32};
  double pivot = 1.0;  // an edge <= pivot belongs to the interval on its right, else to the left
  int top_k = 10;
  // the audit's two counts (seed 000: 5,233 gains in [1, 2] and 59 above 32) unless --count-range
  std::vector<CountRange> count_ranges = {{1, 2, true, true}, {32, INFINITY, false, false}};
};

// Validates the options (edges strictly increasing, top_k >= 0, count ranges not empty and
// distinct); throws UsageError.
void validate(const ProfileOptions& o);

// A profile document of the gains: its options, gains, statistics, histogram, distribution,
// negatives, non_finite, layers, steepest_change and top (the checkpoint, the preset, the tensors,
// the parameters and the provenance are profileCheckpoint's). A NaN or infinite gain is counted
// (count_non_finite) and listed with its place (non_finite, the first 100), never binned, averaged
// or ranked.
documents::ProfileDocument computeProfile(const GainSet& gains, const ProfileOptions& options);

// The "options" member of a profile document: what the numbers were computed with.
documents::ProfileOptionsRecord optionsRecord(const ProfileOptions& options);

// Histogram bin labels for the edges and pivot, e.g. "<0", "[0,1)", "[1,2]", "(2,4]", ">32".
std::vector<std::string> histogramLabels(const ProfileOptions& o);

}  // namespace omn::audit
