// A Hugging Face model folder as a checkpoint: `config.json` beside the weights. Which file holds
// the weights is the folder's layout (the names `transformers` writes and reads); what config.json
// says of the architecture is model/hf_config.h's business. No libtorch.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace omn::io {

struct ModelLocation {
  std::string given;        // the path as the user gave it
  std::string weights;      // the file the checkpoint readers open (`given` itself unless a folder)
  std::string config_path;  // FOLDER/config.json; empty when `given` is a file
  nlohmann::json config;    // config.json parsed (null when `given` is a file)
  std::string config_sha256;

  bool isFolder() const { return !config_path.empty(); }
};

// A file: itself. A folder: its config.json (required) and its weights, by the preference
// `transformers` loads them with: model.safetensors, model.safetensors.index.json, pytorch_model.bin.
// FormatError naming the folder and what it holds for a folder without config.json or weights, or
// whose config.json is not a Hugging Face config, or whose weights are a sharded pytorch_model.bin
// (convert it to safetensors); UsageError for a path that does not exist. (A training run's
// directory is the audit layer's to recognise: audit/run_directory.h.)
ModelLocation locateModel(const std::string& path);

// Whether `dir` is a Hugging Face model folder: a config.json that is a JSON object naming a
// model_type or architectures (an omn-audit run directory's config.json is its train config, not
// a model's). Reads nothing else; a config.json that does not parse is not one.
bool isModelFolder(const std::string& dir);

// The files a command reads through `path`, for the one output rule (output/json_file.h
// checkOutputPath): `path` itself; for a folder (a model folder or a run directory) its config.json,
// train.json and weights files (model.safetensors, the index, pytorch_model.bin); for a sharded
// index (a *.index.json, given or in the folder) every shard its /weight_map names. What does not
// exist or does not parse is left out: the readers say what is wrong with it.
std::vector<std::string> filesReadThrough(const std::string& path);

// Whether `path` names a sharded safetensors index (it ends in ".index.json"): the one rule the
// checkpoint reader, the folder reader and the digest lists use.
bool isShardIndexName(const std::string& path);

}  // namespace omn::io
