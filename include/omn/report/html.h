// The review report: one self-contained HTML file (inline SVG and CSS, nothing fetched) or the same
// content as Markdown with the SVGs beside it. Built from the documents alone, read as their structs
// (documents/).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "omn/documents/eval_document.h"
#include "omn/documents/intervention_document.h"
#include "omn/documents/profile_document.h"
#include "omn/documents/study_document.h"
#include "omn/documents/track_document.h"
#include "omn/documents/train_document.h"
#include "omn/report/plots.h"

namespace omn::report {

// At most one of each kind; of the results (a sweep, an eval, a study), at most one.
struct ReportInput {
  std::optional<documents::InterventionDocument> sweep;
  std::optional<documents::EvalDocument> eval;
  std::optional<documents::StudyDocument> study;
  std::optional<documents::ProfileDocument> profile;
  std::optional<documents::TrackDocument> track;
  std::optional<documents::TrainDocument> run;     // a run's train.json
  std::vector<documents::TrainLogRecord> run_log;  // the run's log records (train::readRunLog), for its figures
};

// The result's provenance (nullptr: no result).
const documents::Provenance* resultProvenance(const ReportInput& in);

// Warnings a reviewer must see first (NaN conditions, unverified checkpoint, a control that did
// not reproduce, failed restores, a non-held-out historical panel, drift from the tool's build).
std::vector<std::string> reportWarnings(const ReportInput& in);

std::string htmlReport(const ReportInput& in);
// Markdown; `figure_dir` is where the SVGs go, relative to the Markdown file.
std::string markdownReport(const ReportInput& in, const std::string& figure_dir);
std::vector<Figure> reportFigures(const ReportInput& in);

}  // namespace omn::report
