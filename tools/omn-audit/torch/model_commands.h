// The subcommands of the model plugin (omn-audit-torch.so): each registers itself on the plugin's
// CLI11 app and returns its runner.
#pragma once
#include "../commands.h"

namespace omn::cli {

Command addEvalCommand(CLI::App& root);
Command addInterveneCommand(CLI::App& root);
Command addTrainCommand(CLI::App& root);
Command addStudyCommand(CLI::App& root);

}  // namespace omn::cli
