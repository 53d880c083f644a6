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

// The files a plugin command reads, checked by the CLI before it loads the plugin
// (plugin_inputs.h): a missing or unreadable input is exit 2 at once, naming it as the plugin's own
// check does, before libtorch, a thread pool or a checkpoint is loaded. `option`: a long option
// ("--tokens") or a positional's name ("checkpoint": the command's first positional word);
// `label`: how the message names it; `config_kind`: the configs/ folder of a config that may be
// given by name (named_config.h), else null. Each plugin refuses to start when a row names an
// option its command lacks (guard.h, inputTableMismatch).
struct PluginInput {
  const char* command;
  const char* option;
  const char* label;
  const char* config_kind;
};
inline constexpr PluginInput kPluginInputs[] = {
    {"eval", "checkpoint", "checkpoint", nullptr},
    {"eval", "--checkpoint", "checkpoint", nullptr},
    {"eval", "--tokens", "--tokens", nullptr},
    {"eval", "--offsets", "--offsets", nullptr},
    {"intervene", "--manifest", "manifest", "manifests"},
    {"train", "--config", "training config", "train"},
    {"train", "--corpus", "--corpus", nullptr},
    {"study", "--manifest", "study manifest", "studies"},
    {"corpus", "--config", "corpus config", "corpus"},
};
// The options that take no value, space-separated, of each command with an input row: what tells
// the CLI an option's value from the next option or a positional without the plugin's definitions
// (the CLI's own -v/-q/--verbose/--quiet are switches everywhere; every other option takes one
// value). A plugin refuses to start when its command's switches differ from its row.
struct PluginSwitches {
  const char* command;
  const char* names;
};
inline constexpr PluginSwitches kPluginSwitches[] = {
    {"eval", "-h --help --up-to --force"},
    {"intervene", "-h --help --force --resume --allow-unverified --cache-activations --mechanism --kl --plan"},
    {"train", "-h --help --resume --force"},
    {"study", "-h --help --resume --force"},
    {"corpus", "-h --help --force"},
};

// The --help line of a plugin command; std::logic_error for a name the table lacks.
inline const char* pluginCommandHelp(const char* name) {
  for (const auto& c : kPluginCommands)
    if (std::strcmp(c.name, name) == 0) return c.help;
  throw std::logic_error(std::string("plugin command '") + name + "' is not in kPluginCommands (plugin_commands.h)");
}

}  // namespace omn::cli
