// --baseline for profile and track: an earlier profile (--json output), a reference file, or the
// name of an embedded reference ("omn-1-reference" = configs/omn-1-reference-profile.json).
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "omn/embedded.h"
#include "omn/report/json_file.h"

namespace omn::cli {

inline nlohmann::json loadBaseline(const std::string& b) {
  const auto& files = embeddedConfigs();
  if (auto it = files.find(b + "-profile.json"); it != files.end()) return nlohmann::json::parse(it->second);
  return report::readJsonFile(b, "baseline");
}

}  // namespace omn::cli
