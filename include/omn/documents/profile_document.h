// A profile (omn-audit/profile@1, docs/schema/profile.schema.json; definitions in docs/profile.md),
// typed: the checkpoint and what its digest checked, the preset, the gains' statistics, their
// histogram and layers, and the regression verdict when a baseline was given. Read once at the edge
// (fromJson, after the schema), then `profile`'s text and CSV, the report and the figures read the
// struct. A statistic of no finite gain is an empty optional (null in the document). No libtorch.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "omn/documents/checkpoint_record.h"
#include "omn/documents/provenance.h"

namespace omn::documents {

struct ProfileCheckpoint {
  std::string path;
  std::optional<std::string> sha256;  // null: not hashed (track's fast path)
  bool sha256_verified = false;       // the file at path (an index: the index alone) matched its digest
  std::optional<std::string> verified;  // "all", "partial" or "none"; absent before 2026-11 (with digests)
  std::optional<std::string> digests;   // the --digests list (written, null or not, beside verified)
  std::string format;
  std::int64_t size_bytes = 0;
  std::vector<ShardFile> shards;
  std::int64_t tensor_count = 0;
  std::string state_key;
  std::vector<std::vector<std::string>> shared_storage;
  nlohmann::json metadata;  // every non-tensor value of the envelope, as the checkpoint holds it
  std::optional<ModelFolder> folder;
  // The metadata's top-level members, each as (key, compact JSON of its value).
  std::vector<std::pair<std::string, std::string>> metadataMembers() const;
};

struct ProfilePreset {
  std::string name, source;
  bool detected = false;
};

struct ParameterSummary {
  std::int64_t count = 0;
  std::optional<bool> head_identical_to_embedding;  // empty: no separate head in the preset, or one absent
};

struct TensorMatch {
  std::int64_t matched = 0;
  std::vector<std::string> unmatched, missing;
};

struct GainLayout {
  std::string preset, parametrisation, effective, layout;
  std::int64_t head_dim = 0;
  std::string rope_style;
  std::int64_t n_layers = 0, vectors = 0;
};

struct ProfileOptionsRecord {
  double threshold = 0;
  std::vector<double> hist_edges;
  double pivot = 0;
  std::int64_t top_k = 0;
  std::optional<std::vector<std::string>> count_ranges;  // absent before 2026-12-01
};

// count: every gain; the moments over the finite ones (empty when there is none).
struct Moments {
  std::int64_t count = 0;
  std::optional<std::int64_t> count_non_finite;  // absent in older profiles
  std::optional<double> mean, std, min, max;
};

struct CountRangeRecord {
  std::optional<double> lo, hi;  // empty: unbounded
  bool lo_closed = false, hi_closed = false;
  std::int64_t count = 0;
};

struct ProfileStatistics : Moments {
  std::optional<double> share_above_threshold;
  std::int64_t count_above_threshold = 0, count_negative = 0;
  std::map<std::string, CountRangeRecord> counts;  // keyed by the range in interval notation
};

struct Bin {
  double lo = 0, hi = 0;
  std::int64_t count = 0;
};
struct Distribution {
  std::string rule;
  std::vector<Bin> bins;
};

struct HistogramBin {
  std::string label;
  std::optional<double> lo, hi;  // empty: unbounded
  std::int64_t count = 0;
};

struct Coordinate {
  std::int64_t layer = 0;
  std::string role;  // "q" or "k"
  std::int64_t index = 0;
  double value = 0;
};
struct NonFiniteCoordinate {
  std::int64_t layer = 0;
  std::string role;
  std::int64_t index = 0;
  std::string value;  // "nan", "inf" or "-inf"
};

struct RopePairAsymmetry {
  std::int64_t pairs = 0;
  double mean_abs_diff = 0, max_abs_diff = 0;
};
struct GainVector : Moments {
  std::string tensor, dtype;
  RopePairAsymmetry rope_pair_asymmetry;
};
struct ProfileLayer {
  std::int64_t layer = 0;
  GainVector q, k;
  std::optional<double> mean, q_minus_k;
  const GainVector& role(char r) const { return r == 'q' ? q : k; }
};

struct Change {
  std::optional<std::int64_t> from, to;
  std::optional<double> delta;
};
struct SteepestChange {
  Change all, q, k;
};

struct RegressionVerdict {
  std::string baseline;
  std::optional<std::string> baseline_kind;
  std::optional<std::string> tolerance;
  std::string verdict;  // "pass" or "drift"
  std::int64_t exit_code = 0, checked = 0, drifted = 0;
  std::vector<Drift> drifts;
};

struct ProfileDocument {
  Provenance provenance;
  ProfileCheckpoint checkpoint;
  ProfilePreset preset;
  std::optional<ParameterSummary> parameters;  // absent before 2026-12-01
  TensorMatch tensors;
  GainLayout gains;
  ProfileOptionsRecord options;
  ProfileStatistics statistics;
  std::optional<Distribution> distribution;  // absent before 2026-12-03
  std::vector<HistogramBin> histogram;
  std::vector<Coordinate> negatives;
  std::optional<std::vector<NonFiniteCoordinate>> non_finite;  // absent in older profiles
  std::vector<ProfileLayer> layers;
  SteepestChange steepest_change;
  std::vector<Coordinate> top;
  std::optional<RegressionVerdict> regression;  // with --baseline

  // `doc` as checked and upgraded by documents::acceptDocument; FormatError naming `label` and the
  // JSON pointer of a member that does not convert.
  static ProfileDocument fromJson(const nlohmann::json& doc, const std::string& label);
  nlohmann::json toJson() const;
  // Every number of the document as toJson writes it, by its JSON pointer ("/statistics/mean",
  // "/statistics/counts/[1,2]/count", "/layers/3/q/max"): what a reference's figure names. A null
  // (a statistic of no finite gain) is no number.
  std::map<std::string, double> numbers() const;
};

// The statistics block, which a track document holds per checkpoint too.
void from_json(const nlohmann::json& j, ProfileStatistics& v);
void to_json(nlohmann::json& j, const ProfileStatistics& v);

}  // namespace omn::documents
