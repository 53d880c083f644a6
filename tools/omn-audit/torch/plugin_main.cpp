// Entry point of omn-audit-torch.so: the CLI hands it the whole command line of eval/intervene.
#include <ATen/Context.h>

#include "../guard.h"
#include "model_commands.h"

extern "C" __attribute__((visibility("default"))) int omn_audit_torch_main(int argc, char** argv) {
  CLI::App app{"omn-audit model commands"};
  app.require_subcommand(1);
  bool verbose = false, quiet = false;
  app.add_flag("-v,--verbose", verbose, "log details on stderr");
  app.add_flag("-q,--quiet", quiet, "log only errors");
  std::vector<omn::cli::Command> commands = {omn::cli::addEvalCommand(app), omn::cli::addInterveneCommand(app), omn::cli::addTrainCommand(app)};
  // exp() of very negative logits underflows into denormals, which the CPU handles ~10x slower
  // (the log-sum-exp of every scored token); flushed to zero they change no result above 1e-38.
  at::globalContext().setFlushDenormal(true);
  return omn::cli::parseAndRun(app, commands, argc, argv, verbose, quiet);
}
