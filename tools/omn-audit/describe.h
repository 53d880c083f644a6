// The command tree as data: `omn-audit --describe-commands` prints one JSON line for the CLI's own
// commands and one per plugin (each plugin describes its own, from the same CLI11 definitions that
// parse its command line). tools/cli-docs.py turns them into the man page and the bash and zsh
// completions at build time, so neither can drift from the options the commands take.
#pragma once
#include <algorithm>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

namespace omn::cli {

inline constexpr const char* kDescribeFlag = "--describe-commands";

// The values of an option with a closed set ("{a,b}" in its type name, as addChoice and
// CLI::IsMember write it); empty otherwise.
inline std::vector<std::string> optionChoices(const CLI::Option& o) {
  const std::string t = o.get_type_name();
  const auto open = t.find('{'), close = t.rfind('}');
  std::vector<std::string> out;
  if (open == std::string::npos || close == std::string::npos || close < open) return out;
  std::string cur;
  for (char c : t.substr(open + 1, close - open - 1)) {
    if (c == ',') {
      out.push_back(cur);
      cur.clear();
    } else if (c != ' ') {
      cur += c;
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

// Whether an option takes a value: a switch (--force, --help) takes none. CLI11 gives a flag
// expected(0) and keeps its type size of 1, so the type size alone says every option takes one.
inline bool takesValue(const CLI::Option& o) { return o.get_items_expected_max() > 0; }

inline nlohmann::json describeOption(const CLI::Option& o) {
  std::vector<std::string> names;
  for (const auto& s : o.get_snames()) names.push_back("-" + s);
  for (const auto& l : o.get_lnames()) names.push_back("--" + l);
  return {{"names", names},
          {"positional", o.get_positional() ? nlohmann::json(o.get_name(true)) : nlohmann::json(nullptr)},
          {"description", o.get_description()},
          {"takes_value", takesValue(o)},
          {"type", o.get_type_name()},
          {"default", o.get_default_str()},
          {"required", o.get_required()},
          {"repeatable", o.get_items_expected_max() > 1},
          {"choices", optionChoices(o)}};
}

// The app's global flags and its subcommands, each with its options, positionals and examples.
// Subcommands named in `skip` are left out: the CLI passes the placeholders it lists for plugin
// commands, since each plugin describes its own.
inline nlohmann::json describeCommands(const CLI::App& app, const std::vector<std::string>& skip = {}) {
  nlohmann::json commands = nlohmann::json::array(), global = nlohmann::json::array();
  for (const CLI::Option* o : app.get_options())
    if (o->get_name() != "--help" && o->nonpositional()) global.push_back(describeOption(*o));
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    if (std::find(skip.begin(), skip.end(), sub->get_name()) != skip.end()) continue;
    nlohmann::json options = nlohmann::json::array();
    for (const CLI::Option* o : sub->get_options()) options.push_back(describeOption(*o));
    commands.push_back({{"name", sub->get_name()}, {"description", sub->get_description()}, {"footer", sub->get_footer()},
                        {"options", options}});
  }
  return {{"title", app.get_description()}, {"global", global}, {"commands", commands}};
}

}  // namespace omn::cli
