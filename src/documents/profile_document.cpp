#include "omn/documents/profile_document.h"

#include "json_fields.h"
#include "omn/documents/json_text.h"

namespace omn::documents {

using fields::get;
using fields::putIfSet;
using fields::write;
using nlohmann::json;

namespace {

void readMomentsMembers(const json& j, Moments& v) {
  get(j, "count", v.count);
  get(j, "count_non_finite", v.count_non_finite);
  get(j, "mean", v.mean);
  get(j, "std", v.std);
  get(j, "min", v.min);
  get(j, "max", v.max);
}
json momentsMembersJson(const Moments& v) {
  json j = {{"count", v.count}, {"mean", write(v.mean)}, {"std", write(v.std)}, {"min", write(v.min)}, {"max", write(v.max)}};
  putIfSet(j, "count_non_finite", v.count_non_finite);
  return j;
}

}  // namespace

void from_json(const json& j, ProfileCheckpoint& v) {
  get(j, "path", v.path);
  get(j, "sha256", v.sha256);
  get(j, "sha256_verified", v.sha256_verified);
  get(j, "verified", v.verified);
  get(j, "digests", v.digests);
  get(j, "format", v.format);
  get(j, "size_bytes", v.size_bytes);
  get(j, "shards", v.shards);
  get(j, "tensor_count", v.tensor_count);
  get(j, "state_key", v.state_key);
  get(j, "shared_storage", v.shared_storage);
  get(j, "metadata", v.metadata);
  get(j, "folder", v.folder);
}
void to_json(json& j, const ProfileCheckpoint& v) {
  j = {{"path", v.path},         {"sha256", write(v.sha256)}, {"sha256_verified", v.sha256_verified}, {"format", v.format},
       {"size_bytes", v.size_bytes}, {"shards", write(v.shards)}, {"tensor_count", v.tensor_count},    {"state_key", v.state_key},
       {"shared_storage", v.shared_storage}, {"metadata", v.metadata}};
  if (v.verified) {  // the two were added together: --digests is recorded, null or not, beside what was verified
    j["verified"] = *v.verified;
    j["digests"] = write(v.digests);
  }
  putIfSet(j, "folder", v.folder);
}

std::vector<std::pair<std::string, std::string>> ProfileCheckpoint::metadataMembers() const { return jsonMembers(metadata); }

void from_json(const json& j, ProfilePreset& v) {
  get(j, "name", v.name);
  get(j, "source", v.source);
  get(j, "detected", v.detected);
}
void to_json(json& j, const ProfilePreset& v) { j = {{"name", v.name}, {"source", v.source}, {"detected", v.detected}}; }

void from_json(const json& j, ParameterSummary& v) {
  get(j, "count", v.count);
  get(j, "head_identical_to_embedding", v.head_identical_to_embedding);
}
void to_json(json& j, const ParameterSummary& v) {
  j = {{"count", v.count}, {"head_identical_to_embedding", write(v.head_identical_to_embedding)}};
}

void from_json(const json& j, TensorMatch& v) {
  get(j, "matched", v.matched);
  get(j, "unmatched", v.unmatched);
  get(j, "missing", v.missing);
}
void to_json(json& j, const TensorMatch& v) { j = {{"matched", v.matched}, {"unmatched", v.unmatched}, {"missing", v.missing}}; }

void from_json(const json& j, GainLayout& v) {
  get(j, "preset", v.preset);
  get(j, "parametrisation", v.parametrisation);
  get(j, "effective", v.effective);
  get(j, "layout", v.layout);
  get(j, "head_dim", v.head_dim);
  get(j, "rope_style", v.rope_style);
  get(j, "n_layers", v.n_layers);
  get(j, "vectors", v.vectors);
}
void to_json(json& j, const GainLayout& v) {
  j = {{"preset", v.preset},         {"parametrisation", v.parametrisation}, {"effective", v.effective}, {"layout", v.layout},
       {"head_dim", v.head_dim},     {"rope_style", v.rope_style},           {"n_layers", v.n_layers},   {"vectors", v.vectors}};
}

void from_json(const json& j, ProfileOptionsRecord& v) {
  get(j, "threshold", v.threshold);
  get(j, "hist_edges", v.hist_edges);
  get(j, "pivot", v.pivot);
  get(j, "top_k", v.top_k);
  get(j, "count_ranges", v.count_ranges);
}
void to_json(json& j, const ProfileOptionsRecord& v) {
  j = {{"threshold", v.threshold}, {"hist_edges", v.hist_edges}, {"pivot", v.pivot}, {"top_k", v.top_k}};
  putIfSet(j, "count_ranges", v.count_ranges);
}

void from_json(const json& j, CountRangeRecord& v) {
  get(j, "lo", v.lo);
  get(j, "hi", v.hi);
  get(j, "lo_closed", v.lo_closed);
  get(j, "hi_closed", v.hi_closed);
  get(j, "count", v.count);
}
void to_json(json& j, const CountRangeRecord& v) {
  j = {{"lo", write(v.lo)}, {"hi", write(v.hi)}, {"lo_closed", v.lo_closed}, {"hi_closed", v.hi_closed}, {"count", v.count}};
}

void from_json(const json& j, ProfileStatistics& v) {
  readMomentsMembers(j, v);
  get(j, "share_above_threshold", v.share_above_threshold);
  get(j, "count_above_threshold", v.count_above_threshold);
  get(j, "count_negative", v.count_negative);
  get(j, "counts", v.counts);
}
void to_json(json& j, const ProfileStatistics& v) {
  j = momentsMembersJson(v);
  j["share_above_threshold"] = write(v.share_above_threshold);
  j["count_above_threshold"] = v.count_above_threshold;
  j["count_negative"] = v.count_negative;
  j["counts"] = write(v.counts);
}

void from_json(const json& j, Bin& v) {
  get(j, "lo", v.lo);
  get(j, "hi", v.hi);
  get(j, "count", v.count);
}
void to_json(json& j, const Bin& v) { j = {{"lo", v.lo}, {"hi", v.hi}, {"count", v.count}}; }

void from_json(const json& j, Distribution& v) {
  get(j, "rule", v.rule);
  get(j, "bins", v.bins);
}
void to_json(json& j, const Distribution& v) { j = {{"rule", v.rule}, {"bins", write(v.bins)}}; }

void from_json(const json& j, HistogramBin& v) {
  get(j, "label", v.label);
  get(j, "lo", v.lo);
  get(j, "hi", v.hi);
  get(j, "count", v.count);
}
void to_json(json& j, const HistogramBin& v) { j = {{"label", v.label}, {"lo", write(v.lo)}, {"hi", write(v.hi)}, {"count", v.count}}; }

void from_json(const json& j, Coordinate& v) {
  get(j, "layer", v.layer);
  get(j, "role", v.role);
  get(j, "index", v.index);
  get(j, "value", v.value);
}
void to_json(json& j, const Coordinate& v) { j = {{"layer", v.layer}, {"role", v.role}, {"index", v.index}, {"value", v.value}}; }

void from_json(const json& j, NonFiniteCoordinate& v) {
  get(j, "layer", v.layer);
  get(j, "role", v.role);
  get(j, "index", v.index);
  get(j, "value", v.value);
}
void to_json(json& j, const NonFiniteCoordinate& v) { j = {{"layer", v.layer}, {"role", v.role}, {"index", v.index}, {"value", v.value}}; }

void from_json(const json& j, RopePairAsymmetry& v) {
  get(j, "pairs", v.pairs);
  get(j, "mean_abs_diff", v.mean_abs_diff);
  get(j, "max_abs_diff", v.max_abs_diff);
}
void to_json(json& j, const RopePairAsymmetry& v) {
  j = {{"pairs", v.pairs}, {"mean_abs_diff", v.mean_abs_diff}, {"max_abs_diff", v.max_abs_diff}};
}

void from_json(const json& j, GainVector& v) {
  readMomentsMembers(j, v);
  get(j, "tensor", v.tensor);
  get(j, "dtype", v.dtype);
  get(j, "rope_pair_asymmetry", v.rope_pair_asymmetry);
}
void to_json(json& j, const GainVector& v) {
  j = momentsMembersJson(v);
  j["tensor"] = v.tensor;
  j["dtype"] = v.dtype;
  j["rope_pair_asymmetry"] = v.rope_pair_asymmetry;
}

void from_json(const json& j, ProfileLayer& v) {
  get(j, "layer", v.layer);
  get(j, "q", v.q);
  get(j, "k", v.k);
  get(j, "mean", v.mean);
  get(j, "q_minus_k", v.q_minus_k);
}
void to_json(json& j, const ProfileLayer& v) {
  j = {{"layer", v.layer}, {"q", v.q}, {"k", v.k}, {"mean", write(v.mean)}, {"q_minus_k", write(v.q_minus_k)}};
}

void from_json(const json& j, Change& v) {
  get(j, "from", v.from);
  get(j, "to", v.to);
  get(j, "delta", v.delta);
}
void to_json(json& j, const Change& v) { j = {{"from", write(v.from)}, {"to", write(v.to)}, {"delta", write(v.delta)}}; }

void from_json(const json& j, SteepestChange& v) {
  get(j, "all", v.all);
  get(j, "q", v.q);
  get(j, "k", v.k);
}
void to_json(json& j, const SteepestChange& v) { j = {{"all", v.all}, {"q", v.q}, {"k", v.k}}; }

void from_json(const json& j, RegressionVerdict& v) {
  get(j, "baseline", v.baseline);
  get(j, "baseline_kind", v.baseline_kind);
  get(j, "tolerance", v.tolerance);
  get(j, "verdict", v.verdict);
  get(j, "exit_code", v.exit_code);
  get(j, "checked", v.checked);
  get(j, "drifted", v.drifted);
  get(j, "drifts", v.drifts);
}
void to_json(json& j, const RegressionVerdict& v) {
  j = {{"baseline", v.baseline}, {"tolerance", write(v.tolerance)}, {"verdict", v.verdict}, {"exit_code", v.exit_code},
       {"checked", v.checked},   {"drifted", v.drifted},             {"drifts", write(v.drifts)}};
  putIfSet(j, "baseline_kind", v.baseline_kind);
}

void from_json(const json& j, ProfileDocument& v) {
  get(j, "provenance", v.provenance);
  get(j, "checkpoint", v.checkpoint);
  get(j, "preset", v.preset);
  get(j, "parameters", v.parameters);
  get(j, "tensors", v.tensors);
  get(j, "gains", v.gains);
  get(j, "options", v.options);
  get(j, "statistics", v.statistics);
  get(j, "distribution", v.distribution);
  get(j, "histogram", v.histogram);
  get(j, "negatives", v.negatives);
  get(j, "non_finite", v.non_finite);
  get(j, "layers", v.layers);
  get(j, "steepest_change", v.steepest_change);
  get(j, "top", v.top);
  get(j, "regression", v.regression);
}

ProfileDocument ProfileDocument::fromJson(const json& doc, const std::string& label) { return fields::readAs<ProfileDocument>(doc, label); }

json ProfileDocument::toJson() const {
  json j = {{"schema", "omn-audit/profile@1"},
            {"provenance", provenance},
            {"checkpoint", checkpoint},
            {"preset", preset},
            {"tensors", tensors},
            {"gains", gains},
            {"options", options},
            {"statistics", statistics},
            {"histogram", write(histogram)},
            {"negatives", write(negatives)},
            {"layers", write(layers)},
            {"steepest_change", steepest_change},
            {"top", write(top)}};
  putIfSet(j, "parameters", parameters);
  putIfSet(j, "distribution", distribution);
  putIfSet(j, "non_finite", non_finite);
  putIfSet(j, "regression", regression);
  return j;
}

std::map<std::string, double> ProfileDocument::numbers() const {
  std::map<std::string, double> out;
  const json flat = toJson().flatten();  // keys are JSON pointers, each token escaped
  for (auto it = flat.begin(); it != flat.end(); ++it)
    if (it.value().is_number()) out.emplace(it.key(), it.value().get<double>());
  return out;
}

}  // namespace omn::documents
