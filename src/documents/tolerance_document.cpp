#include "omn/documents/tolerance_document.h"

#include "json_fields.h"

namespace omn::documents {

using fields::get;
using fields::putIfSet;
using nlohmann::json;

namespace {

void readAllowance(const json& j, Allowance& v) {
  get(j, "abs", v.abs);
  get(j, "rel", v.rel);
}
json allowanceJson(const Allowance& v) {
  json j = json::object();
  putIfSet(j, "abs", v.abs);
  putIfSet(j, "rel", v.rel);
  return j;
}

}  // namespace

void from_json(const json& j, Allowance& v) { readAllowance(j, v); }
void to_json(json& j, const Allowance& v) { j = allowanceJson(v); }

void from_json(const json& j, ToleranceRule& v) {
  readAllowance(j, v);
  get(j, "pointer", v.pointer);
}
void to_json(json& j, const ToleranceRule& v) {
  j = allowanceJson(v);
  j["pointer"] = v.pointer;
}

void from_json(const json& j, ToleranceDocument& v) {
  get(j, "default", v.fallback);
  get(j, "rules", v.rules);
}

ToleranceDocument ToleranceDocument::fromJson(const json& doc, const std::string& label) {
  return fields::readAs<ToleranceDocument>(doc, label);
}

json ToleranceDocument::toJson() const {
  json j = {{"schema", "omn-audit/tolerance@1"}};
  putIfSet(j, "default", fallback);
  putIfSet(j, "rules", rules);
  return j;
}

}  // namespace omn::documents
