// Each subcommand registers itself on the CLI11 app and returns the function that runs it.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace omn::cli {

struct Command {
  CLI::App* app;
  std::function<int()> run;  // returns the exit code; throws omn::Error for failures
};

Command addHashCommand(CLI::App& root);
Command addProfileCommand(CLI::App& root);
Command addTrackCommand(CLI::App& root);
Command addCompareCommand(CLI::App& root);
Command addMergeCommand(CLI::App& root);
Command addPlotCommand(CLI::App& root);
Command addReportCommand(CLI::App& root);
Command addCorpusCommand(CLI::App& root);
Command addTokenizeCommand(CLI::App& root);

}  // namespace omn::cli
