// The CI regression check: a profile against a baseline (an earlier profile, or a reference of
// published figures at their published precision), with tolerances per JSON pointer.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace omn::audit {

struct Check {
  std::string pointer;  // "/statistics/mean", "/layers/0/q/mean"
  std::string label;    // what a reader calls it
  double baseline = 0, actual = 0, allowed = 0;
  bool present = true;  // the profile has a number at `pointer`
  bool ok() const;
};

struct RegressionReport {
  std::string baseline_kind;  // "profile" | "reference"
  std::vector<Check> checks;
  std::size_t drifted() const;
};

// A tolerance rule's pointer pattern against a JSON pointer: '*' matches any part of one segment
// ("/layers/*/q/mean", "/statistics/counts/*/count"); linear in practice, never exponential.
bool pointerMatches(std::string_view pattern, std::string_view pointer);

// The numeric statistics a profile is compared on, as pointer → value (docs/profile.md lists them).
std::vector<std::pair<std::string, double>> comparableStatistics(const nlohmann::json& profile);

// Whether a profile computed with `options` (a profile's /options) can be checked against `baseline`
// at all: the same threshold, histogram edges and pivot as a profile baseline, the reference's
// threshold, and every count range the baseline has. Throws UsageError naming the option; cheap,
// so the CLI runs it before hashing a checkpoint (checkRegression runs it again).
void checkComparable(const nlohmann::json& baseline, const nlohmann::json& options, const std::string& baseline_path);
// A baseline of another architecture is not drift (a 4-layer model against OMN-1's 28 layers would
// be 17 DRIFT rows and exit 3): UsageError naming both shapes. A profile baseline must have the
// profile's n_layers and head_dim; a reference (which records figures, not its shape) needs every
// layer a figure names. A profile that does not record its shape is compared statistic by statistic.
void checkSameArchitecture(const nlohmann::json& profile, const nlohmann::json& baseline, const std::string& baseline_path);

// The tolerance rules that match no statistic the baseline is checked on, as '/rules/2 "/x/*"': they
// change nothing (a pattern from an older layout, a typo). Empty without a tolerance.
std::vector<std::string> unmatchedRules(const nlohmann::json& baseline, const nlohmann::json& tolerance,
                                        const std::string& tolerance_path);

// "/statistics/counts/[1,2]/count": where a profile keeps the count of a --count-range.
std::string countPointer(const std::string& range_label);

// `tolerance` may be null: then a reference allows half a unit of each figure's last published
// digit, and a profile baseline allows only floating-point noise (1e-12 relative).
// Throws UsageError for a malformed baseline or tolerance (naming the JSON pointer), or when the
// baseline was computed with other options (threshold, histogram edges).
// The verdict as a profile document carries it (`/regression`): what was compared with what, pass
// or drift, the exit code a CI job sees, and every drifted statistic.
nlohmann::json regressionJson(const RegressionReport& r, const std::string& baseline_path, const std::string& tolerance_path);

RegressionReport checkRegression(const nlohmann::json& profile, const nlohmann::json& baseline,
                                 const nlohmann::json& tolerance, const std::string& baseline_path,
                                 const std::string& tolerance_path);

}  // namespace omn::audit
