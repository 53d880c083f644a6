#include "omn/documents/legacy_documents.h"

namespace omn::documents {

using nlohmann::json;

namespace {

// A profile written before count ranges were an option (2026-12-01) holds the audit's two counts
// under fixed names; they are the ranges [1,2] and (32,inf), read as such so that a baseline
// from then still gates, compares and renders like a new one.
// The statistics block (a profile's, or a track checkpoint's) in today's form; the labels of the
// ranges it holds.
json readLegacyStatistics(json& s) {
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
  return labels;
}

void readLegacyCounts(json& profile) {
  json& s = profile["statistics"];
  if (s.contains("counts")) return;
  const json labels = readLegacyStatistics(s);
  if (!profile["options"].contains("count_ranges")) profile["options"]["count_ranges"] = labels;
}

// A track written then holds each checkpoint's statistics in the same older form.
void readLegacyTrackCounts(json& track) {
  for (auto& c : track["checkpoints"])
    if (c["statistics"].is_object() && !c["statistics"].contains("counts")) readLegacyStatistics(c["statistics"]);
}

// A reference written then points its figures at those fields: the same counts, at their new place.
void readLegacyFigures(json& reference) {
  for (auto& f : reference["figures"])
    for (const auto& c : kLegacyCounts)
      if (f["pointer"] == c.field) f["pointer"] = c.pointer;
}

// A sweep written before 2026-12-07 names two --mechanism metrics otherwise (the trainer's names are
// everyone's now: documents/layer_metrics.h).
void renameMechanismMetrics(json& table) {
  if (!table.is_array()) return;
  for (auto& layer : table)
    for (const auto& [old_key, key] : kLegacyMetricNames)
      if (layer.is_object() && layer.contains(old_key) && !layer.contains(key)) {
        layer[key] = layer[old_key];
        layer.erase(old_key);
      }
}

void readLegacyMechanism(json& sweep) {
  for (const char* pass : {"open", "close"}) renameMechanismMetrics(sweep["control"][pass]["mechanism"]);
  for (auto& c : sweep["conditions"]) renameMechanismMetrics(c["mechanism"]);
}

}  // namespace

void upgradeDocument(json& doc, DocumentKind kind) {
  if (kind == DocumentKind::profile) readLegacyCounts(doc);
  if (kind == DocumentKind::reference_profile) readLegacyFigures(doc);
  if (kind == DocumentKind::track) readLegacyTrackCounts(doc);
  if (kind == DocumentKind::intervention) readLegacyMechanism(doc);
}

}  // namespace omn::documents
