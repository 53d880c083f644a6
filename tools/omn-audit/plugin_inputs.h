// The inputs a plugin command names, checked by the CLI before it loads the plugin (main.cpp): a
// missing or unreadable file is exit 2 at once, named as the plugin's own check names it, instead of
// after libtorch is loaded (seconds) or in place of the message that the plugin cannot be loaded.
// What the inputs are is plugin_commands.h's kPluginInputs; the command line is read as CLI11 reads
// it (an option's value is the word after it unless the option is a switch; "--opt=value"; "--"
// ends the options), without the plugin's definitions. The plugin checks them again: this only
// moves the first refusal ahead of the load. No CLI11, no libtorch.
#pragma once
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "named_config.h"
#include "omn/errors.h"
#include "plugin_commands.h"

namespace omn::cli {

struct GivenInput {
  const PluginInput* input;
  std::string value;
};

namespace detail {

inline const PluginInput* inputRow(const std::string& command, const std::string& option) {
  for (const auto& in : kPluginInputs)
    if (command == in.command && option == in.option) return &in;
  return nullptr;
}

// Whether `arg` (an option, without "=value") takes no value for `command`.
inline bool isSwitch(const std::string& command, const std::string& arg) {
  for (const char* global : {"-v", "--verbose", "-q", "--quiet"})
    if (arg == global) return true;
  for (const auto& s : kPluginSwitches) {
    if (command != s.command) continue;
    const std::string names = std::string(" ") + s.names + " ";
    return names.find(" " + arg + " ") != std::string::npos;
  }
  return arg == "-h" || arg == "--help";
}

}  // namespace detail

// The inputs of `command` given on the command line (argv[command_at] is the command's word), in
// order. The first positional word is the row named by a positional (an option without dashes).
inline std::vector<GivenInput> givenPluginInputs(const std::string& command, int argc, char** argv, int command_at) {
  std::vector<GivenInput> found;
  int positionals = 0;
  bool options_ended = false;
  for (int i = command_at + 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (!options_ended && arg == "--") {
      options_ended = true;
      continue;
    }
    if (options_ended || arg.size() < 2 || arg[0] != '-') {  // a positional ("-" alone is one: standard input)
      if (positionals++ > 0) continue;
      for (const auto& in : kPluginInputs)
        if (command == in.command && in.option[0] != '-') found.push_back({&in, arg});
      continue;
    }
    const std::size_t eq = arg.find('=');
    const std::string name = arg.rfind("--", 0) == 0 ? arg.substr(0, eq) : arg;
    if (eq != std::string::npos && arg.rfind("--", 0) == 0) {  // --opt=value
      if (const PluginInput* in = detail::inputRow(command, name)) found.push_back({in, arg.substr(eq + 1)});
      continue;
    }
    if (detail::isSwitch(command, name) || (name.size() > 2 && name[1] != '-')) continue;  // -abc: grouped or attached
    if (i + 1 >= argc) break;  // no value: the plugin says so
    const std::string value = argv[++i];
    if (const PluginInput* in = detail::inputRow(command, name)) found.push_back({in, value});
  }
  return found;
}

// Throws UsageError "LABEL PATH: cannot open for reading: REASON" for the first input that does not
// exist or cannot be read (a config given by name is looked up first, as the command looks it up);
// nothing when the command asks for its help, which needs no input.
inline void checkPluginInputs(const std::string& command, int argc, char** argv, int command_at) {
  for (int i = command_at + 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--") break;
    if (arg == "-h" || arg == "--help") return;
  }
  for (const GivenInput& g : givenPluginInputs(command, argc, argv, command_at)) {
    if (g.value.empty() || g.value == "-") continue;  // refused, or read from standard input, by the command itself
    const std::string path = g.input->config_kind ? locateConfig(g.value, g.input->config_kind, g.input->option).path : g.value;
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0 || ::access(path.c_str(), R_OK) != 0)
      throw UsageError(std::string(g.input->label) + " " + path + ": cannot open for reading: " + std::strerror(errno));
  }
}

}  // namespace omn::cli
