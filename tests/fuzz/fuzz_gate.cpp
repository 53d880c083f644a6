// libFuzzer: any bytes as a --baseline (profile or reference) or a --tolerance file against a real
// profile: an omn::Error or a verdict, never a crash or a hang (a pattern of many stars once hung a
// backtracking regex). The profile is $OMN_FUZZ_PROFILE (tools/fuzz.sh writes it).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include <nlohmann/json.hpp>

#include "omn/audit/regression.h"
#include "omn/errors.h"
#include "omn/documents/document.h"
#include "omn/io/json_document.h"

using nlohmann::json;

namespace {
json g_profile;
}

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  const char* p = std::getenv("OMN_FUZZ_PROFILE");
  if (!p) {
    std::fprintf(stderr, "fuzz_gate: set OMN_FUZZ_PROFILE to a profile --json output\n");
    std::abort();
  }
  g_profile = omn::documents::readDocument(p, "profile", {omn::documents::DocumentKind::profile}).json;
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    json doc = omn::io::parseJson(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz");
    const bool tolerance = doc.is_object() && doc.contains("schema") && doc["schema"] == "omn-audit/tolerance@1";
    if (tolerance) {
      (void)omn::audit::checkRegression(g_profile, g_profile, doc, "profile", "fuzz");
    } else {  // as --baseline reads it: accepted (older shapes read as today's), then compared
      omn::documents::acceptDocument(doc, "fuzz", {omn::documents::DocumentKind::profile, omn::documents::DocumentKind::reference_profile});
      omn::audit::checkComparable(doc, g_profile["options"], "fuzz");
      (void)omn::audit::checkRegression(g_profile, doc, nullptr, "fuzz", "");
    }
  } catch (const omn::Error&) {
  }
  return 0;
}
