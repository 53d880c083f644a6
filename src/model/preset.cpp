#include "omn/model/preset.h"

#include <sys/stat.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "omn/embedded.h"
#include "omn/errors.h"
#include "omn/io/json_document.h"

namespace omn::model {
namespace {

const std::set<std::string> kRoles = {"embedding", "attention_norm", "wq", "wk", "wv", "wo", "q_norm", "k_norm",
                                      "ffn_norm", "post_attention_norm", "post_ffn_norm", "w13", "w1", "w3", "w2",
                                      "final_norm", "output"};
const std::set<std::string> kArchKeys = {"n_layers", "d_model", "n_heads", "n_kv_heads", "head_dim", "ffn_hidden",
                                         "vocab_size", "norm_eps", "qk_norm_eps", "qk_norm_cast", "rope_theta",
                                         "rope_style", "tied_output", "norm_cast"};

[[noreturn]] void bad(const std::string& source, const std::string& pointer, const std::string& what) {
  throw UsageError("preset " + source + ": " + pointer + ": " + what);
}

void onlyKeys(const nlohmann::json& j, const std::set<std::string>& allowed, const std::string& source,
              const std::string& pointer) {
  if (!j.is_object()) bad(source, pointer, std::string("expected an object, got ") + j.type_name());
  for (auto it = j.begin(); it != j.end(); ++it)
    if (!allowed.count(it.key())) bad(source, pointer + "/" + it.key(), "unknown key");
}

std::string str(const nlohmann::json& j, const std::string& key, const std::string& source, const std::string& ptr) {
  if (!j.contains(key)) bad(source, ptr + "/" + key, "required");
  if (!j[key].is_string()) bad(source, ptr + "/" + key, std::string("expected a string, got ") + j[key].type_name());
  return j[key].get<std::string>();
}

std::vector<std::string> strings(const nlohmann::json& j, const std::string& source, const std::string& ptr) {
  if (!j.is_array()) bad(source, ptr, "expected an array of strings");
  std::vector<std::string> out;
  for (std::size_t i = 0; i < j.size(); ++i) {
    if (!j[i].is_string()) bad(source, ptr + "/" + std::to_string(i), "expected a string");
    out.push_back(j[i].get<std::string>());
  }
  return out;
}

std::regex patternRegex(const std::string& pattern) {
  std::string re;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern.compare(i, 3, "{i}") == 0) {
      re += "(0|[1-9][0-9]*)";
      i += 2;
    } else if (std::string("\\^$.|?*+()[]{}").find(pattern[i]) != std::string::npos) {
      re += '\\';
      re += pattern[i];
    } else {
      re += pattern[i];
    }
  }
  return std::regex(re);
}

}  // namespace

std::string expandPattern(const std::string& pattern, int layer) {
  std::string s = pattern;
  const auto pos = s.find("{i}");
  if (pos != std::string::npos) s.replace(pos, 3, std::to_string(layer));
  return s;
}

std::string Preset::tensorName(const std::string& role, int layer) const {
  auto it = tensors.find(role);
  return it == tensors.end() ? "" : expandPattern(it->second, layer);
}

std::optional<std::int64_t> Preset::archInt(const std::string& key) const {
  if (!architecture.contains(key) || architecture[key].is_null()) return std::nullopt;
  return architecture[key].get<std::int64_t>();
}

std::string Preset::archString(const std::string& key, const std::string& fallback) const {
  return architecture.contains(key) ? architecture[key].get<std::string>() : fallback;
}

double Preset::archDouble(const std::string& key, double fallback) const {
  return architecture.contains(key) ? architecture[key].get<double>() : fallback;
}

std::string Preset::archSource(const std::string& key) const {
  const auto it = architecture_from.find(key);
  return it != architecture_from.end() ? it->second : "preset " + name;
}

Preset parsePreset(const nlohmann::json& j, const std::string& source) {
  onlyKeys(j, {"schema", "name", "description", "tensors", "detect", "gain", "architecture"}, source, "");
  if (str(j, "schema", source, "") != "omn-audit/preset@1")
    bad(source, "/schema", "expected \"omn-audit/preset@1\", got \"" + j["schema"].get<std::string>() + "\"");
  Preset p;
  p.source = source;
  p.name = str(j, "name", source, "");
  p.description = j.contains("description") ? str(j, "description", source, "") : "";
  if (!j.contains("tensors")) bad(source, "/tensors", "required");
  onlyKeys(j["tensors"], kRoles, source, "/tensors");
  for (auto it = j["tensors"].begin(); it != j["tensors"].end(); ++it) {
    if (!it->is_string() || it->get<std::string>().empty()) bad(source, "/tensors/" + it.key(), "expected a tensor name pattern");
    p.tensors[it.key()] = it->get<std::string>();
  }
  for (const char* need : {"q_norm", "k_norm"})
    if (!p.tensors.count(need)) bad(source, std::string("/tensors/") + need, "required");
  for (const char* per_layer : {"q_norm", "k_norm"})
    if (p.tensors[per_layer].find("{i}") == std::string::npos)
      bad(source, std::string("/tensors/") + per_layer, "the pattern must contain {i} (the layer index)");
  if (j.contains("detect")) {
    onlyKeys(j["detect"], {"present", "absent", "fallback", "model_types"}, source, "/detect");
    if (j["detect"].contains("model_types")) p.hf_model_types = strings(j["detect"]["model_types"], source, "/detect/model_types");
    if (j["detect"].contains("fallback")) {
      if (!j["detect"]["fallback"].is_boolean()) bad(source, "/detect/fallback", "expected true or false");
      p.detect_fallback = j["detect"]["fallback"].get<bool>();
    }
    if (j["detect"].contains("present")) p.detect_present = strings(j["detect"]["present"], source, "/detect/present");
    if (j["detect"].contains("absent")) p.detect_absent = strings(j["detect"]["absent"], source, "/detect/absent");
  }
  if (!j.contains("gain")) bad(source, "/gain", "required");
  onlyKeys(j["gain"], {"parametrisation", "layout"}, source, "/gain");
  const std::string par = str(j["gain"], "parametrisation", source, "/gain");
  if (par == "direct") p.parametrisation = GainParametrisation::Direct;
  else if (par == "one_plus") p.parametrisation = GainParametrisation::OnePlus;
  else bad(source, "/gain/parametrisation", "expected \"direct\" or \"one_plus\", got \"" + par + "\"");
  const std::string lay = str(j["gain"], "layout", source, "/gain");
  if (lay == "head") p.layout = GainLayout::Head;
  else if (lay == "projection") p.layout = GainLayout::Projection;
  else bad(source, "/gain/layout", "expected \"head\" or \"projection\", got \"" + lay + "\"");
  if (j.contains("architecture")) {
    onlyKeys(j["architecture"], kArchKeys, source, "/architecture");
    for (auto it = j["architecture"].begin(); it != j["architecture"].end(); ++it) {
      const std::string& k = it.key();
      const std::string ptr = "/architecture/" + k;
      if (k == "rope_style") {
        if (!it->is_string() || (*it != "rotate_half" && *it != "interleaved"))
          bad(source, ptr, "expected \"rotate_half\" or \"interleaved\"");
      } else if (k == "qk_norm_cast" || k == "norm_cast") {
        if (!it->is_string() || (*it != "multiply_then_cast" && *it != "cast_then_multiply"))
          bad(source, ptr, "expected \"multiply_then_cast\" or \"cast_then_multiply\"");
      } else if (k == "tied_output") {
        if (!it->is_boolean()) bad(source, ptr, "expected true or false");
      } else if (k == "norm_eps" || k == "qk_norm_eps" || k == "rope_theta") {
        if (!it->is_number() || it->get<double>() <= 0) bad(source, ptr, "expected a positive number");
      } else if (!it->is_null() && (!it->is_number_integer() || it->get<std::int64_t>() <= 0)) {
        bad(source, ptr, "expected a positive integer (or null: inferred from the checkpoint)");
      }
    }
    p.architecture = j["architecture"];
  }
  return p;
}

std::string builtinPresetList() {
  std::string names;
  for (const auto& n : builtinPresetNames()) names += (names.empty() ? "" : ", ") + n;
  return names;
}

std::vector<std::string> builtinPresetNames() {
  std::vector<std::string> names;
  for (const auto& [path, text] : embeddedConfigs())
    if (path.rfind("presets/", 0) == 0) names.push_back(path.substr(8, path.size() - 8 - 5));
  return names;
}

bool isBuiltinPreset(const std::string& name) { return embeddedConfigs().count("presets/" + name + ".json") > 0; }

Preset loadPreset(const std::string& name_or_path) {
  const auto& files = embeddedConfigs();
  auto it = files.find("presets/" + name_or_path + ".json");
  std::string text, source;
  if (it != files.end()) {
    text = it->second;
    source = name_or_path + " (builtin)";
  } else {
    struct stat st {};
    if (::stat(name_or_path.c_str(), &st) != 0) {
      throw UsageError("preset '" + name_or_path + "': neither a built-in preset (" + builtinPresetList() + ") nor a readable file");
    }
    text = io::readTextFile(name_or_path, "preset");  // a FIFO or device is refused, not waited on
    source = name_or_path;
  }
  const nlohmann::json j = io::parseJson(text, "preset " + source);
  Preset p = parsePreset(j, source);
  p.source = it != files.end() ? "builtin" : name_or_path;
  return p;
}

namespace {
// A specific preset (not a fallback) matches only where the dimensions it fixes agree with the
// tensors: OMN-1's 28 layers and 128-wide heads are not a small OMN-style model's.
bool fixedDimsAgree(const Preset& p, const io::TensorIndex& index) {
  if (auto n = p.archInt("n_layers"); n && (!index.find(p.tensorName("wq", static_cast<int>(*n) - 1)) ||
                                            index.find(p.tensorName("wq", static_cast<int>(*n)))))
    return false;
  if (auto hd = p.archInt("head_dim"); hd && p.layout == GainLayout::Head)
    if (const io::TensorRef* q = index.find(p.tensorName("q_norm", 0)); q && q->shape != std::vector<std::int64_t>{*hd})
      return false;
  return true;
}
}  // namespace

Preset detectPreset(const io::TensorIndex& index) {
  std::vector<Preset> hits, fallbacks;
  for (const auto& name : builtinPresetNames()) {
    Preset p = loadPreset(name);
    bool ok = p.detect_fallback || (index.find(p.tensorName("q_norm", 0)) && index.find(p.tensorName("k_norm", 0)) &&
                                    fixedDimsAgree(p, index));
    for (const auto& t : p.detect_present) ok = ok && index.find(t);
    for (const auto& t : p.detect_absent) ok = ok && !index.find(t);
    if (ok) (p.detect_fallback ? fallbacks : hits).push_back(std::move(p));
  }
  if (hits.empty()) hits = std::move(fallbacks);
  if (hits.size() == 1) return hits.front();
  std::string tried;
  for (const auto& n : builtinPresetNames()) tried += (tried.empty() ? "" : ", ") + n;
  if (hits.empty()) {
    std::string sample;
    for (std::size_t i = 0; i < index.size() && i < 5; ++i) sample += (i ? ", " : "") + index.tensors()[i].name;
    throw FormatError("no built-in preset matches the checkpoint's tensor names (tried " + tried +
                      "; first tensors: " + sample + "); pass --preset FILE.json with your names");
  }
  std::string names;
  for (const auto& h : hits) names += (names.empty() ? "" : ", ") + h.name;
  throw FormatError("several presets match the checkpoint's tensor names (" + names + "); choose one with --preset");
}

void adoptCheckpointArchitecture(Preset& p, const nlohmann::json& metadata, const std::string& where) {
  const auto rec = metadata.find("omn_audit");
  if (rec == metadata.end() || !rec->is_string()) return;
  const nlohmann::json j = io::parseJson(rec->get<std::string>(), where + ": envelope key 'omn_audit'");
  if (!j.is_object() || !j.contains("architecture")) return;
  nlohmann::json merged = j["architecture"];
  if (!merged.is_object()) throw FormatError(where + ": envelope omn_audit /architecture: expected an object");
  for (auto it = p.architecture.begin(); it != p.architecture.end(); ++it) {
    const auto rec = merged.find(it.key());
    const bool differ = rec != merged.end() && !rec->is_null() && !it->is_null() &&
                        (rec->is_number() && it->is_number() ? rec->get<double>() != it->get<double>() : *rec != *it);
    if (differ)
      throw FormatError(where + ": the checkpoint records " + it.key() + " = " + rec->dump() + ", preset " + p.name + " says " +
                        it->dump() + " (choose the preset that matches with --preset, e.g. omn)");
    merged[it.key()] = it.value();
  }
  nlohmann::json check = {{"schema", "omn-audit/preset@1"}, {"name", p.name}, {"tensors", p.tensors},
                          {"gain", {{"parametrisation", "direct"}, {"layout", "head"}}}, {"architecture", merged}};
  parsePreset(check, where + " (envelope omn_audit)");  // validates every key and value
  p.architecture = merged;
}

namespace {
// The built-in preset whose detect.model_types lists config.json's model_type.
Preset presetForModelType(const HfArchitecture& hf) {
  std::string known;
  for (const auto& name : builtinPresetNames()) {
    Preset p = loadPreset(name);
    for (const auto& t : p.hf_model_types) {
      if (t == hf.model_type) return p;
      known += (known.empty() ? "" : ", ") + t;
    }
  }
  if (hf.model_type.empty())
    throw FormatError(hf.path + " /model_type: missing, so the model's family is unknown (presets serve " + known +
                      "); name the preset with --preset");
  throw FormatError(hf.path + " /model_type: \"" + hf.model_type + "\" is no family a built-in preset serves (" + known +
                    "); name a preset with --preset (a built-in or a preset JSON file, docs/profile.md)");
}

// config.json's statements over the family's defaults (config.json describes this model; the
// preset, the family); each remembers where it came from for the messages that check it.
void adoptHfArchitecture(Preset& p, const HfArchitecture& hf) {
  for (auto it = hf.architecture.begin(); it != hf.architecture.end(); ++it) {
    p.architecture[it.key()] = it.value();
    p.architecture_from[it.key()] = hf.from.at(it.key());
  }
  p.forward_unsupported = hf.forward_unsupported;
}
}  // namespace

Preset resolvePreset(const std::string& requested, const io::TensorIndex& index, const nlohmann::json& metadata,
                     const std::string& where, const HfArchitecture* hf) {
  Preset p;
  try {
    p = !requested.empty() ? loadPreset(requested) : hf ? presetForModelType(*hf) : detectPreset(index);
  } catch (const FormatError& e) {  // which checkpoint: track and eval read many
    throw FormatError(where + ": " + e.what());
  }
  if (hf) adoptHfArchitecture(p, *hf);
  adoptCheckpointArchitecture(p, metadata, where);
  return p;
}

TensorMatch matchTensors(const Preset& p, const io::TensorIndex& index, int n_layers) {
  TensorMatch m;
  std::vector<std::regex> res;
  for (const auto& [role, pat] : p.tensors) res.push_back(patternRegex(pat));
  for (const auto& t : index.tensors()) {
    bool hit = false;
    for (const auto& re : res) hit = hit || std::regex_match(t.name, re);
    if (hit) ++m.matched;
    else m.unmatched.push_back(t.name);
  }
  for (const auto& [role, pat] : p.tensors) {
    const bool per_layer = pat.find("{i}") != std::string::npos;
    for (int i = 0; i < (per_layer ? n_layers : 1); ++i) {
      const std::string name = p.tensorName(role, i);
      if (!index.find(name)) m.missing.push_back(name);
    }
  }
  return m;
}

}  // namespace omn::model
