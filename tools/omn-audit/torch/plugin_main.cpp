// Entry point of omn-audit-torch.so: the CLI hands it the whole command line of eval/intervene/train.
#include <ATen/Context.h>

#include "../guard.h"
#include "model_commands.h"
#include "../plugin_loader.h"

namespace {
PluginHost g_host{nullptr, nullptr};  // what the CLI passed to the entry below, as argv is
}  // namespace

namespace omn::cli {
const PluginHost& pluginHost() { return g_host; }
}  // namespace omn::cli

extern "C" __attribute__((visibility("default"))) int omn_audit_torch_main(int argc, char** argv, const PluginHost* host) {
  if (host) g_host = *host;
  // exp() of very negative logits underflows into denormals, which the CPU handles ~10x slower
  // (the log-sum-exp of every scored token); flushed to zero they change no result above 1e-38.
  at::globalContext().setFlushDenormal(true);
  return omn::cli::runCommandLine("omn-audit model commands", omn::cli::PluginId::Torch,
                                  {omn::cli::addEvalCommand, omn::cli::addInterveneCommand, omn::cli::addTrainCommand,
                                   omn::cli::addStudyCommand}, argc, argv);
}
