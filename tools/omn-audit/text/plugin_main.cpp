// Entry point of omn-audit-text.so: the CLI hands it the whole command line of `corpus`. A plugin
// of its own because SentencePiece and libtorch cannot share a process (src/data/corpus_build.cpp).
#include "../commands.h"
#include "../guard.h"

extern "C" __attribute__((visibility("default"))) int omn_audit_text_main(int argc, char** argv) {
  CLI::App app{"omn-audit text commands"};
  app.require_subcommand(1);
  bool verbose = false, quiet = false;
  app.add_flag("-v,--verbose", verbose, "log details on stderr");
  app.add_flag("-q,--quiet", quiet, "log only errors");
  std::vector<omn::cli::Command> commands = {omn::cli::addCorpusCommand(app)};
  return omn::cli::parseAndRun(app, commands, argc, argv, verbose, quiet);
}
