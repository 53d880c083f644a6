// omn-audit merge -o OUT SHARD.json...: one result document from the outputs of a sharded sweep.
#include <iostream>

#include "commands.h"
#include "guard.h"
#include "omn/intervene/merge.h"
#include "omn/documents/document.h"
#include "omn/io/json_document.h"
#include "omn/intervene/results.h"
#include "omn/output/json_file.h"
#include "omn/study/analysis.h"
#include "omn/study/study_merge.h"

namespace omn::cli {

Command addMergeCommand(CLI::App& root) {
  auto* app = root.add_subcommand("merge", "join the outputs of a sharded sweep (intervene --shard i/N) or study (study --shard i/N) into one result");
  app->footer("Examples:\n"
              "  omn-audit merge sweep.shard-0.json sweep.shard-1.json -o sweep-merged.json --csv sweep-merged.csv\n"
              "  omn-audit merge cell-0.json cell-1.json -o study.json --force");
  auto paths = std::make_shared<std::vector<std::string>>();
  auto out = std::make_shared<std::string>();
  auto csv = std::make_shared<std::string>();
  auto force = std::make_shared<bool>(false);
  app->add_option("shards", *paths, "every shard's output")->required();
  app->add_option("-o,--output", *out, "the merged result (omn-audit/intervention@1 or omn-audit/study@1, as the shards)")->required();
  app->add_option("--csv", *csv, "also one CSV row per condition (sweep) or per run (study)");
  app->add_flag("--force", *force, "overwrite existing outputs");
  return {app, [=] {
            return readingDocuments(*paths, [&] {
              output::checkDistinctOutputs({{"-o", *out}, {"--csv", *csv}});
              std::ostream& text = output::isStdout(*out) || output::isStdout(*csv) ? std::cerr : std::cout;  // "-": stdout is the document's
              output::checkOutputPath(*out, *force, *paths);
              if (!csv->empty()) output::checkOutputPath(*csv, *force, *paths);
              // the first shard's schema says which kind of job the shards are from
              const auto head = documents::readDocument(paths->front(), "shard", {documents::DocumentKind::intervention, documents::DocumentKind::study});
              if (head.kind == documents::DocumentKind::study) {
                const documents::StudyDocument doc = study::mergeStudyShards(*paths, *out);
                output::writeFileAtomic(*out, output::dumpJson(doc.toJson()));
                if (!csv->empty()) output::writeFileAtomic(*csv, study::studyCsv(doc));
              } else {
                const documents::InterventionDocument doc = intervene::mergeShards(*paths);
                output::writeFileAtomic(*out, output::dumpJson(doc.toJson()));
                if (!csv->empty()) output::writeFileAtomic(*csv, intervene::resultsCsv(doc));
                intervene::printResultsTable(text, doc);
              }
              text << "merged " << paths->size() << " shards into " << *out << "\n";
              return 0;
            });
          }};
}

}  // namespace omn::cli
