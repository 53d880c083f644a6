// A track of checkpoints (omn-audit/track@1, docs/schema/track.schema.json; docs/track.md), typed:
// per checkpoint its file, step, digest, the profile's statistics, each layer's Q and K summary and,
// with a baseline, what drifted. `track`'s table and CSV, the report and the figures read the struct.
// No libtorch.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "omn/documents/checkpoint_record.h"
#include "omn/documents/profile_document.h"
#include "omn/documents/provenance.h"

namespace omn::documents {

struct TrackLayer {
  std::int64_t layer = 0;
  RoleSummary q, k;
  const RoleSummary& role(char r) const { return r == 'q' ? q : k; }
};

struct TrackDrift {
  std::int64_t checked = 0, drifted = 0;
  std::vector<Drift> statistics;
};

struct TrackPoint {
  std::string path;
  std::optional<std::int64_t> step;   // the checkpoint metadata's "step", if it has one
  std::optional<std::string> sha256;  // empty: read without hashing
  bool sha256_verified = false;
  std::int64_t size_bytes = 0;
  std::string preset;
  ProfileStatistics statistics;
  std::vector<TrackLayer> layers;
  std::optional<TrackDrift> drift;  // with --baseline
};

struct TrackBaseline {
  std::string path;
  std::optional<std::string> tolerance;
};

struct TrackSummary {
  std::int64_t checkpoints = 0, verified = 0, unverified = 0;
  std::optional<std::int64_t> drifted;  // empty without --baseline
};

// What the statistics were computed with (the schema requires only the threshold).
struct TrackOptions {
  double threshold = 0;
};

struct TrackDocument {
  Provenance provenance;
  std::string order;  // "step" or "given"
  TrackOptions options;
  std::optional<std::string> digests;
  std::optional<TrackBaseline> baseline;
  TrackSummary summary;
  std::vector<TrackPoint> checkpoints;

  // `doc` as checked and upgraded by documents::acceptDocument; FormatError naming `label` and the
  // JSON pointer of a member that does not convert.
  static TrackDocument fromJson(const nlohmann::json& doc, const std::string& label);
  nlohmann::json toJson() const;
};

}  // namespace omn::documents
