// The records several document kinds share: a sharded set's files and a Hugging Face model folder
// (docs/formats.md) as a checkpoint's record holds them, a drifted statistic, a gain vector's
// summary. No libtorch.
#pragma once
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace omn::documents {

// One file of a sharded set: its digest (null: not hashed) and whether a pinned digest checked it.
struct ShardFile {
  std::string path;
  std::optional<std::string> sha256;
  bool sha256_verified = false;
};

// A checkpoint given as a model folder: the folder, the config.json that gave the architecture.
struct ModelFolder {
  std::string path, config, config_sha256;
  bool config_verified = false;
  std::optional<std::string> model_type;
};

// A statistic a regression gate found outside its tolerance (profile --baseline, track --baseline).
struct Drift {
  std::string pointer, label;
  std::optional<double> baseline;  // null: the baseline has none (a statistic of no finite gain)
  std::optional<double> actual;    // null: the statistic is missing from the document checked
  double allowed = 0;
};

// A layer's Q or K gain vector summarised (a track's checkpoint, a training evaluation); empty: no
// finite gain.
struct RoleSummary {
  std::optional<double> mean, std, min, max;
};

void from_json(const nlohmann::json& j, RoleSummary& v);
void to_json(nlohmann::json& j, const RoleSummary& v);
void from_json(const nlohmann::json& j, ShardFile& v);
void to_json(nlohmann::json& j, const ShardFile& v);
void from_json(const nlohmann::json& j, ModelFolder& v);
void to_json(nlohmann::json& j, const ModelFolder& v);
void from_json(const nlohmann::json& j, Drift& v);
void to_json(nlohmann::json& j, const Drift& v);

}  // namespace omn::documents
