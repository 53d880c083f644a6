// The model commands (eval, intervene) live in omn-audit-torch.so, loaded only when one of them
// runs: the CLI itself does not link libtorch (~170 MB of RSS and ~0.6 s at start-up).
#pragma once

namespace omn::cli {

// True for the subcommands the plugin implements.
bool isModelCommand(const char* name);

// Loads the plugin (beside the executable, or $OMN_AUDIT_TORCH_PLUGIN) and runs the command line.
int runModelCommand(int argc, char** argv);

}  // namespace omn::cli
