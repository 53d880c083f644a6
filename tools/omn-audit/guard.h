// The one mapping from errors to messages and exit codes, shared by the CLI and its model plugin.
#pragma once
#include <exception>
#include <functional>
#include <iostream>

#include "omn/errors.h"
#include "omn/report/terminal_text.h"

namespace omn::cli {

inline int runGuarded(const std::function<int()>& body) {
  try {
    return body();
  } catch (const omn::Error& e) {
    std::cerr << "omn-audit: error: " << report::terminalSafe(e.what()) << "\n";
    return e.exitCode();
  } catch (const std::exception& e) {
    std::cerr << "omn-audit: unexpected error: " << report::terminalSafe(e.what()) << "\n";
    return omn::kExitUnexpected;
  }
}

}  // namespace omn::cli

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

namespace omn::cli {

// Log lines go to stderr as "omn-audit: <level>: message".
inline void setupLogging(bool verbose, bool quiet) {
  if (!spdlog::get("omn")) spdlog::set_default_logger(spdlog::stderr_color_mt("omn"));
  spdlog::set_pattern("omn-audit: %^%l%$: %v");
  spdlog::set_level(verbose ? spdlog::level::debug : quiet ? spdlog::level::err : spdlog::level::info);
}

}  // namespace omn::cli

#include "commands.h"

namespace omn::cli {

// Parses the command line, sets up logging and runs the chosen subcommand; usage errors are exit 2.
inline int parseAndRun(CLI::App& app, std::vector<Command>& commands, int argc, char** argv, bool& verbose, bool& quiet) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? omn::kExitOk : omn::kExitInvalidInput;
  }
  setupLogging(verbose, quiet);
  return runGuarded([&] {
    for (auto& c : commands)
      if (c.app->parsed()) return c.run();
    return static_cast<int>(omn::kExitInvalidInput);
  });
}

// A plugin's entry: its own CLI11 app with the shared -v/-q flags and the given subcommands.
inline int runCommandLine(const char* title, const std::vector<Command (*)(CLI::App&)>& adders, int argc, char** argv) {
  CLI::App app{title};
  app.require_subcommand(1);
  bool verbose = false, quiet = false;
  app.add_flag("-v,--verbose", verbose, "log details on stderr");
  app.add_flag("-q,--quiet", quiet, "log only errors");
  std::vector<Command> commands;
  for (auto add : adders) commands.push_back(add(app));
  return parseAndRun(app, commands, argc, argv, verbose, quiet);
}

}  // namespace omn::cli
