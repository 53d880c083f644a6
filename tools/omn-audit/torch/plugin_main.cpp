// Entry point of omn-audit-torch.so: the CLI hands it the whole command line of eval/intervene/train.
#include <ATen/Context.h>

#include "../guard.h"
#include "model_commands.h"

extern "C" __attribute__((visibility("default"))) int omn_audit_torch_main(int argc, char** argv) {
  // exp() of very negative logits underflows into denormals, which the CPU handles ~10x slower
  // (the log-sum-exp of every scored token); flushed to zero they change no result above 1e-38.
  at::globalContext().setFlushDenormal(true);
  return omn::cli::runCommandLine("omn-audit model commands", omn::cli::PluginId::Torch,
                                  {omn::cli::addEvalCommand, omn::cli::addInterveneCommand, omn::cli::addTrainCommand,
                                   omn::cli::addStudyCommand}, argc, argv);
}
