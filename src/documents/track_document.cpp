#include "omn/documents/track_document.h"

#include "json_fields.h"

namespace omn::documents {

using fields::get;
using fields::write;
using nlohmann::json;

void from_json(const json& j, TrackLayer& v) {
  get(j, "layer", v.layer);
  get(j, "q", v.q);
  get(j, "k", v.k);
}
void to_json(json& j, const TrackLayer& v) { j = {{"layer", v.layer}, {"q", v.q}, {"k", v.k}}; }

void from_json(const json& j, TrackDrift& v) {
  get(j, "checked", v.checked);
  get(j, "drifted", v.drifted);
  get(j, "statistics", v.statistics);
}
void to_json(json& j, const TrackDrift& v) { j = {{"checked", v.checked}, {"drifted", v.drifted}, {"statistics", write(v.statistics)}}; }

void from_json(const json& j, TrackPoint& v) {
  get(j, "path", v.path);
  get(j, "step", v.step);
  get(j, "sha256", v.sha256);
  get(j, "sha256_verified", v.sha256_verified);
  get(j, "size_bytes", v.size_bytes);
  get(j, "preset", v.preset);
  get(j, "statistics", v.statistics);
  get(j, "layers", v.layers);
  get(j, "drift", v.drift);
}
void to_json(json& j, const TrackPoint& v) {
  j = {{"path", v.path},
       {"step", write(v.step)},
       {"sha256", write(v.sha256)},
       {"sha256_verified", v.sha256_verified},
       {"size_bytes", v.size_bytes},
       {"preset", v.preset},
       {"statistics", v.statistics},
       {"layers", write(v.layers)},
       {"drift", write(v.drift)}};
}

void from_json(const json& j, TrackBaseline& v) {
  get(j, "path", v.path);
  get(j, "tolerance", v.tolerance);
}
void to_json(json& j, const TrackBaseline& v) { j = {{"path", v.path}, {"tolerance", write(v.tolerance)}}; }

void from_json(const json& j, TrackSummary& v) {
  get(j, "checkpoints", v.checkpoints);
  get(j, "verified", v.verified);
  get(j, "unverified", v.unverified);
  get(j, "drifted", v.drifted);
}
void to_json(json& j, const TrackSummary& v) {
  j = {{"checkpoints", v.checkpoints}, {"verified", v.verified}, {"unverified", v.unverified}, {"drifted", write(v.drifted)}};
}

void from_json(const json& j, TrackOptions& v) { get(j, "threshold", v.threshold); }
void to_json(json& j, const TrackOptions& v) { j = {{"threshold", v.threshold}}; }

void from_json(const json& j, TrackDocument& v) {
  get(j, "provenance", v.provenance);
  get(j, "order", v.order);
  get(j, "options", v.options);
  get(j, "digests", v.digests);
  get(j, "baseline", v.baseline);
  get(j, "summary", v.summary);
  get(j, "checkpoints", v.checkpoints);
}

TrackDocument TrackDocument::fromJson(const json& doc, const std::string& label) { return fields::readAs<TrackDocument>(doc, label); }

json TrackDocument::toJson() const {
  return {{"schema", "omn-audit/track@1"}, {"provenance", provenance}, {"order", order},          {"options", options},
          {"digests", write(digests)},     {"baseline", write(baseline)}, {"summary", summary}, {"checkpoints", write(checkpoints)}};
}

}  // namespace omn::documents
