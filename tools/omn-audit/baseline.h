// --baseline for profile and track: an earlier profile (--json output), a reference file, or the
// name of an embedded reference ("omn-1-reference" = configs/omn-1-reference-profile.json).
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "omn/embedded.h"
#include "omn/io/json_document.h"

namespace omn::cli {

inline nlohmann::json loadBaseline(const std::string& b) {
  const auto& files = embeddedConfigs();
  const auto kinds = {io::DocumentKind::profile, io::DocumentKind::reference_profile};
  if (auto it = files.find(b + "-profile.json"); it != files.end()) {
    nlohmann::json j = io::parseJson(it->second, "embedded baseline " + b);
    io::acceptDocument(j, "embedded baseline " + b, kinds);
    return j;
  }
  return io::readDocument(b, "baseline", kinds).json;
}

// --tolerance: an omn-audit/tolerance@1 document, validated on entry.
inline nlohmann::json loadTolerance(const std::string& path) {
  return io::readDocument(path, "tolerance", {io::DocumentKind::tolerance}).json;
}

}  // namespace omn::cli
