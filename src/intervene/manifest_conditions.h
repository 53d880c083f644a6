// Internal to the manifest reader (manifest.cpp): its /reported and /conditions blocks, read in
// manifest_conditions.cpp. Each throws (or keeps in `errors`) UsageErrors naming the JSON pointer.
#pragma once
#include <nlohmann/json.hpp>

#include "omn/io/error_list.h"
#include "omn/io/json_reader.h"
#include "omn/intervene/manifest.h"

namespace omn::intervene::detail {

// /reported: where the reported perplexities come from, and the control's
void parseReported(const io::JsonReader& r, const nlohmann::json& j, Manifest& m);

// /conditions: each entry expanded over its lists, in manifest order; an entry's mistakes are kept in
// `errors` and the next entry is read. `reported_failed`: /reported had a mistake, so a condition's
// reported perplexity is not also refused for wanting it.
void parseConditions(const io::JsonReader& r, const nlohmann::json& j, Manifest& m, bool reported_failed, io::ErrorList& errors);

}  // namespace omn::intervene::detail
