// A part of a document, or of a record that holds the document's parts (a sweep's journal line),
// read as its struct outside documents/: through the part's one from_json, with the JSON pointer of
// a member that does not convert kept. For the parts instantiated in read_block.cpp. No libtorch.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

namespace omn::documents {

// `j`, found at `pointer` of what `label` names, as T. FormatError "<label>: <pointer><inner
// pointer>: <what>" when a member does not convert.
template <class T>
T readBlock(const nlohmann::json& j, const std::string& label, const std::string& pointer);

}  // namespace omn::documents
