// omn-audit plot INPUT -o DIR: the figures of a profile, sweep, study, track or training run, as SVG
// files (each with the CSV of its data). A run is its directory or its train.json: the log it names
// (log.jsonl) is read beside it, up to its last whole line (a run still writing can be plotted).
#include <sys/stat.h>

#include <cerrno>
#include <filesystem>
#include <iostream>

#include "commands.h"
#include "guard.h"
#include "omn/errors.h"
#include "omn/documents/document.h"
#include "omn/io/json_document.h"
#include "omn/output/json_file.h"
#include "omn/report/plots.h"
#include "omn/train/run_records.h"

namespace omn::cli {

namespace {

// The figures of a document, read as its kind's struct; a run's log beside its train.json.
std::vector<report::Figure> figuresOf(const documents::Document& d, const std::string& path, const std::vector<std::string>& runs) {
  using documents::DocumentKind;
  if (!runs.empty() && d.kind != DocumentKind::study)
    throw UsageError("--runs: only for a study document; " + path + " is " +
                     (d.kind == DocumentKind::train ? std::string("a training run") : "\"" + std::string(documents::schemaId(d.kind)) + "\""));
  const std::string label = "input " + path;
  switch (d.kind) {
    case DocumentKind::profile:
      return report::profileFigures(documents::ProfileDocument::fromJson(d.json, label));
    case DocumentKind::intervention:
      return report::sweepFigures(documents::InterventionDocument::fromJson(d.json, label));
    case DocumentKind::study:
      return report::studyFigures(documents::StudyDocument::fromJson(d.json, label), runs);
    case DocumentKind::track:
      return report::trackFigures(documents::TrackDocument::fromJson(d.json, label));
    case DocumentKind::train: {
      const documents::TrainDocument record = train::checkRunRecord(d.json, path).doc;
      return report::runFigures(record, train::readRunLog(path, record));
    }
    default:
      throw UsageError(path + ": /schema: expected omn-audit/profile@1, intervention@1, study@1, track@1 or train@1, got \"" +
                       documents::schemaId(d.kind) + "\"");
  }
}

}  // namespace

Command addPlotCommand(CLI::App& root) {
  auto* app = root.add_subcommand("plot", "write the figures (SVG) of a profile, sweep, study, track or training run");
  app->footer("Examples:\n"
              "  omn-audit plot sweep.json -o figures\n"
              "  omn-audit plot runs/tiny -o figures/tiny\n"
              "  omn-audit plot study.json -o figures --runs qk-on_lr-6.579e-03_seed-0");
  auto input = std::make_shared<std::string>();
  auto dir = std::make_shared<std::string>();
  auto force = std::make_shared<bool>(false);
  app->add_option("input", *input, "a profile (profile --json), sweep (intervene), study or track document, or a training run (its directory or train.json)")->required();
  app->add_option("-o,--output", *dir, "directory for the figures: each SVG with the CSV of its data beside it (created if missing)")->required();
  auto runs = std::make_shared<std::vector<std::string>>();
  app->add_option("--runs", *runs, "study only: the run ids whose training trajectories to draw (comma-separated)")->delimiter(',');
  app->add_flag("--force", *force, "overwrite existing figures");
  return {app, [=] {
            // "-" means standard output everywhere else: a directory of figures cannot go there
            if (output::standardStream(*dir)) throw UsageError("-o " + *dir + ": plot writes a directory of figures, not a stream; name a directory");
            return readingDocuments({*input}, [&] {
              const std::string path = train::runRecordPath(*input);
              const documents::Document d = documents::readDocument(path, "input", {documents::DocumentKind::profile, documents::DocumentKind::intervention,
                                                                       documents::DocumentKind::study, documents::DocumentKind::track, documents::DocumentKind::train});
              const std::vector<report::Figure> figs = figuresOf(d, path, *runs);
              std::error_code ec;  // created if missing, parents too (as --help says)
              std::filesystem::create_directories(*dir, ec);
              if (ec || !std::filesystem::is_directory(*dir)) throw UsageError("-o " + *dir + ": cannot create the directory" + (ec ? ": " + ec.message() : ""));
              for (const auto& f : figs)  // every path checked before any is written
                for (const auto& name : {f.name, f.csvName()}) output::checkOutputPath(*dir + "/" + name, *force, {*input});
              for (const auto& f : figs) {
                output::writeFileAtomic(*dir + "/" + f.name, f.svg);
                output::writeFileAtomic(*dir + "/" + f.csvName(), f.csv);  // the data drawn, to re-plot in one's own style
                std::cout << *dir << "/" << f.name << "\n";
              }
              return 0;
            });
          }};
}

}  // namespace omn::cli
