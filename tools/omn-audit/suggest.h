// "Did you mean": the closest names to a mistyped command or option, by prefix or edit distance,
// for the CLI and its plugins alike.
#pragma once
#include <algorithm>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "describe.h"
#include "omn/errors.h"
#include "omn/io/terminal_text.h"

namespace omn::cli {

inline std::size_t editDistance(const std::string& a, const std::string& b) {
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

// "profile or plot": the candidates `word` (2+ characters) is a prefix of, else those nearest to it.
// The prefix matches if any, else the nearest within 2 edits ("--jsn": --json, not also --csv).
inline std::string closest(const std::string& word, const std::vector<std::string>& candidates) {
  std::string prefixed, near;
  std::size_t best = 3;
  for (const std::string& n : candidates) {
    if (word.size() >= 2 && n.rfind(word, 0) == 0 && n != word) prefixed += (prefixed.empty() ? "" : " or ") + n;
    const std::size_t d = editDistance(word, n);
    if (d < best) best = d, near = n;
    else if (d == best && d <= 2) near += " or " + n;
  }
  return !prefixed.empty() ? prefixed : near;
}

// Before CLI11 parses: a --long option the chosen subcommand does not have is refused by name, with
// the closest it has ("--jsn" -> "--json"), instead of CLI11's "argument was not expected" or, with
// a required positional still unfilled, "checkpoint is required". Stops at "--".
inline void refuseUnknownOptions(CLI::App& app, int argc, char** argv) {
  CLI::App* sub = nullptr;
  for (int i = 1; i < argc && !sub; ++i)
    if (argv[i][0] != '-')
      for (CLI::App* s : app.get_subcommands([](CLI::App*) { return true; }))
        if (s->get_name() == argv[i]) sub = s;
  if (!sub) return;
  std::vector<std::string> names, valued;  // valued: options whose next word is their value
  for (const CLI::App* a : {static_cast<const CLI::App*>(&app), static_cast<const CLI::App*>(sub)})
    for (const CLI::Option* o : a->get_options()) {
      for (const std::string& l : o->get_lnames())
        if (std::find(names.begin(), names.end(), "--" + l) == names.end()) {
          names.push_back("--" + l);
          if (takesValue(*o)) valued.push_back("--" + l);
        }
      for (const std::string& s : o->get_snames())
        if (takesValue(*o)) valued.push_back("-" + s);
    }
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--") break;
    // "--state-key --x": the word after an option that takes a value is that value (CLI11 reads it so)
    if (arg.find('=') == std::string::npos && std::find(valued.begin(), valued.end(), arg) != valued.end()) {
      ++i;
      continue;
    }
    if (arg.size() < 3 || arg.rfind("--", 0) != 0) continue;
    const std::string name = arg.substr(0, arg.find('='));
    if (std::find(names.begin(), names.end(), name) != names.end()) continue;
    const std::string near = closest(name, names);
    throw UsageError("unknown option " + io::terminalSafe(name) + " for " + sub->get_name() +
                     (near.empty() ? "" : " (did you mean " + near + "?)") + "; omn-audit " + sub->get_name() +
                     " --help lists its options");
  }
}

}  // namespace omn::cli
