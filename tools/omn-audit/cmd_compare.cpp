// omn-audit compare A.json B.json: the differences between two profiles, statistic by statistic.
#include <cmath>
#include <iostream>
#include <map>

#include "commands.h"
#include "guard.h"
#include "omn/audit/regression.h"
#include "omn/errors.h"
#include "omn/documents/document.h"
#include "omn/documents/profile_document.h"
#include "omn/io/json_document.h"
#include "omn/output/json_file.h"
#include "omn/output/table.h"

namespace omn::cli {

using nlohmann::json;

Command addCompareCommand(CLI::App& root) {
  auto* app = root.add_subcommand("compare", "print the differences between two profile documents");
  app->footer("Examples:\n"
              "  omn-audit compare before.json after.json\n"
              "  omn-audit compare before.json after.json --all");
  auto paths = std::make_shared<std::vector<std::string>>();
  auto all = std::make_shared<bool>(false);
  app->add_option("profiles", *paths, "two --json outputs of `omn-audit profile`")->required()->expected(2);
  app->add_flag("--all", *all, "list equal statistics too");
  return {app, [paths, all] {
            return readingDocuments(*paths, [&] {
              const auto a = documents::readDocument((*paths)[0], "profile", {documents::DocumentKind::profile}).json;
              const auto b = documents::readDocument((*paths)[1], "profile", {documents::DocumentKind::profile}).json;
              const auto pa = documents::ProfileDocument::fromJson(a, "profile " + (*paths)[0]);
              const auto pb = documents::ProfileDocument::fromJson(b, "profile " + (*paths)[1]);
              using Value = std::optional<double>;  // null: the profile has none there (no finite gain)
              std::map<std::string, Value> va, vb;
              const auto sa = audit::comparableStatistics(pa), sb = audit::comparableStatistics(pb);
              for (const auto& [p, v] : sa) va[p] = v;
              for (const auto& [p, v] : sb) vb[p] = v;
              output::Table t({"statistic", "A", "B", "B - A"});
              std::size_t differ = 0, total = 0;
              auto shown = [](const Value* v) { return !v ? "missing" : *v ? output::general(**v) : "none"; };
              auto row = [&](const std::string& p, const Value* x, const Value* y) {
                ++total;
                const bool same = x && y && *x == *y;
                differ += !same;
                if (same && !*all) return;
                t.add({p, shown(x), shown(y), x && y && *x && *y ? output::general(**y - **x) : ""});
              };
              for (const auto& [p, v] : sa) {  // A's order, then what only B has
                auto it = vb.find(p);
                row(p, &v, it == vb.end() ? nullptr : &it->second);
              }
              for (const auto& [p, v] : sb)
                if (!va.count(p)) row(p, nullptr, &v);
              std::cout << "A " << (*paths)[0] << "  sha256 " << pa.checkpoint.sha256.value_or("-") << "\n"
                        << "B " << (*paths)[1] << "  sha256 " << pb.checkpoint.sha256.value_or("-") << "\n"
                        << differ << " of " << total << " statistics differ\n";
              // options that change what a statistic means (profile --baseline refuses such a pair;
              // compare still shows it, saying which rows measure different things)
              auto differs = [](const char* opt, const json& x, const json& y, const char* rows) {
                if (x != y)
                  std::cout << "note: A and B were computed with different /options/" << opt << " (" << x.dump() << " and " << y.dump()
                            << "): " << rows << " measure different things\n";
              };
              const auto &oa = pa.options, &ob = pb.options;
              differs("threshold", oa.threshold, ob.threshold, "/statistics/*_above_threshold");
              differs("hist_edges", oa.hist_edges, ob.hist_edges, "/histogram/*/count");
              differs("pivot", oa.pivot, ob.pivot, "/histogram/*/count (which bin an edge belongs to)");
              if (differ || *all) t.print(std::cout);
              return 0;
            });
          }};
}

}  // namespace omn::cli
