// The parts of a document the schema leaves free-form (a checkpoint's metadata, a parsed manifest)
// and the lists a reader shows verbatim, as compact JSON text: what a table or a report prints of
// them, so that a reader of a typed document never handles JSON itself. Invalid UTF-8 in a string
// is replaced (U+FFFD), never an exception. No libtorch.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace omn::documents {

// One line: ["a","b"].
std::string jsonText(const std::vector<std::string>& list);
// One line; `indent` >= 0: pretty-printed with that indent.
std::string jsonText(const nlohmann::json& value, int indent = -1);
// An object's members, in the document's order, each as (key, compact JSON of its value); anything
// else but null (no members) as one entry with an empty key.
std::vector<std::pair<std::string, std::string>> jsonMembers(const nlohmann::json& object);

}  // namespace omn::documents
