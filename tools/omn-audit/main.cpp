// omn-audit: the only place where errors become messages and exit codes (README "Exit codes"), and
// the one table of commands: each one's name, its line in --help, and where it runs.
#include <cstring>
#include <iostream>

#include "commands.h"
#include "guard.h"
#include "omn/errors.h"
#include "omn/output/provenance.h"
#include "omn/io/terminal_text.h"
#include "plugin_loader.h"

namespace {

using omn::cli::Command;
using omn::cli::Plugin;

const Plugin kTorch{"omn-audit-torch.so", "OMN_AUDIT_TORCH_PLUGIN", "omn_audit_torch_main"};
const Plugin kText{"omn-audit-text.so", "OMN_AUDIT_TEXT_PLUGIN", "omn_audit_text_main"};

struct Entry {
  const char* name;
  Command (*add)(CLI::App&);  // the CLI's own commands
  const Plugin* plugin;       // or the plugin that parses and runs the whole command line
  const char* help;           // --help's line for a plugin command (the CLI's own commands carry theirs)
};

const Entry kCommands[] = {
    {"hash", omn::cli::addHashCommand, nullptr, nullptr},
    {"profile", omn::cli::addProfileCommand, nullptr, nullptr},
    {"track", omn::cli::addTrackCommand, nullptr, nullptr},
    {"compare", omn::cli::addCompareCommand, nullptr, nullptr},
    {"merge", omn::cli::addMergeCommand, nullptr, nullptr},
    {"plot", omn::cli::addPlotCommand, nullptr, nullptr},
    {"report", omn::cli::addReportCommand, nullptr, nullptr},
    {"eval", nullptr, &kTorch, "score a held-out token set with the model: perplexity with bootstrap CI (see eval --help)"},
    {"intervene", nullptr, &kTorch, "run a manifest of gain interventions (see intervene --help)"},
    {"corpus", nullptr, &kText,
     "build a corpus: held-out split by document, SentencePiece tokenizer, token streams (see corpus --help)"},
    {"train", nullptr, &kTorch, "train an OMN-style model from scratch on a corpus, QK-norm on or off (see train --help)"},
    {"study", nullptr, &kTorch,
     "train a grid: QK-norm on/off x learning rates x seeds; LR sensitivity, largest stable LR (see study --help)"},
};

std::size_t editDistance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] != b[j - 1])});
      diag = up;
    }
  }
  return row[b.size()];
}

// "unknown command 'prof' (did you mean profile?)": the closest names by prefix or edit distance.
int unknownCommand(const std::string& word) {
  std::string near;
  for (const auto& e : kCommands) {
    const std::string n = e.name;
    if ((word.size() >= 2 && n.rfind(word, 0) == 0) || editDistance(word, n) <= 2) near += (near.empty() ? "" : " or ") + n;
  }
  std::cerr << "omn-audit: error: unknown command '" << omn::io::terminalSafe(word) << "'"
            << (near.empty() ? "" : " (did you mean " + near + "?)") << "; omn-audit --help lists the commands\n";
  return omn::kExitInvalidInput;
}

}  // namespace

int main(int argc, char** argv) {
  // the first word that is not an option names the command (the CLI's own options are flags)
  for (int i = 1; i < argc; ++i) {
    if (argv[i][0] == '-') continue;
    const Entry* found = nullptr;
    for (const auto& e : kCommands)
      if (std::strcmp(argv[i], e.name) == 0) found = &e;
    if (!found) return unknownCommand(argv[i]);
    if (found->plugin) return omn::cli::runPlugin(*found->plugin, argc, argv);
    break;
  }
  CLI::App app{"omn-audit: verify LLM checkpoints, profile their Q/K-norm gains, run controlled interventions"};
  app.set_version_flag("--version", "omn-audit " + omn::output::toolVersion() + " (" + omn::output::gitRevision() + ")");
  app.require_subcommand(1);
  app.fallthrough();  // -v / -q also after the command: "omn-audit profile X -q"
  bool verbose = false, quiet = false;
  app.add_flag("-v,--verbose", verbose, "log details on stderr");
  app.add_flag("-q,--quiet", quiet, "log only errors");
  std::vector<Command> commands;
  for (const auto& e : kCommands) {
    if (e.add) commands.push_back(e.add(app));
    else app.add_subcommand(e.name, e.help);  // listed in --help; run by its plugin (above)
  }
  return omn::cli::parseAndRun(app, commands, argc, argv, verbose, quiet);
}
