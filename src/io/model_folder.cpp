#include "omn/io/model_folder.h"

#include <algorithm>
#include <filesystem>
#include <vector>

#include "omn/errors.h"
#include "omn/io/json_document.h"
#include "omn/io/sha256.h"

namespace omn::io {

namespace fs = std::filesystem;

namespace {

// The weights files `transformers` looks for, in the order it prefers them.
const char* const kWeights[] = {"model.safetensors", "model.safetensors.index.json", "pytorch_model.bin"};

// A short listing of what the folder holds, for an error message ("a.txt, b.json, ... (12 files)").
std::string listing(const fs::path& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator(); it.increment(ec))
    names.push_back(it->path().filename().string());
  std::sort(names.begin(), names.end());
  if (names.empty()) return "it is empty";
  std::string s = "it holds ";
  for (std::size_t i = 0; i < names.size() && i < 8; ++i) s += (i ? ", " : "") + names[i];
  if (names.size() > 8) s += ", ... (" + std::to_string(names.size()) + " entries)";
  return s;
}

// The shards a sharded index names (its /weight_map values that are plain names beside it).
void addShards(const fs::path& index, std::vector<std::string>& out) {
  std::error_code ec;
  if (!fs::is_regular_file(index, ec)) return;
  try {
    const nlohmann::json j = parseJson(readTextFile(index.string(), "index"), index.string());
    if (!j.is_object() || !j.contains("weight_map") || !j["weight_map"].is_object()) return;
    for (const auto& f : j["weight_map"])
      if (f.is_string() && !f.get<std::string>().empty() && f.get<std::string>().find('/') == std::string::npos)
        out.push_back((index.parent_path() / f.get<std::string>()).string());
  } catch (const Error&) {  // the reader names what is wrong with it
  }
}

// A link to nothing in a model folder (a Hugging Face cache whose blob is gone) is named as such,
// never taken for a missing file that the folder's listing then shows.
void refuseDanglingLink(const fs::path& p) {
  std::error_code ec;
  if (fs::is_symlink(fs::symlink_status(p, ec)) && !fs::exists(p, ec))
    throw FormatError(p.string() + ": a dangling link (to " + fs::read_symlink(p, ec).string() +
                      ", which does not exist): restore what it links to, or replace the link with the file");
}

bool isHfConfig(const nlohmann::json& j) { return j.is_object() && (j.contains("model_type") || j.contains("architectures")); }

}  // namespace

bool isShardIndexName(const std::string& s) {
  const std::string suffix = ".index.json";
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool isModelFolder(const std::string& dir) {
  std::error_code ec;
  const fs::path config = fs::path(dir) / "config.json";
  if (!fs::is_regular_file(config, ec)) return false;
  try {
    return isHfConfig(parseJson(readTextFile(config.string(), "model config"), config.string()));
  } catch (const Error&) {
    return false;
  }
}

std::vector<std::string> filesReadThrough(const std::string& path) {
  std::vector<std::string> out = {path};
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    for (const char* name : {"config.json", "train.json", kWeights[0], kWeights[1], kWeights[2]})
      if (fs::exists(fs::path(path) / name, ec)) out.push_back((fs::path(path) / name).string());
    addShards(fs::path(path) / kWeights[1], out);
  } else if (isShardIndexName(path)) {
    addShards(path, out);
  }
  return out;
}

ModelLocation locateModel(const std::string& path) {
  ModelLocation loc;
  loc.given = path;
  loc.weights = path;
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (!fs::is_directory(st)) return loc;  // a file (or nothing): the readers say what is wrong with it
  const fs::path dir(path);
  const fs::path config = dir / "config.json";
  refuseDanglingLink(config);
  if (!fs::exists(config, ec))
    throw FormatError(path + ": a folder is read as a Hugging Face model folder, and this one has no config.json (" +
                      listing(dir) + "); give the weights file itself, or add the model's config.json");
  loc.config_path = config.string();
  const std::string text = readTextFile(loc.config_path, "model config");
  loc.config = parseJson(text, loc.config_path);
  if (!isHfConfig(loc.config))
    throw FormatError(loc.config_path + ": expected a Hugging Face config.json (a JSON object with model_type or architectures)");
  loc.config_sha256 = sha256Bytes(text.data(), text.size());
  for (const char* name : kWeights) {
    refuseDanglingLink(dir / name);
    if (fs::is_regular_file(dir / name, ec)) {
      loc.weights = (dir / name).string();
      return loc;
    }
  }
  if (fs::exists(dir / "pytorch_model.bin.index.json", ec))
    throw FormatError(path + ": the weights are a sharded pytorch_model.bin (pytorch_model.bin.index.json), which omn-audit "
                      "does not read; save them as safetensors (model.save_pretrained(d, safe_serialization=True))");
  throw FormatError(path + ": a Hugging Face model folder with no weights omn-audit reads (looked for "
                    "model.safetensors.index.json, model.safetensors, pytorch_model.bin; " + listing(dir) + ")");
}

}  // namespace omn::io
