// omn-audit compare A.json B.json: the differences between two profiles, statistic by statistic.
#include <cmath>
#include <iostream>
#include <map>

#include "commands.h"
#include "omn/audit/regression.h"
#include "omn/errors.h"
#include "omn/report/json_file.h"
#include "omn/report/table.h"

namespace omn::cli {

Command addCompareCommand(CLI::App& root) {
  auto* app = root.add_subcommand("compare", "print the differences between two profile documents");
  auto paths = std::make_shared<std::vector<std::string>>();
  auto all = std::make_shared<bool>(false);
  app->add_option("profiles", *paths, "two --json outputs of `omn-audit profile`")->required()->expected(2);
  app->add_flag("--all", *all, "list equal statistics too");
  return {app, [paths, all] {
            const auto a = report::readJsonFile((*paths)[0], "profile");
            const auto b = report::readJsonFile((*paths)[1], "profile");
            for (std::size_t i = 0; i < 2; ++i) {
              const auto& d = i ? b : a;
              if (!d.is_object() || d.value("schema", "").rfind("omn-audit/profile@", 0) != 0)
                throw UsageError((*paths)[i] + ": /schema: expected \"omn-audit/profile@1\"");
            }
            std::map<std::string, double> vb;
            for (const auto& [p, v] : audit::comparableStatistics(b)) vb[p] = v;
            report::Table t({"statistic", "A", "B", "B - A"});
            std::size_t differ = 0, total = 0;
            for (const auto& [p, v] : audit::comparableStatistics(a)) {
              ++total;
              auto it = vb.find(p);
              const bool same = it != vb.end() && it->second == v;
              differ += !same;
              if (same && !*all) continue;
              t.add({p, report::general(v), it == vb.end() ? "missing" : report::general(it->second),
                     it == vb.end() ? "" : report::general(it->second - v)});
            }
            std::cout << "A " << (*paths)[0] << "  sha256 " << a["checkpoint"].value("sha256", "?") << "\n"
                      << "B " << (*paths)[1] << "  sha256 " << b["checkpoint"].value("sha256", "?") << "\n"
                      << differ << " of " << total << " statistics differ\n";
            if (differ || *all) t.print(std::cout);
            return 0;
          }};
}

}  // namespace omn::cli
