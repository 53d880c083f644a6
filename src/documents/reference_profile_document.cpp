#include "omn/documents/reference_profile_document.h"

#include "json_fields.h"

namespace omn::documents {

using fields::get;
using fields::putIfSet;
using fields::write;
using nlohmann::json;

void from_json(const json& j, ReferenceFigure& v) {
  get(j, "label", v.label);
  get(j, "pointer", v.pointer);
  get(j, "value", v.value);
  get(j, "decimals", v.decimals);
}
void to_json(json& j, const ReferenceFigure& v) {
  j = {{"pointer", v.pointer}, {"value", v.value}, {"decimals", v.decimals}};
  putIfSet(j, "label", v.label);
}

void from_json(const json& j, ReferenceOptions& v) { get(j, "threshold", v.threshold); }
void to_json(json& j, const ReferenceOptions& v) {
  j = json::object();
  putIfSet(j, "threshold", v.threshold);
}

void from_json(const json& j, ReferenceProfileDocument& v) {
  get(j, "description", v.description);
  get(j, "checkpoint_sha256", v.checkpoint_sha256);
  get(j, "options", v.options);
  get(j, "figures", v.figures);
}

ReferenceProfileDocument ReferenceProfileDocument::fromJson(const json& doc, const std::string& label) {
  return fields::readAs<ReferenceProfileDocument>(doc, label);
}

json ReferenceProfileDocument::toJson() const {
  json j = {{"schema", "omn-audit/reference-profile@1"}, {"figures", write(figures)}};
  putIfSet(j, "description", description);
  putIfSet(j, "checkpoint_sha256", checkpoint_sha256);
  putIfSet(j, "options", options);
  return j;
}

}  // namespace omn::documents
