// omn-audit: the only place where errors become messages and exit codes (README "Exit codes").
#include <iostream>

#include "commands.h"
#include "guard.h"
#include "omn/errors.h"
#include "omn/report/provenance.h"
#include "plugin_loader.h"

int main(int argc, char** argv) {
  // eval / intervene / train / corpus: handed whole to their plugin, which parses its own options
  for (int i = 1; i < argc; ++i) {
    if (argv[i][0] == '-') continue;
    if (const omn::cli::Plugin* p = omn::cli::pluginFor(argv[i])) return omn::cli::runPlugin(*p, argc, argv);
    break;
  }
  CLI::App app{"omn-audit: verify LLM checkpoints, profile their Q/K-norm gains, run controlled interventions"};
  app.set_version_flag("--version", "omn-audit " + omn::report::toolVersion() + " (" + omn::report::gitRevision() + ")");
  app.require_subcommand(1);
  bool verbose = false, quiet = false;
  app.add_flag("-v,--verbose", verbose, "log details on stderr");
  app.add_flag("-q,--quiet", quiet, "log only errors");

  std::vector<omn::cli::Command> commands = {
      omn::cli::addHashCommand(app),
      omn::cli::addProfileCommand(app),
      omn::cli::addTrackCommand(app),
      omn::cli::addCompareCommand(app),
      omn::cli::addMergeCommand(app),
      omn::cli::addPlotCommand(app),
      omn::cli::addReportCommand(app),
  };
  // listed in --help; run by the model plugin (see plugin_loader.h)
  app.add_subcommand("eval", "score a held-out token set with the model: perplexity with bootstrap CI (see eval --help)");
  app.add_subcommand("intervene", "run a manifest of gain interventions (see intervene --help)");
  app.add_subcommand("corpus", "build a corpus: held-out split by document, SentencePiece tokenizer, token streams (see corpus --help)");
  app.add_subcommand("train", "train an OMN-style model from scratch on a corpus, QK-norm on or off (see train --help)");
  app.add_subcommand("study", "train a grid: QK-norm on/off x learning rates x seeds; LR sensitivity, largest stable LR (see study --help)");

  return omn::cli::parseAndRun(app, commands, argc, argv, verbose, quiet);
}
