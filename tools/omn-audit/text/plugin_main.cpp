// Entry point of omn-audit-text.so: the CLI hands it the whole command line of `corpus` or `tokenize`. A plugin
// of its own because SentencePiece and libtorch cannot share a process (src/data/corpus_build.cpp).
#include "../guard.h"
#include "../plugin_loader.h"

extern "C" __attribute__((visibility("default"))) int omn_audit_text_main(int argc, char** argv, const PluginHost*) {
  return omn::cli::runCommandLine("omn-audit text commands", omn::cli::PluginId::Text, {omn::cli::addCorpusCommand, omn::cli::addTokenizeCommand}, argc, argv);
}
