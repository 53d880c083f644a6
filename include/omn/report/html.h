// The review report: one self-contained HTML file (inline SVG and CSS, nothing fetched) or the same
// content as Markdown with the SVGs beside it. Built from the JSON artifacts only.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "omn/report/plots.h"

namespace omn::report {

struct ReportInput {
  nlohmann::json result;   // omn-audit/intervention@1, eval@1 or study@1, or null
  nlohmann::json profile;  // omn-audit/profile@1, or null
  nlohmann::json track;    // omn-audit/track@1, or null
  nlohmann::json run;      // omn-audit/train@1 (a run's train.json), or null
  std::vector<nlohmann::json> run_log;  // the run's log records (train::parseLog), for its figures
};

// Warnings a reviewer must see first (NaN conditions, unverified checkpoint, a control that did
// not reproduce, failed restores, a non-held-out historical panel, drift from the tool's build).
std::vector<std::string> reportWarnings(const ReportInput& in);

std::string htmlReport(const ReportInput& in);
// Markdown; `figure_dir` is where the SVGs go, relative to the Markdown file.
std::string markdownReport(const ReportInput& in, const std::string& figure_dir);
std::vector<Figure> reportFigures(const ReportInput& in);

}  // namespace omn::report
