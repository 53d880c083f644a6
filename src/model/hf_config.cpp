#include "omn/model/hf_config.h"

#include "omn/errors.h"

namespace omn::model {

using nlohmann::json;

namespace {

[[noreturn]] void bad(const std::string& path, const std::string& pointer, const std::string& what, const json& got) {
  throw FormatError(path + " " + pointer + ": expected " + what + ", got " + got.dump());
}

// The architecture's fields, each with the pointer it came from, from the language model's keys
// `c` (at pointer `at`).
void readArchitecture(const json& c, const std::string& path, const std::string& at, HfArchitecture& hf) {
  auto positiveInt = [&](const char* key, const char* arch) {
    if (!c.contains(key) || c[key].is_null()) return;
    if (!c[key].is_number_integer() || c[key].get<std::int64_t>() <= 0) bad(path, at + "/" + key, "a positive integer", c[key]);
    hf.architecture[arch] = c[key];
    hf.from[arch] = path + " " + at + "/" + key;
  };
  auto positiveNumber = [&](const json& v, const std::string& pointer, const char* arch) {
    if (!v.is_number() || v.get<double>() <= 0) bad(path, pointer, "a positive number", v);
    hf.architecture[arch] = v.get<double>();
    hf.from[arch] = path + " " + pointer;
  };
  positiveInt("num_hidden_layers", "n_layers");
  positiveInt("hidden_size", "d_model");
  positiveInt("num_attention_heads", "n_heads");
  positiveInt("num_key_value_heads", "n_kv_heads");
  positiveInt("intermediate_size", "ffn_hidden");
  positiveInt("vocab_size", "vocab_size");
  positiveInt("head_dim", "head_dim");
  if (!hf.architecture.contains("head_dim") && hf.architecture.contains("d_model") && hf.architecture.contains("n_heads")) {
    // transformers' default: hidden_size / num_attention_heads
    const std::int64_t d = hf.architecture["d_model"], h = hf.architecture["n_heads"];
    if (d % h == 0) {
      hf.architecture["head_dim"] = d / h;
      hf.from["head_dim"] = path + " " + at + "/hidden_size / " + at + "/num_attention_heads";
    }
  }
  if (c.contains("rms_norm_eps") && !c["rms_norm_eps"].is_null()) {
    positiveNumber(c["rms_norm_eps"], at + "/rms_norm_eps", "norm_eps");
    positiveNumber(c["rms_norm_eps"], at + "/rms_norm_eps", "qk_norm_eps");  // Qwen3, OLMo2: one eps for every RMSNorm
  }
  // the RoPE base: /rope_theta, or /rope_parameters/rope_theta (transformers 5)
  const bool params = c.contains("rope_parameters") && c["rope_parameters"].is_object();
  if (c.contains("rope_theta") && !c["rope_theta"].is_null()) positiveNumber(c["rope_theta"], at + "/rope_theta", "rope_theta");
  else if (params && c["rope_parameters"].contains("rope_theta"))
    positiveNumber(c["rope_parameters"]["rope_theta"], at + "/rope_parameters/rope_theta", "rope_theta");
  if (c.contains("tie_word_embeddings")) {
    if (!c["tie_word_embeddings"].is_boolean()) bad(path, at + "/tie_word_embeddings", "true or false", c["tie_word_embeddings"]);
    hf.architecture["tied_output"] = c["tie_word_embeddings"];
    hf.from["tied_output"] = path + " " + at + "/tie_word_embeddings";
  }
}

// what eval's forward pass does not compute: refused there, not silently ignored
void listUnsupported(const json& c, const std::string& path, const std::string& at, HfArchitecture& hf) {
  auto unsupported = [&](const std::string& pointer, const json& v, const std::string& what) {
    hf.forward_unsupported.push_back(path + " " + pointer + ": " + v.dump() + " (" + what + ")");
  };
  auto ropeType = [&](const json& r, const std::string& pointer) {
    if (r.is_null()) return;
    const std::string type = r.is_object() && r.contains("rope_type") && r["rope_type"].is_string() ? r["rope_type"].get<std::string>()
                             : r.is_object() && r.contains("type") && r["type"].is_string()       ? r["type"].get<std::string>()
                                                                                                  : "";
    if (type != "default") unsupported(pointer, r, "RoPE scaling: eval implements plain RoPE only");
  };
  const bool params = c.contains("rope_parameters") && c["rope_parameters"].is_object();
  if (c.contains("rope_scaling")) ropeType(c["rope_scaling"], at + "/rope_scaling");
  if (params) ropeType(c["rope_parameters"], at + "/rope_parameters");
  for (const char* key : {"attention_bias", "mlp_bias", "use_sliding_window"})
    if (c.contains(key) && c[key] != false && !c[key].is_null())
      unsupported(at + "/" + key, c[key], std::string(key) == "use_sliding_window" ? "sliding-window attention" : "bias terms");
  if (c.contains("hidden_act") && c["hidden_act"] != "silu")
    unsupported(at + "/hidden_act", c["hidden_act"], "eval's feed-forward is SwiGLU with SiLU");
  if (c.contains("layer_types") && c["layer_types"].is_array())
    for (std::size_t i = 0; i < c["layer_types"].size(); ++i)
      if (c["layer_types"][i] != "full_attention") {
        unsupported(at + "/layer_types/" + std::to_string(i), c["layer_types"][i], "eval implements full causal attention only");
        break;
      }
}

}  // namespace

HfArchitecture readHfConfig(const json& config, const std::string& path) {
  HfArchitecture hf;
  hf.path = path;
  if (config.contains("model_type")) {
    if (!config["model_type"].is_string()) bad(path, "/model_type", "a string", config["model_type"]);
    hf.model_type = config["model_type"].get<std::string>();
  }
  // Gemma 3 with vision keeps the language model's keys under /text_config
  const bool nested = config.contains("text_config") && config["text_config"].is_object();
  const json& c = nested ? config["text_config"] : config;
  const std::string at = nested ? "/text_config" : "";
  readArchitecture(c, path, at, hf);
  listUnsupported(c, path, at, hf);
  return hf;
}

}  // namespace omn::model
