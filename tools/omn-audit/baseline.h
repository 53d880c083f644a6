// --baseline for profile and track: an earlier profile (--json output), a reference file, or the
// name of an embedded reference ("omn-1-reference" = configs/omn-1-reference-profile.json); and
// --count-range, the profile option a baseline must agree with.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "omn/audit/profile.h"
#include "omn/audit/regression.h"
#include "omn/embedded.h"
#include "omn/documents/document.h"
#include "omn/documents/tolerance_document.h"
#include "omn/io/json_document.h"
#include "omn/io/terminal_text.h"

namespace omn::cli {

// Read, validated and typed on entry (audit::readBaseline).
inline audit::Baseline loadBaseline(const std::string& b) {
  const auto& files = embeddedConfigs();
  if (auto it = files.find(b + "-profile.json"); it != files.end())
    return audit::readBaseline(io::parseJson(it->second, "embedded baseline " + b), "embedded baseline " + b);
  return audit::readBaseline(io::readJsonFile(b, "baseline"), "baseline " + b);
}

// --tolerance: an omn-audit/tolerance@1 document, validated and typed on entry.
inline documents::ToleranceDocument loadTolerance(const std::string& path) {
  return documents::ToleranceDocument::fromJson(documents::readDocument(path, "tolerance", {documents::DocumentKind::tolerance}).json,
                                                "tolerance " + path);
}

// --count-range RANGE, repeatable: one range per occurrence, never the checkpoint after it.
inline void addCountRangeOption(CLI::App& app, std::vector<std::string>& ranges) {
  app.add_option("--count-range", ranges,
                 "count the gains in this range, e.g. '[1,2]', '(32,inf)', '>=1.43'; repeat for several (replaces the "
                 "default pair [1,2] and (32,inf))")
      ->allow_extra_args(false);
}

// Parsed at the edge: given ranges replace the default pair.
inline void applyCountRanges(const std::vector<std::string>& ranges, audit::ProfileOptions& options) {
  if (ranges.empty()) return;
  options.count_ranges.clear();
  for (const auto& r : ranges) options.count_ranges.push_back(audit::parseCountRange(r, "--count-range"));
}

// Before the first checkpoint is hashed: the options can be checked against the baseline at all
// (exit 2 naming the option), and tolerance rules that match nothing are named.
inline void checkBaselineFirst(const audit::Baseline& baseline, const std::optional<documents::ToleranceDocument>& tolerance,
                               const audit::ProfileOptions& options, const std::string& baseline_path, const std::string& tolerance_path) {
  audit::validate(options);
  audit::checkComparable(baseline, audit::optionsRecord(options), baseline_path);
  for (const auto& r : audit::unmatchedRules(baseline, tolerance))
    spdlog::warn("{}: tolerance rule {} matches no statistic of the baseline {}: it changes nothing",
                 io::terminalSafe(tolerance_path), io::terminalSafe(r, 200), io::terminalSafe(baseline_path));
}

}  // namespace omn::cli
