// Model presets (configs/presets/*.json, embedded at build time): where a family's tensors live,
// how its Q/K gains are parametrised and laid out, and what the architecture is. No libtorch.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "omn/io/tensor_index.h"
#include "omn/model/hf_config.h"

namespace omn::model {

enum class GainParametrisation { Direct, OnePlus };  // effective gain g = w, or g = 1 + w (Gemma)
enum class GainLayout { Head, Projection };           // [head_dim] shared by heads, or [n_heads*head_dim]

struct Preset {
  std::string name, description, source;  // source: "builtin" or the file path
  std::map<std::string, std::string> tensors;  // role → name pattern ("layers.{i}.attention.wq.weight")
  std::vector<std::string> detect_present, detect_absent;
  bool detect_fallback = false;  // matched only when no other preset does (generic presets)
  std::vector<std::string> hf_model_types;  // the config.json model_type values of the family (detect.model_types)
  GainParametrisation parametrisation = GainParametrisation::Direct;
  GainLayout layout = GainLayout::Head;
  nlohmann::json architecture = nlohmann::json::object();  // may leave dimensions out: inferred
  std::map<std::string, std::string> architecture_from;    // key -> who stated it, where not the preset (config.json)
  std::vector<std::string> forward_unsupported;            // what the model's config asks that eval does not compute

  std::string tensorName(const std::string& role, int layer) const;  // "" when the role is absent
  bool has(const std::string& role) const { return tensors.count(role) > 0; }
  std::optional<std::int64_t> archInt(const std::string& key) const;
  std::string archString(const std::string& key, const std::string& fallback) const;
  double archDouble(const std::string& key, double fallback) const;
  // Who states architecture key `key`: "preset qwen3", or "DIR/config.json /num_hidden_layers".
  std::string archSource(const std::string& key) const;
};

// "layers.{i}.attention.wq.weight" with {i} = layer (patterns without {i} are returned as they are).
std::string expandPattern(const std::string& pattern, int layer);

// The built-in preset names, sorted.
std::vector<std::string> builtinPresetNames();
// The --preset help and the unknown-preset error name the same list: "gemma3, olmo2, omn-1, omn, qwen3".
std::string builtinPresetList();
// Whether `name` is a built-in preset's name (else --preset and /checkpoint/preset read it as a file).
bool isBuiltinPreset(const std::string& name);

// A built-in name ("omn-1") or a path to a preset JSON file. Validates strictly: an unknown key,
// a wrong type or a missing field is a UsageError naming the file and the JSON pointer.
Preset loadPreset(const std::string& name_or_path);
Preset parsePreset(const nlohmann::json& j, const std::string& source);

// The built-in preset whose detection signature the tensor names match; throws FormatError listing
// what was tried when none or several match.
Preset detectPreset(const io::TensorIndex& index);

// What omn-audit train records in a checkpoint's envelope (key "omn_audit", a JSON text): its
// "architecture" block fills the keys the preset leaves open (head_dim, rope_theta, ...), so a
// generic preset reads a model whose tensors alone do not say everything (e.g. no Q/K gains to
// give head_dim). Values are validated like a preset file's; the preset's own keys win.
void adoptCheckpointArchitecture(Preset& p, const nlohmann::json& checkpoint_metadata, const std::string& where);

// The preset for a checkpoint: `requested` (a built-in name or a file) or the detected one, with
// the checkpoint's recorded architecture adopted. One definition for profile, eval and intervene.
// With a Hugging Face folder's config.json (`hf`): its model_type names the preset unless one is
// requested (a model_type no preset lists is FormatError naming it), and what it states of the
// architecture overrides the family's defaults; inferConfig then checks each value against the
// tensors, naming config.json and the key.
Preset resolvePreset(const std::string& requested, const io::TensorIndex& index, const nlohmann::json& checkpoint_metadata,
                     const std::string& where, const HfArchitecture* hf = nullptr);

// Tensor names not matched by any of the preset's patterns, and pattern names for layers
// [0, n_layers) that the checkpoint lacks.
struct TensorMatch {
  std::size_t matched = 0;
  std::vector<std::string> unmatched, missing;
};
TensorMatch matchTensors(const Preset& p, const io::TensorIndex& index, int n_layers);

}  // namespace omn::model
