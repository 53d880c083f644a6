// The CI regression check: a profile against a baseline (an earlier profile, or a reference of
// published figures at their published precision), with tolerances per JSON pointer. Every input is
// its struct, read once at the edge (readBaseline, ToleranceDocument::fromJson); the verdict is the
// profile document's /regression (regressionVerdict).
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "omn/documents/profile_document.h"
#include "omn/documents/reference_profile_document.h"
#include "omn/documents/tolerance_document.h"

namespace omn::audit {

struct Check {
  std::string pointer;  // "/statistics/mean", "/layers/0/q/mean"
  std::string label;    // what a reader calls it
  // null: the baseline has none there (a statistic of no finite gain); only a profile without one
  // either matches it
  std::optional<double> baseline;
  double actual = 0, allowed = 0;
  bool present = true;  // the profile has a number at `pointer`
  bool ok() const;
};

struct RegressionReport {
  std::string baseline_kind;  // "profile" | "reference"
  std::vector<Check> checks;
  std::size_t drifted() const;
  // The checks outside their tolerance, as a document records them (/regression/drifts, a track's
  // /checkpoints/i/drift/statistics); a statistic missing from the profile has no actual value.
  std::vector<documents::Drift> drifts() const;
};

// --baseline: an earlier profile (--json output) or a reference of published figures.
using Baseline = std::variant<documents::ProfileDocument, documents::ReferenceProfileDocument>;

// A --baseline document as parsed, read from `label` ("baseline b.json"): checked as a profile or a
// reference (documents::acceptDocument: the schema, the shape rules, older forms read as today's)
// and read as its struct. FormatError naming the label and the JSON pointer.
Baseline readBaseline(nlohmann::json doc, const std::string& label);

// A tolerance rule's pointer pattern against a JSON pointer: '*' matches any part of one segment
// ("/layers/*/q/mean", "/statistics/counts/*/count"); linear in practice, never exponential.
bool pointerMatches(std::string_view pattern, std::string_view pointer);

// The statistics a profile is compared on, as pointer → value (docs/profile.md lists them); null
// where the profile has none (a moment or a steepest change of no finite gain). A count a profile
// from before it was counted lacks (count_non_finite) is not listed.
std::vector<std::pair<std::string, std::optional<double>>> comparableStatistics(const documents::ProfileDocument& profile);

// Whether a profile computed with `options` (a profile's /options) can be checked against `baseline`
// at all: the same threshold, histogram edges and pivot as a profile baseline, the reference's
// threshold, and every count range the baseline has. Throws UsageError naming the option; cheap,
// so the CLI runs it before hashing a checkpoint (checkRegression runs it again).
void checkComparable(const Baseline& baseline, const documents::ProfileOptionsRecord& options, const std::string& baseline_path);
// A baseline of another architecture is not drift (a 4-layer model against OMN-1's 28 layers would
// be 17 DRIFT rows and exit 3): UsageError naming both shapes. A profile baseline must have the
// profile's n_layers and head_dim; a reference (which records figures, not its shape) needs every
// layer a figure names.
void checkSameArchitecture(const documents::ProfileDocument& profile, const Baseline& baseline, const std::string& baseline_path);

// The tolerance rules that match no statistic the baseline is checked on, as '/rules/2 "/x/*"': they
// change nothing (a pattern from an older layout, a typo). Empty without a tolerance.
std::vector<std::string> unmatchedRules(const Baseline& baseline, const std::optional<documents::ToleranceDocument>& tolerance);

// "/statistics/counts/[1,2]/count": where a profile keeps the count of a --count-range.
std::string countPointer(const std::string& range_label);

// The verdict as a profile document carries it (`/regression`): what was compared with what, pass
// or drift, the exit code a CI job sees, and every drifted statistic. `tolerance_path` "": none.
documents::RegressionVerdict regressionVerdict(const RegressionReport& r, const std::string& baseline_path,
                                               const std::string& tolerance_path);

// Without a tolerance a reference allows half a unit of each figure's last published digit, and a
// profile baseline allows only floating-point noise (1e-12 relative). Throws UsageError when the
// baseline was computed with other options (threshold, histogram edges) or is of another
// architecture, FormatError when it has no statistic to compare.
RegressionReport checkRegression(const documents::ProfileDocument& profile, const Baseline& baseline,
                                 const std::optional<documents::ToleranceDocument>& tolerance, const std::string& baseline_path);

}  // namespace omn::audit
