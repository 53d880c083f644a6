#include "omn/documents/legacy_documents.h"

namespace omn::documents {

using nlohmann::json;

namespace {

// A profile written before count ranges were an option (2026-12-01) holds the audit's two counts
// under fixed names; they are the ranges [1,2] and (32,inf), read as such so that a baseline
// from then still gates, compares and renders like a new one.
void readLegacyCounts(json& profile) {
  json& s = profile["statistics"];
  if (s.contains("counts")) return;
  json counts = json::object(), labels = json::array();
  auto take = [&](const char* old_key, const char* label, json lo, json hi, bool lo_closed, bool hi_closed) {
    if (!s.contains(old_key)) return;
    counts[label] = {{"lo", lo}, {"hi", hi}, {"lo_closed", lo_closed}, {"hi_closed", hi_closed}, {"count", s[old_key]}};
    labels.push_back(label);
    s.erase(old_key);
  };
  take("count_in_1_2", "[1,2]", 1.0, 2.0, true, true);
  take("count_above_32", "(32,inf)", 32.0, nullptr, false, false);
  s["counts"] = counts;
  if (!profile["options"].contains("count_ranges")) profile["options"]["count_ranges"] = labels;
}

// A reference written then points its figures at those fields: the same counts, at their new place.
void readLegacyFigures(json& reference) {
  for (auto& f : reference["figures"])
    for (const auto& c : kLegacyCounts)
      if (f["pointer"] == c.field) f["pointer"] = c.pointer;
}

}  // namespace

void upgradeDocument(json& doc, DocumentKind kind) {
  if (kind == DocumentKind::profile) readLegacyCounts(doc);
  if (kind == DocumentKind::reference_profile) readLegacyFigures(doc);
}

}  // namespace omn::documents
