// omn-audit report RESULT.json [PROFILE.json] -o report.html [--markdown]: the review report.
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

namespace omn::cli {

Command addReportCommand(CLI::App& root) {
  auto* app = root.add_subcommand("report", "one self-contained HTML report (or Markdown + SVGs) from result and profile JSON");
  app->footer("Examples:\n"
              "  omn-audit report sweep.json profile.json -o report.html\n"
              "  omn-audit report study.json -o report.md --markdown");
  auto inputs = std::make_shared<std::vector<std::string>>();
  auto out = std::make_shared<std::string>();
  auto markdown = std::make_shared<bool>(false);
  auto force = std::make_shared<bool>(false);
  app->add_option("inputs", *inputs, "one or two documents: a sweep, eval or study result and/or a profile, in any order")->required()->expected(1, 2);
  app->add_option("-o,--output", *out, "report.html (or report.md with --markdown)")->required();
  app->add_flag("--markdown", *markdown, "write Markdown, with the SVG figures beside it (OUT.figures/)");
  app->add_flag("--force", *force, "overwrite existing outputs");
  return {app, [=] {
            return readingDocuments(*inputs, [&] {
              report::ReportInput in;
              for (const auto& p : *inputs) {
                documents::Document d = documents::readDocument(p, "input", {documents::DocumentKind::intervention, documents::DocumentKind::eval,
                                                                documents::DocumentKind::study, documents::DocumentKind::profile});
                nlohmann::json& slot = d.kind == documents::DocumentKind::profile ? in.profile : in.result;
                if (!slot.is_null()) throw UsageError(p + ": two documents of the same kind; give one result and one profile");
                slot = std::move(d.json);
              }
              output::checkOutputPath(*out, *force, *inputs);
              if (*markdown && output::standardStream(*out))
                throw UsageError("-o " + *out + ": --markdown writes its figures beside the report; give a file");
              if (*markdown) {
                const std::string dir = *out + ".figures";
                const std::string rel = dir.substr(dir.rfind('/') + 1);
                if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) throw UsageError("cannot create directory " + dir);
                const auto figs = report::reportFigures(in);
                for (const auto& f : figs) output::checkOutputPath(dir + "/" + f.name, *force, *inputs);  // all before any is written
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
