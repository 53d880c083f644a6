// The plugin-command table (tools/omn-audit/plugin_commands.h) is the one list of what each plugin
// runs: a plugin whose registered commands differ from its rows refuses to start, and every row
// has a help line the CLI lists.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "../../tools/omn-audit/guard.h"
#include "../../tools/omn-audit/plugin_inputs.h"

namespace {

omn::cli::Command addCorpus(CLI::App& root) {
  static std::string config;
  static bool force = false;
  CLI::App* app = root.add_subcommand("corpus", omn::cli::pluginCommandHelp("corpus"));
  app->add_option("--config", config);  // its input row (kPluginInputs) and its switches' row
  app->add_flag("--force", force);
  return {app, [] { return 0; }};
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

// The CLI reads a plugin command's inputs without the plugin (plugin_inputs.h): an option's value is
// the word after it unless the option is a switch, --opt=value, "--" ends the options, and the first
// positional is the positional input.
namespace {
std::vector<std::pair<std::string, std::string>> given(std::vector<std::string> args) {
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  int at = 1;
  while (argv[static_cast<std::size_t>(at)][0] == '-') ++at;
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& g : omn::cli::givenPluginInputs(args[static_cast<std::size_t>(at)], static_cast<int>(argv.size()), argv.data(), at))
    out.emplace_back(g.input->option, g.value);
  return out;
}
using Found = std::vector<std::pair<std::string, std::string>>;
}  // namespace

TEST(PluginInputs, TheCommandLineIsReadAsCLI11ReadsIt) {
  EXPECT_EQ(given({"omn-audit", "eval", "m.pt", "--tokens", "t.bin"}), (Found{{"checkpoint", "m.pt"}, {"--tokens", "t.bin"}}));
  // a switch takes no value: the word after it is the positional; a valued option's word is its value
  EXPECT_EQ(given({"omn-audit", "-q", "eval", "--up-to", "m.pt", "--seq-len", "8", "--tokens=t.bin", "-v"}),
            (Found{{"checkpoint", "m.pt"}, {"--tokens", "t.bin"}}));
  EXPECT_EQ(given({"omn-audit", "eval", "--seq-len", "8", "--offsets", "o.txt", "--checkpoint", "c.pt"}),
            (Found{{"--offsets", "o.txt"}, {"--checkpoint", "c.pt"}}));
  EXPECT_EQ(given({"omn-audit", "eval", "--state-key", "--tokens", "x.pt"}), (Found{{"checkpoint", "x.pt"}}));  // --tokens is a value
  EXPECT_EQ(given({"omn-audit", "eval", "--", "-m.pt"}), (Found{{"checkpoint", "-m.pt"}}));
  EXPECT_EQ(given({"omn-audit", "train", "--resume", "--config", "c.json", "-o", "run", "--corpus", "d"}),
            (Found{{"--config", "c.json"}, {"--corpus", "d"}}));
  EXPECT_EQ(given({"omn-audit", "intervene", "--plan", "--manifest", "m.json", "--kl"}), (Found{{"--manifest", "m.json"}}));
  EXPECT_EQ(given({"omn-audit", "eval", "--tokens"}), Found{});  // no value: the plugin says so
  EXPECT_EQ(given({"omn-audit", "tokenize", "a.txt", "--tokenizer", "t.json"}), Found{});  // no rows: the plugin checks them
}

TEST(PluginInputs, AMissingInputIsRefusedNamingItAsThePluginDoes) {
  auto refusal = [](std::vector<std::string> args) {
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    try {
      omn::cli::checkPluginInputs(args[1], static_cast<int>(argv.size()), argv.data(), 1);
    } catch (const omn::UsageError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(refusal({"omn-audit", "eval", "/no/such.pt", "--tokens", "/etc/hostname"}),
            "checkpoint /no/such.pt: cannot open for reading: No such file or directory");
  EXPECT_EQ(refusal({"omn-audit", "eval", "/etc/hostname", "--tokens", "/no/such.bin"}),
            "--tokens /no/such.bin: cannot open for reading: No such file or directory");
  EXPECT_EQ(refusal({"omn-audit", "intervene", "--manifest", "/no/m.json"}), "manifest /no/m.json: cannot open for reading: No such file or directory");
  EXPECT_EQ(refusal({"omn-audit", "eval", "/etc/hostname", "--tokens", "/etc/hostname"}), "accepted");
  EXPECT_EQ(refusal({"omn-audit", "eval", "/no/such.pt", "--help"}), "accepted");  // help needs no input
  EXPECT_EQ(refusal({"omn-audit", "eval", "-", "--tokens", "/etc"}), "accepted");  // a folder may be an input; - is the command's
  // a config by name is looked up as the command looks it up: an unknown name is refused by that lookup
  EXPECT_NE(refusal({"omn-audit", "train", "--config", "no-such-config-name"}).find("--config"), std::string::npos);
}

// The plugins' definitions agree with the tables the CLI reads: a row naming an option the command
// lacks, or switches that differ, make inputTableMismatch say so (a plugin then refuses to start).
TEST(PluginInputs, ThePluginsDefinitionsMustMatchTheTables) {
  auto app_with = [](bool offsets, bool extra_switch) {
    auto app = std::make_unique<CLI::App>("t");
    auto* eval = app->add_subcommand("eval", "e");
    static std::string s;
    static bool b = false;
    eval->add_option("checkpoint,--checkpoint", s);
    eval->add_option("--tokens", s);
    if (offsets) eval->add_option("--offsets", s);
    eval->add_option("--seq-len", s);
    eval->add_flag("--up-to", b);
    eval->add_flag("--force", b);
    if (extra_switch) eval->add_flag("--kl", b);
    return app;
  };
  EXPECT_EQ(omn::cli::inputTableMismatch(*app_with(true, false)), "");
  EXPECT_NE(omn::cli::inputTableMismatch(*app_with(false, false)).find("--offsets"), std::string::npos);
  EXPECT_NE(omn::cli::inputTableMismatch(*app_with(true, true)).find("--kl"), std::string::npos);
}
