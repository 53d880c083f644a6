// What a Hugging Face config.json says of the architecture, in the preset's terms: the family
// (model_type), the dimensions, the norms' eps, the RoPE base, a tied head, and what the forward
// pass of eval does not implement (RoPE scaling, sliding windows, biases, another activation).
// Every value read is type-checked; an error names the file and the JSON pointer. No libtorch.
#pragma once
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace omn::model {

struct HfArchitecture {
  std::string path;        // the config.json read
  std::string model_type;  // "qwen3"; "" when absent
  nlohmann::json architecture = nlohmann::json::object();  // preset architecture keys (n_layers, rope_theta, ...)
  std::map<std::string, std::string> from;                 // architecture key -> "PATH /num_hidden_layers"
  std::vector<std::string> forward_unsupported;            // "PATH /rope_scaling: {...}" (eval refuses these)
};

HfArchitecture readHfConfig(const nlohmann::json& config, const std::string& path);

}  // namespace omn::model
