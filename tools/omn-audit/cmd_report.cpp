// omn-audit report INPUT... -o report.html [--markdown]: the review report of what `plot` takes: a
// sweep, eval or study result, a track, a training run (its directory or train.json) and/or a
// profile, at most one of each kind, each read as its struct (documents/).
#include <sys/stat.h>

#include <cerrno>
#include <iostream>

#include "commands.h"
#include "guard.h"
#include "omn/errors.h"
#include "omn/documents/document.h"
#include "omn/io/json_document.h"
#include "omn/report/html.h"
#include "omn/output/json_file.h"
#include "omn/train/run_records.h"

namespace omn::cli {

namespace {

// One input document in its slot of the report, read as its kind's struct; a run's log beside it
// (and the files read: none may be an output).
void takeDocument(report::ReportInput& in, const documents::Document& d, const std::string& p, std::vector<std::string>& read) {
  using documents::DocumentKind;
  const bool result = d.kind == DocumentKind::intervention || d.kind == DocumentKind::eval || d.kind == DocumentKind::study;
  const bool taken = result ? (in.sweep || in.eval || in.study)
                            : d.kind == DocumentKind::profile ? in.profile.has_value()
                            : d.kind == DocumentKind::track   ? in.track.has_value()
                                                              : in.run.has_value();
  if (taken) throw UsageError(p + ": two documents of the same kind; give at most one of each");
  const std::string label = "input " + p;
  if (d.kind == DocumentKind::intervention) in.sweep = documents::InterventionDocument::fromJson(d.json, label);
  if (d.kind == DocumentKind::eval) in.eval = documents::EvalDocument::fromJson(d.json, label);
  if (d.kind == DocumentKind::study) in.study = documents::StudyDocument::fromJson(d.json, label);
  if (d.kind == DocumentKind::profile) in.profile = documents::ProfileDocument::fromJson(d.json, label);
  if (d.kind == DocumentKind::track) in.track = documents::TrackDocument::fromJson(d.json, label);
  if (d.kind == DocumentKind::train) {
    in.run = train::checkRunRecord(d.json, p).doc;
    const std::string log = train::runLogPath(p, *in.run);
    in.run_log = train::readRunLog(p, *in.run);
    read.push_back(p);
    read.push_back(log);
  }
}

}  // namespace

Command addReportCommand(CLI::App& root) {
  auto* app = root.add_subcommand("report", "one self-contained HTML report (or Markdown + SVGs) from result and profile JSON");
  app->footer("Examples:\n"
              "  omn-audit report sweep.json profile.json -o report.html\n"
              "  omn-audit report study.json -o report.md --markdown\n"
              "  omn-audit report runs/tiny track.json -o run-report.html");
  auto inputs = std::make_shared<std::vector<std::string>>();
  auto out = std::make_shared<std::string>();
  auto markdown = std::make_shared<bool>(false);
  auto force = std::make_shared<bool>(false);
  app->add_option("inputs", *inputs,
                  "what plot takes, at most one of each kind, in any order: a sweep, eval or study result; a track; a training run (its "
                  "directory or train.json); a profile")
      ->required()
      ->expected(1, 4);
  app->add_option("-o,--output", *out, "report.html (or report.md with --markdown)")->required();
  app->add_flag("--markdown", *markdown, "write Markdown, with the SVG figures beside it (OUT.figures/)");
  app->add_flag("--force", *force, "overwrite existing outputs");
  return {app, [=] {
            return readingDocuments(*inputs, [&] {
              report::ReportInput in;
              std::vector<std::string> read = *inputs;  // every file read, a run's log included: none may be an output
              for (const auto& given : *inputs) {
                const std::string p = train::runRecordPath(given);
                const documents::Document d = documents::readDocument(
                    p, "input", {documents::DocumentKind::intervention, documents::DocumentKind::eval, documents::DocumentKind::study,
                                 documents::DocumentKind::profile, documents::DocumentKind::track, documents::DocumentKind::train});
                takeDocument(in, d, p, read);
              }
              output::checkOutputPath(*out, *force, read);
              if (*markdown && output::standardStream(*out))
                throw UsageError("-o " + *out + ": --markdown writes its figures beside the report; give a file");
              if (*markdown) {
                const std::string dir = *out + ".figures";
                const std::string rel = dir.substr(dir.rfind('/') + 1);
                if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) throw UsageError("cannot create directory " + dir);
                const auto figs = report::reportFigures(in);
                for (const auto& f : figs) output::checkOutputPath(dir + "/" + f.name, *force, read);  // all before any is written
                for (const auto& f : figs) output::writeFileAtomic(dir + "/" + f.name, f.svg);
                output::writeFileAtomic(*out, report::markdownReport(in, rel));
              } else {
                output::writeFileAtomic(*out, report::htmlReport(in));
              }
              for (const auto& w : report::reportWarnings(in)) spdlog::warn("{}", w);  // escaped by the log formatter (guard.h)
              if (!output::standardStream(*out)) std::cout << *out << "\n";
              return 0;
            });
          }};
}

}  // namespace omn::cli
