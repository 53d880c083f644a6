// The subcommands of the model plugin (omn-audit-torch.so): each registers itself on the plugin's
// CLI11 app and returns its runner.
#pragma once
#include "../commands.h"
#include "../plugin_loader.h"

namespace omn::cli {

// What the CLI told this plugin at its entry (plugin_loader.h: the OpenBLAS kernels it chose).
const PluginHost& pluginHost();

Command addEvalCommand(CLI::App& root);
Command addInterveneCommand(CLI::App& root);
Command addTrainCommand(CLI::App& root);
Command addStudyCommand(CLI::App& root);

}  // namespace omn::cli
