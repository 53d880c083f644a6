// libFuzzer: any bytes read back as an omn-audit document (profile, reference, tolerance, eval,
// intervention, study, track) are refused with an omn::Error or handled by every reader without a
// crash, leak or hang: validation on entry (io/json_document.h), then the document read as its
// struct (documents/) and the readers the CLI runs on it -- figures, text, HTML/Markdown report,
// regression gate. What the CLI reports as exit 2 is the document's fault, not a finding: an
// omn::Error of exit 2 (FormatError, UsageError), and from a reader a nlohmann exception or
// std::out_of_range (tools/omn-audit/guard.h, readingDocuments). Anything else -- "bad optional
// access", a std::length_error, an IntegrityError -- escapes, and libFuzzer reports it, as it does a
// signal: the CLI would exit 1 or worse.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <stdexcept>
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
        in.profile = omn::documents::ProfileDocument::fromJson(doc, "fuzz");
        (void)omn::report::profileFigures(*in.profile);
        omn::report::printProfile(out, *in.profile);
        (void)omn::report::profileCsv(*in.profile);
        (void)omn::audit::checkRegression(*in.profile, *in.profile, std::nullopt, "fuzz");
        (void)omn::report::htmlReport(in);
        break;
      case K::track: {
        const auto track = omn::documents::TrackDocument::fromJson(doc, "fuzz");
        (void)omn::report::trackFigures(track);
        omn::report::printTrack(out, track);
        (void)omn::report::trackCsv(track);
        break;
      }
      case K::intervention:
        in.sweep = omn::documents::InterventionDocument::fromJson(doc, "fuzz");
        (void)omn::report::sweepFigures(*in.sweep);
        break;
      case K::study:
        in.study = omn::documents::StudyDocument::fromJson(doc, "fuzz");
        (void)omn::report::studyFigures(*in.study);
        break;
      case K::eval:
        in.eval = omn::documents::EvalDocument::fromJson(doc, "fuzz");
        break;
      case K::reference_profile:
      case K::tolerance:
        break;  // fuzz_gate checks them against a real profile
      case K::train:
        break;  // not accepted above: fuzz_train reads run records the way train --resume does
    }
    if (in.sweep || in.study || in.eval) {
      (void)omn::report::htmlReport(in);
      (void)omn::report::markdownReport(in, "figs");
      (void)omn::report::reportWarnings(in);
    }
  } catch (const omn::Error& e) {
    if (e.exitCode() != omn::kExitInvalidInput) throw;
  } catch (const nlohmann::json::exception&) {
  } catch (const std::out_of_range&) {
  }
  return 0;
}
