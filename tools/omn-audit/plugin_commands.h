// The commands that run in a plugin, defined once: name, the plugin, the --help line. The CLI
// lists and dispatches them from here without loading the plugin (main.cpp); each plugin names its
// subcommands' help from here and refuses to start when what it registers differs from this table
// (guard.h runCommandLine), so the two sides cannot drift apart. Plain data: no CLI11, no libtorch.
#pragma once
#include <cstring>
#include <stdexcept>
#include <string>

namespace omn::cli {

enum class PluginId { Torch, Text };

struct PluginCommand {
  const char* name;
  PluginId plugin;
  const char* help;
};

inline constexpr PluginCommand kPluginCommands[] = {
    {"eval", PluginId::Torch, "score a held-out token set: pure cross-entropy, perplexity with bootstrap CI"},
    {"intervene", PluginId::Torch, "run a manifest of Q/K gain interventions against the unmodified checkpoint"},
    {"corpus", PluginId::Text, "build a corpus: document-level held-out split, SentencePiece tokenizer, token streams"},
    {"tokenize", PluginId::Text, "tokenize text files with a model's own tokenizer into the token set eval and intervene read"},
    {"train", PluginId::Torch, "train an OMN-style model from scratch on a corpus (QK-norm on or off, Muon + AdamW)"},
    {"study", PluginId::Torch,
     "train a grid of models (QK-norm on/off x learning rates x seeds): LR sensitivity, largest stable LR, matched comparison"},
};

// The --help line of a plugin command; std::logic_error for a name the table lacks.
inline const char* pluginCommandHelp(const char* name) {
  for (const auto& c : kPluginCommands)
    if (std::strcmp(c.name, name) == 0) return c.help;
  throw std::logic_error(std::string("plugin command '") + name + "' is not in kPluginCommands (plugin_commands.h)");
}

}  // namespace omn::cli
