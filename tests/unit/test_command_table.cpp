// The plugin-command table (tools/omn-audit/plugin_commands.h) is the one list of what each plugin
// runs: a plugin whose registered commands differ from its rows refuses to start, and every row
// has a help line the CLI lists.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "../../tools/omn-audit/guard.h"

namespace {

omn::cli::Command addCorpus(CLI::App& root) {
  return {root.add_subcommand("corpus", omn::cli::pluginCommandHelp("corpus")), [] { return 0; }};
}
omn::cli::Command addTokenize(CLI::App& root) {
  return {root.add_subcommand("tokenize", omn::cli::pluginCommandHelp("tokenize")), [] { return 0; }};
}
omn::cli::Command addStray(CLI::App& root) { return {root.add_subcommand("stray", "not in the table"), [] { return 0; }}; }

int run(const std::vector<omn::cli::Command (*)(CLI::App&)>& adders, std::vector<std::string> args) {
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  return omn::cli::runCommandLine("test plugin", omn::cli::PluginId::Text, adders, static_cast<int>(argv.size()), argv.data());
}

}  // namespace

TEST(PluginCommands, APluginMustRegisterExactlyItsRows) {
  EXPECT_EQ(run({addCorpus, addTokenize}, {"omn-audit", "corpus"}), 0);
  EXPECT_EQ(run({addCorpus}, {"omn-audit", "corpus"}), omn::kExitUnexpected);  // a listed command missing
  EXPECT_EQ(run({addCorpus, addTokenize, addStray}, {"omn-audit", "corpus"}), omn::kExitUnexpected);  // one the CLI never lists
  EXPECT_THROW(omn::cli::pluginCommandHelp("nonesuch"), std::logic_error);
  for (const auto& c : omn::cli::kPluginCommands) EXPECT_GT(std::string(c.help).size(), 10u) << c.name;
}
