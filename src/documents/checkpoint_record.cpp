#include "omn/documents/checkpoint_record.h"

#include "json_fields.h"

namespace omn::documents {

using fields::get;
using fields::write;
using nlohmann::json;

void from_json(const json& j, RoleSummary& v) {
  get(j, "mean", v.mean);
  get(j, "std", v.std);
  get(j, "min", v.min);
  get(j, "max", v.max);
}
void to_json(json& j, const RoleSummary& v) {
  j = {{"mean", write(v.mean)}, {"std", write(v.std)}, {"min", write(v.min)}, {"max", write(v.max)}};
}

void from_json(const json& j, ShardFile& v) {
  get(j, "path", v.path);
  get(j, "sha256", v.sha256);
  get(j, "sha256_verified", v.sha256_verified);
}
void to_json(json& j, const ShardFile& v) { j = {{"path", v.path}, {"sha256", write(v.sha256)}, {"sha256_verified", v.sha256_verified}}; }

void from_json(const json& j, ModelFolder& v) {
  get(j, "path", v.path);
  get(j, "config", v.config);
  get(j, "config_sha256", v.config_sha256);
  get(j, "config_verified", v.config_verified);
  get(j, "model_type", v.model_type);
}
void to_json(json& j, const ModelFolder& v) {
  j = {{"path", v.path}, {"config", v.config}, {"config_sha256", v.config_sha256}, {"config_verified", v.config_verified},
       {"model_type", write(v.model_type)}};
}

void from_json(const json& j, Drift& v) {
  get(j, "pointer", v.pointer);
  get(j, "label", v.label);
  get(j, "baseline", v.baseline);
  get(j, "actual", v.actual);
  get(j, "allowed", v.allowed);
}
void to_json(json& j, const Drift& v) {
  j = {{"pointer", v.pointer}, {"label", v.label}, {"baseline", write(v.baseline)}, {"actual", write(v.actual)}, {"allowed", v.allowed}};
}

}  // namespace omn::documents
