// omn-audit: the only place where errors become messages and exit codes (README "Exit codes"), and
// the one table of commands: each one's name, its line in --help, and where it runs.
#include <csignal>
#include <cstring>
#include <iostream>

#include "commands.h"
#include "describe.h"
#include "guard.h"
#include "help_formatter.h"
#include "omn/embedded.h"
#include "omn/errors.h"
#include "omn/output/provenance.h"
#include "omn/io/terminal_text.h"
#include "plugin_commands.h"
#include "plugin_inputs.h"
#include "plugin_loader.h"
#include "suggest.h"

namespace {

using omn::cli::Command;
using omn::cli::Plugin;

const Plugin kTorch{"omn-audit-torch.so", "OMN_AUDIT_TORCH_PLUGIN", "omn_audit_torch_main"};
const Plugin kText{"omn-audit-text.so", "OMN_AUDIT_TEXT_PLUGIN", "omn_audit_text_main"};

// The CLI's own commands (each carries its --help line); the plugin commands come from
// plugin_commands.h, the one table both the CLI and the plugins read.
struct Entry {
  const char* name;
  Command (*add)(CLI::App&);
};
const Entry kOwnCommands[] = {
    {"hash", omn::cli::addHashCommand},   {"profile", omn::cli::addProfileCommand}, {"track", omn::cli::addTrackCommand},
    {"compare", omn::cli::addCompareCommand}, {"merge", omn::cli::addMergeCommand}, {"plot", omn::cli::addPlotCommand},
    {"report", omn::cli::addReportCommand},
};

const Plugin& pluginFor(omn::cli::PluginId id) { return id == omn::cli::PluginId::Torch ? kTorch : kText; }

std::vector<std::string> commandNames() {
  std::vector<std::string> names;
  for (const auto& e : kOwnCommands) names.push_back(e.name);
  for (const auto& c : omn::cli::kPluginCommands) names.push_back(c.name);
  return names;
}

// "unknown command 'prof' (did you mean profile?)": the closest names by prefix or edit distance.
int unknownCommand(const std::string& word) {
  const std::string near = omn::cli::closest(word, commandNames());
  std::cerr << "omn-audit: error: unknown command '" << omn::io::terminalSafe(word, 200) << "'"
            << (near.empty() ? "" : " (did you mean " + near + "?)") << "; omn-audit --help lists the commands\n";
  return omn::kExitInvalidInput;
}

}  // namespace

int main(int argc, char** argv) {
  // past `ulimit -f` a write fails with EFBIG (exit 5 naming the file) instead of killing the process
  std::signal(SIGXFSZ, SIG_IGN);
  // "omn-audit help [CMD]" is "omn-audit [CMD] --help"
  std::vector<char*> args(argv, argv + argc);
  char help_flag[] = "--help";
  int help_at = 1;  // the first word that is not an option ("omn-audit -v help profile")
  while (help_at < argc && argv[help_at][0] == '-') ++help_at;
  if (help_at < argc && std::strcmp(argv[help_at], "help") == 0) {
    args.erase(args.begin() + help_at);
    args.insert(args.begin() + (argc > help_at + 1 ? help_at + 1 : help_at), help_flag);
    if (argc > help_at + 2) {
      std::cerr << "omn-audit: error: help takes one command name (omn-audit help profile)\n";
      return omn::kExitInvalidInput;
    }
  }
  argc = static_cast<int>(args.size());
  args.push_back(nullptr);
  argv = args.data();
  // the first word that is not an option names the command (the CLI's own options are flags)
  for (int i = 1; i < argc; ++i) {
    if (argv[i][0] == '-') continue;
    for (const auto& c : omn::cli::kPluginCommands)
      if (std::strcmp(argv[i], c.name) == 0) {
        // the inputs it names first: a missing file is exit 2 before libtorch or the plugin loads
        const int rc = omn::cli::runGuarded([&] { return omn::cli::checkPluginInputs(c.name, argc, argv, i), 0; });
        return rc != 0 ? rc : omn::cli::runPlugin(pluginFor(c.plugin), argc, argv);
      }
    bool own = false;
    for (const auto& e : kOwnCommands) own = own || std::strcmp(argv[i], e.name) == 0;
    if (!own) return unknownCommand(argv[i]);
    break;
  }
  CLI::App app{"omn-audit: verify LLM checkpoints, profile their Q/K-norm gains, run controlled interventions"};
  app.set_version_flag("--version", "omn-audit " + omn::output::toolVersion() + " (" + omn::output::gitRevision() +
                                        ")\nmodel code fingerprint " + omn::modelCodeFingerprint());
  app.formatter(std::make_shared<omn::cli::HelpFormatter>());  // before the subcommands: they copy it
  app.require_subcommand(1);
  app.fallthrough();  // -v / -q also after the command: "omn-audit profile X -q"
  bool verbose = false, quiet = false;
  app.add_flag("-v,--verbose", verbose, "log details on stderr");
  app.add_flag("-q,--quiet", quiet, "log only errors");
  std::vector<Command> commands;
  for (const auto& e : kOwnCommands) commands.push_back(e.add(app));
  std::vector<std::string> plugin_names;
  for (const auto& c : omn::cli::kPluginCommands) {  // listed in --help; run by its plugin (above)
    app.add_subcommand(c.name, std::string(c.help) + " (see " + c.name + " --help)");
    plugin_names.push_back(c.name);
  }
  if (argc == 2 && std::strcmp(argv[1], omn::cli::kDescribeFlag) == 0) {
    // one JSON line for the CLI's own commands, then one per plugin, described by the plugin itself
    std::cout << omn::cli::describeCommands(app, plugin_names).dump() << std::endl;
    for (const Plugin* p : {&kTorch, &kText})
      if (const int rc = omn::cli::runPlugin(*p, argc, argv); rc != 0) return rc;
    return 0;
  }
  return omn::cli::parseAndRun(app, commands, argc, argv, verbose, quiet);
}
