// libFuzzer: any bytes read back as an omn-audit document (profile, reference, tolerance, eval,
// intervention, study, track) are refused with an omn::Error or handled by every reader without a
// crash, leak or hang: validation on entry (io/json_document.h), then the readers the CLI runs on a
// document that passed -- figures, text, HTML/Markdown report, regression gate. A std::exception
// from a reader is what the CLI reports as exit 2 (guard.h readingDocuments); a signal is a finding.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string_view>

#include <nlohmann/json.hpp>

#include "omn/audit/regression.h"
#include "omn/errors.h"
#include "omn/documents/document.h"
#include "omn/io/json_document.h"
#include "omn/report/html.h"
#include "omn/report/plots.h"
#include "omn/report/profile_text.h"
#include "omn/report/track_text.h"

using nlohmann::json;
using K = omn::documents::DocumentKind;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  json doc;
  K kind;
  try {
    doc = omn::io::parseJson(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz");
    kind = omn::documents::acceptDocument(doc, "fuzz", {K::profile, K::reference_profile, K::tolerance, K::eval, K::intervention,
                                                K::study, K::track});
  } catch (const omn::Error&) {
    return 0;
  }
  try {
    std::ostringstream out;
    omn::report::ReportInput in;
    switch (kind) {
      case K::profile:
        (void)omn::report::figuresFor(doc, "fuzz");
        omn::report::printProfile(out, doc);
        (void)omn::report::profileCsv(doc);
        (void)omn::audit::checkRegression(doc, doc, nullptr, "fuzz", "");
        in.profile = doc;
        (void)omn::report::htmlReport(in);
        break;
      case K::track:
        (void)omn::report::figuresFor(doc, "fuzz");
        omn::report::printTrack(out, doc);
        (void)omn::report::trackCsv(doc);
        break;
      case K::intervention:
      case K::study:
        (void)omn::report::figuresFor(doc, "fuzz");
        [[fallthrough]];
      case K::eval:
        in.result = doc;
        (void)omn::report::htmlReport(in);
        (void)omn::report::markdownReport(in, "figs");
        (void)omn::report::reportWarnings(in);
        break;
      case K::reference_profile:
      case K::tolerance:
        break;  // fuzz_gate checks them against a real profile
      case K::train:
        break;  // not accepted above: fuzz_train reads run records the way train --resume does
    }
  } catch (const std::exception&) {
  }
  return 0;
}
