#include "omn/documents/json_text.h"

namespace omn::documents {

using nlohmann::json;

std::string jsonText(const std::vector<std::string>& list) { return jsonText(json(list)); }

std::string jsonText(const json& value, int indent) { return value.dump(indent, ' ', false, json::error_handler_t::replace); }

std::vector<std::pair<std::string, std::string>> jsonMembers(const json& object) {
  if (object.is_null()) return {};
  if (!object.is_object()) return {{"", jsonText(object)}};
  std::vector<std::pair<std::string, std::string>> out;
  for (auto it = object.begin(); it != object.end(); ++it) out.emplace_back(it.key(), jsonText(it.value()));
  return out;
}

}  // namespace omn::documents
