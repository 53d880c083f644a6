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
#include "omn/documents/profile_document.h"
#include "omn/documents/tolerance_document.h"
#include "omn/io/json_document.h"

using nlohmann::json;

namespace {
omn::documents::ProfileDocument g_profile;
}

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  const char* p = std::getenv("OMN_FUZZ_PROFILE");
  if (!p) {
    std::fprintf(stderr, "fuzz_gate: set OMN_FUZZ_PROFILE to a profile --json output\n");
    std::abort();
  }
  g_profile = omn::documents::ProfileDocument::fromJson(
      omn::documents::readDocument(p, "profile", {omn::documents::DocumentKind::profile}).json, "profile");
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    json doc = omn::io::parseJson(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz");
    const bool tolerance = doc.is_object() && doc.contains("schema") && doc["schema"] == "omn-audit/tolerance@1";
    if (tolerance) {  // as --tolerance reads it: checked, then typed
      omn::documents::checkDocument(doc, "fuzz", {omn::documents::DocumentKind::tolerance});
      const auto tol = omn::documents::ToleranceDocument::fromJson(doc, "fuzz");
      (void)omn::audit::unmatchedRules(g_profile, tol);
      (void)omn::audit::checkRegression(g_profile, g_profile, tol, "profile");
    } else {  // as --baseline reads it: accepted (older shapes read as today's), typed, then compared
      const omn::audit::Baseline baseline = omn::audit::readBaseline(doc, "fuzz");
      omn::audit::checkComparable(baseline, g_profile.options, "fuzz");
      (void)omn::audit::checkRegression(g_profile, baseline, std::nullopt, "fuzz");
    }
  } catch (const omn::Error&) {
  }
  return 0;
}
