// omn-audit: the only place where errors become messages and exit codes (README "Exit codes").
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <iostream>

#include "commands.h"
#include "omn/errors.h"
#include "omn/report/provenance.h"

int main(int argc, char** argv) {
  CLI::App app{"omn-audit: verify LLM checkpoints, profile their Q/K-norm gains, run controlled interventions"};
  app.set_version_flag("--version", "omn-audit " + omn::report::toolVersion() + " (" + omn::report::gitRevision() + ")");
  app.require_subcommand(1);
  bool verbose = false, quiet = false;
  app.add_flag("-v,--verbose", verbose, "log details on stderr");
  app.add_flag("-q,--quiet", quiet, "log only errors");

  std::vector<omn::cli::Command> commands = {
      omn::cli::addHashCommand(app),
      omn::cli::addProfileCommand(app),
      omn::cli::addCompareCommand(app),
  };

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? omn::kExitOk : omn::kExitInvalidInput;
  }
  auto logger = spdlog::stderr_color_mt("omn");
  spdlog::set_default_logger(logger);
  spdlog::set_pattern("omn-audit: %^%l%$: %v");
  spdlog::set_level(verbose ? spdlog::level::debug : quiet ? spdlog::level::err : spdlog::level::info);

  try {
    for (auto& c : commands)
      if (c.app->parsed()) return c.run();
    return omn::kExitInvalidInput;
  } catch (const omn::Error& e) {
    std::cerr << "omn-audit: error: " << e.what() << "\n";
    return e.exitCode();
  } catch (const std::exception& e) {
    std::cerr << "omn-audit: unexpected error: " << e.what() << "\n";
    return omn::kExitUnexpected;
  }
}
