// Commands that live in plugins, loaded only when one of them runs: the model commands (eval,
// intervene, train) in omn-audit-torch.so -- the CLI itself does not link libtorch (~170 MB of RSS
// and ~0.6 s at start-up) -- and corpus in omn-audit-text.so (SentencePiece, which cannot share a
// process with libtorch). plugin_commands.h says which command is where.
#pragma once

// What the CLI tells a plugin at its entry, as an argument (plain C: it crosses dlsym): which
// OpenBLAS kernels the CLI chose before loading it (nullptr: none chosen here, e.g. the user's own
// OPENBLAS_CORETYPE), recorded in the results' model block; and, when the environment's
// OPENBLAS_CORETYPE names kernels narrower than this CPU runs, the kernels it would have chosen
// (the model commands warn: fp32 products ~2x slower on AVX-512 CPUs held to Haswell's).
extern "C" struct PluginHost {
  const char* blas_coretype_chosen;
  const char* blas_coretype_below_cpu;
};

namespace omn::cli {

struct Plugin {
  const char* file;    // beside the executable, or ../lib/omn-audit/
  const char* env;     // an environment variable that overrides the path
  const char* symbol;  // int (int argc, char** argv, const PluginHost* host)
};

// Loads the plugin and runs the command line with it.
int runPlugin(const Plugin& plugin, int argc, char** argv);

}  // namespace omn::cli
