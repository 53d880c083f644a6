// The one mapping from errors to messages and exit codes, shared by the CLI and its model plugin.
#pragma once
#include <algorithm>
#include <exception>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "omn/errors.h"
#include "omn/io/terminal_text.h"

namespace omn::cli {

// An error line as printed, in this one place: escaped (io/terminal_text.h) and cut at
// kMaxErrorLine characters, saying how much was cut (a 1 MB op name printed a 1 MB line; the file
// and the place come first in every message).
inline constexpr std::size_t kMaxErrorLine = 1000;
inline std::string errorText(const std::string& text) { return io::terminalSafe(text, kMaxErrorLine); }

inline int runGuarded(const std::function<int()>& body) {
  try {
    return body();
  } catch (const omn::UsageErrors& e) {  // one line per mistake, each escaped on its own
    std::cerr << "omn-audit: error: " << errorText(e.header()) << "\n";
    for (const auto& item : e.items()) std::cerr << "  " << errorText(item) << "\n";
    return e.exitCode();
  } catch (const omn::Error& e) {
    std::cerr << "omn-audit: error: " << errorText(e.what()) << "\n";
    return e.exitCode();
  } catch (const std::exception& e) {
    std::cerr << "omn-audit: unexpected error: " << errorText(e.what()) << "\n";
    return omn::kExitUnexpected;
  }
}

// Commands that read documents omn-audit wrote (plot, report, compare, merge) validate them on entry
// (io/json_document.h); a field the schema still let through but the reader cannot use is the
// document's fault -- exit 2 naming the documents -- not a bug in the tool.
inline int readingDocuments(const std::vector<std::string>& inputs, const std::function<int()>& body) {
  auto fail = [&](const char* what) {
    std::string names;
    for (const auto& p : inputs) names += (names.empty() ? "" : ", ") + p;
    return omn::FormatError(names + ": a field is missing or of the wrong type for this reader (" + what +
                            "); the document does not match docs/schema");
  };
  try {
    return body();
  } catch (const nlohmann::json::exception& e) {  // a type or a key the reader needed
    throw fail(e.what());
  } catch (const std::out_of_range& e) {  // nlohmann's missing-key assert (include/omn/json_assert.h)
    throw fail(e.what());
  }
}

}  // namespace omn::cli

#include <cstdlib>

#include <memory>
#include <set>
#include <sstream>

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "suggest.h"

namespace omn::cli {

// The message of a log line, made safe for a terminal (io/terminal_text.h) in this one place: a log
// line may carry text from a file (a manifest's condition name, a path) as any message does.
class TerminalSafeMessage : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&, spdlog::memory_buf_t& dest) override {
    const std::string safe = io::terminalSafe(std::string(msg.payload.data(), msg.payload.size()));
    dest.append(safe.data(), safe.data() + safe.size());
  }
  std::unique_ptr<custom_flag_formatter> clone() const override { return std::make_unique<TerminalSafeMessage>(); }
};

// Log lines go to stderr as "omn-audit: <level>: message"; the level is coloured only on a terminal,
// and never when NO_COLOR is set to anything non-empty (no-color.org).
inline void setupLogging(bool verbose, bool quiet) {
  const char* no_color = std::getenv("NO_COLOR");
  const auto mode = no_color && *no_color ? spdlog::color_mode::never : spdlog::color_mode::automatic;
  if (!spdlog::get("omn")) spdlog::set_default_logger(spdlog::stderr_color_mt("omn", mode));
  auto formatter = std::make_unique<spdlog::pattern_formatter>();
  formatter->add_flag<TerminalSafeMessage>('*').set_pattern("omn-audit: %^%l%$: %*");
  spdlog::set_formatter(std::move(formatter));
  spdlog::set_level(verbose ? spdlog::level::debug : quiet ? spdlog::level::err : spdlog::level::info);
}

}  // namespace omn::cli

#include "commands.h"
#include "describe.h"
#include "help_formatter.h"
#include "plugin_commands.h"

namespace omn::cli {

// Parses the command line, sets up logging and runs the chosen subcommand; usage errors are exit 2.
inline int parseAndRun(CLI::App& app, std::vector<Command>& commands, int argc, char** argv, bool& verbose, bool& quiet) {
  // one error style for argument and tool errors: "omn-audit: error: ..."
  app.failure_message([](const CLI::App* a, const CLI::Error& e) {
    std::string where = "omn-audit";
    for (const CLI::App* sub : a->get_subcommands()) where += " " + sub->get_name();
    return "omn-audit: error: " + errorText(e.what()) + " (see " + where + " --help)\n";
  });
  try {
    refuseUnknownOptions(app, argc, argv);
  } catch (const omn::UsageError& e) {
    std::cerr << "omn-audit: error: " << errorText(e.what()) << "\n";
    return omn::kExitInvalidInput;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? omn::kExitOk : omn::kExitInvalidInput;
  }
  setupLogging(verbose, quiet);
  return runGuarded([&] {
    for (auto& c : commands)
      if (c.app->parsed()) return c.run();
    return static_cast<int>(omn::kExitInvalidInput);
  });
}

// What the CLI's check before loading a plugin assumes of the plugin's commands (plugin_commands.h,
// kPluginInputs and kPluginSwitches; tools/omn-audit/plugin_inputs.h): each input row names an
// option of its command that takes one value (a positional row, its positional), and the command's
// switches are its row's. Empty when they hold, else what differs.
inline std::string inputTableMismatch(const CLI::App& app) {
  auto words = [](const std::string& text) {
    std::set<std::string> out;
    std::istringstream in(text);
    for (std::string w; in >> w;) out.insert(w);
    return out;
  };
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    const std::string name = sub->get_name();
    bool has_inputs = false;
    for (const auto& in : kPluginInputs) {
      if (name != in.command) continue;
      has_inputs = true;
      const CLI::Option* o = sub->get_option_no_throw(in.option);
      const bool positional = in.option[0] != '-';
      if (!o || !takesValue(*o) || (positional && !o->get_positional()))
        return name + ": kPluginInputs names " + in.option + ", which is not " + (positional ? "a positional" : "an option") +
               " of the command that takes a value";
    }
    if (!has_inputs) continue;
    std::string actual;
    for (const CLI::Option* o : sub->get_options()) {
      if (o->get_items_expected_max() > 1) return name + ": " + o->get_name() + " takes several values; the CLI's input check reads one";
      if (takesValue(*o)) continue;
      for (const auto& s : o->get_snames()) actual += " -" + s;
      for (const auto& l : o->get_lnames()) actual += " --" + l;
    }
    std::string listed;
    for (const auto& s : kPluginSwitches)
      if (name == s.command) listed = s.names;
    if (words(actual) != words(listed)) return name + ": its switches are" + actual + " but kPluginSwitches lists \"" + listed + "\"";
  }
  return "";
}

// A plugin's entry: its own CLI11 app with the shared -v/-q flags and the given subcommands, which
// must be exactly the plugin's rows of kPluginCommands (plugin_commands.h): a command the CLI
// would send here but the plugin lacks, or one it registers that the CLI never lists, is a bug.
inline int runCommandLine(const char* title, PluginId plugin, const std::vector<Command (*)(CLI::App&)>& adders, int argc,
                          char** argv) {
  CLI::App app{title};
  app.formatter(std::make_shared<HelpFormatter>());  // before the subcommands: they copy it
  app.require_subcommand(1);
  app.fallthrough();  // -v / -q also after the command
  bool verbose = false, quiet = false;
  app.add_flag("-v,--verbose", verbose, "log details on stderr");
  app.add_flag("-q,--quiet", quiet, "log only errors");
  std::vector<Command> commands;
  for (auto add : adders) commands.push_back(add(app));
  std::vector<std::string> registered;
  for (const CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) registered.push_back(sub->get_name());
  std::size_t listed = 0;
  for (const auto& c : kPluginCommands) {
    if (c.plugin != plugin) continue;
    ++listed;
    if (std::find(registered.begin(), registered.end(), c.name) == registered.end()) {
      std::cerr << "omn-audit: error: " << title << " has no '" << c.name << "' command (plugin_commands.h lists it)\n";
      return omn::kExitUnexpected;
    }
  }
  if (listed != commands.size()) {
    std::cerr << "omn-audit: error: " << title << " registers " << commands.size() << " commands, plugin_commands.h lists "
              << listed << "\n";
    return omn::kExitUnexpected;
  }
  if (const std::string mismatch = inputTableMismatch(app); !mismatch.empty()) {
    std::cerr << "omn-audit: error: " << title << " disagrees with plugin_commands.h: " << mismatch << "\n";
    return omn::kExitUnexpected;
  }
  if (argc == 2 && std::string(argv[1]) == kDescribeFlag) {  // the man page's and completions' source (describe.h)
    std::cout << describeCommands(app).dump() << std::endl;
    return omn::kExitOk;
  }
  return parseAndRun(app, commands, argc, argv, verbose, quiet);
}

}  // namespace omn::cli
