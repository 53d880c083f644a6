#include "omn/documents/intervention_document.h"

#include "json_fields.h"
#include "omn/documents/json_text.h"

namespace omn::documents {

using fields::get;
using fields::putIfSet;
using fields::write;
using nlohmann::json;

void from_json(const json& j, SweepManifest& v) {
  get(j, "path", v.path);
  get(j, "sha256", v.sha256);
  get(j, "verbatim", v.verbatim);
  get(j, "bytes", v.bytes);
}
void to_json(json& j, const SweepManifest& v) {
  j = {{"path", v.path}, {"sha256", v.sha256}, {"verbatim", v.verbatim}};
  putIfSet(j, "bytes", v.bytes);
}

std::optional<std::string> SweepManifest::asRead() const {
  if (bytes && !bytes->empty()) return bytes;
  if (verbatim.is_string()) return verbatim.get<std::string>();
  return std::nullopt;
}

std::string SweepManifest::parsedText() const { return jsonText(verbatim, 2); }

void from_json(const json& j, MechanismLayer& v) {
  get(j, "layer", v.layer);
  readLayerMetrics(j, v.metrics);
}
void to_json(json& j, const MechanismLayer& v) {
  j = {{"layer", v.layer}};
  writeLayerMetrics(j, v.metrics);
}

void from_json(const json& j, KlQuantiles& v) {
  get(j, "p50", v.p50);
  get(j, "p90", v.p90);
  get(j, "p99", v.p99);
  get(j, "max", v.max);
}
void to_json(json& j, const KlQuantiles& v) { j = {{"p50", write(v.p50)}, {"p90", write(v.p90)}, {"p99", write(v.p99)}, {"max", write(v.max)}}; }

void from_json(const json& j, DivergenceSums& v) {
  get(j, "kl_sum", v.kl_sum);
  get(j, "top1_agree", v.top1_agree);
  get(j, "dp_correct_sum", v.dp_correct_sum);
  get(j, "kl_quantiles", v.kl_quantiles);
  get(j, "non_finite_tokens", v.non_finite_tokens);
}
void to_json(json& j, const DivergenceSums& v) {
  j = {{"kl_sum", write(v.kl_sum)}, {"top1_agree", v.top1_agree}, {"dp_correct_sum", write(v.dp_correct_sum)}, {"kl_quantiles", v.kl_quantiles}};
  putIfSet(j, "non_finite_tokens", v.non_finite_tokens);
}

void from_json(const json& j, ControlPass& v) {
  get(j, "result", v.result);
  get(j, "gain_sha256", v.gain_sha256);
  get(j, "seconds", v.seconds);
  get(j, "mechanism", v.mechanism);
  get(j, "divergence", v.divergence);
}
void to_json(json& j, const ControlPass& v) {
  j = {{"result", v.result}, {"gain_sha256", v.gain_sha256}, {"seconds", v.seconds}, {"mechanism", write(v.mechanism)}};
  putIfSet(j, "divergence", v.divergence);
}

void from_json(const json& j, ControlRecord& v) {
  get(j, "open", v.open);
  get(j, "close", v.close);
  get(j, "reproduced_bitwise", v.reproduced_bitwise);
  get(j, "max_abs_nll_difference", v.max_abs_nll_difference);
}
void to_json(json& j, const ControlRecord& v) {
  j = {{"open", v.open}, {"close", v.close}, {"reproduced_bitwise", v.reproduced_bitwise}, {"max_abs_nll_difference", write(v.max_abs_nll_difference)}};
}

void from_json(const json& j, Interval& v) {
  get(j, "estimate", v.estimate);
  get(j, "low", v.low);
  get(j, "high", v.high);
}
void to_json(json& j, const Interval& v) { j = {{"estimate", write(v.estimate)}, {"low", write(v.low)}, {"high", write(v.high)}}; }

void from_json(const json& j, SimultaneousIntervals& v) {
  get(j, "confidence", v.confidence);
  get(j, "delta_nll_per_token", v.delta_nll_per_token);
  get(j, "ppl_ratio", v.ppl_ratio);
}
void to_json(json& j, const SimultaneousIntervals& v) {
  j = {{"confidence", v.confidence}, {"delta_nll_per_token", v.delta_nll_per_token}, {"ppl_ratio", v.ppl_ratio}};
}

void from_json(const json& j, DivergenceSummary& v) {
  get(j, "kl_per_token", v.kl_per_token);
  get(j, "top1_agreement", v.top1_agreement);
  get(j, "delta_p_correct", v.delta_p_correct);
  get(j, "kl_quantiles", v.kl_quantiles);
  get(j, "method", v.method);
}
void to_json(json& j, const DivergenceSummary& v) {
  j = {{"kl_per_token", write(v.kl_per_token)},
       {"top1_agreement", write(v.top1_agreement)},
       {"delta_p_correct", write(v.delta_p_correct)},
       {"kl_quantiles", v.kl_quantiles},
       {"method", v.method}};
}

void from_json(const json& j, VsControl& v) {
  get(j, "delta_nll_per_token", v.delta_nll_per_token);
  get(j, "ppl_ratio", v.ppl_ratio);
  get(j, "method", v.method);
  get(j, "resamples", v.resamples);
  get(j, "confidence", v.confidence);
  get(j, "seed", v.seed);
  get(j, "p_value", v.p_value);
  get(j, "below_noise_floor", v.below_noise_floor);
  get(j, "p_value_adjusted", v.p_value_adjusted);
  get(j, "simultaneous", v.simultaneous);
  get(j, "divergence", v.divergence);
}
void to_json(json& j, const VsControl& v) {
  j = {{"delta_nll_per_token", v.delta_nll_per_token},
       {"ppl_ratio", v.ppl_ratio},
       {"method", v.method},
       {"resamples", v.resamples},
       {"confidence", v.confidence},
       {"seed", v.seed}};
  putIfSet(j, "p_value", v.p_value);
  putIfSet(j, "below_noise_floor", v.below_noise_floor);
  putIfSet(j, "p_value_adjusted", v.p_value_adjusted);
  putIfSet(j, "simultaneous", v.simultaneous);
  putIfSet(j, "divergence", v.divergence);
}

void from_json(const json& j, AppliedVector& v) {
  get(j, "layer", v.layer);
  get(j, "role", v.role);
  get(j, "bypassed", v.bypassed);
  get(j, "coordinates", v.coordinates);
  get(j, "changed", v.changed);
  get(j, "mean", v.mean);
  get(j, "min", v.min);
  get(j, "max", v.max);
}
void to_json(json& j, const AppliedVector& v) {
  j = {{"layer", v.layer},   {"role", v.role},           {"bypassed", v.bypassed}, {"coordinates", v.coordinates},
       {"changed", v.changed}, {"mean", write(v.mean)}, {"min", write(v.min)},    {"max", write(v.max)}};
}

void from_json(const json& j, AppliedGains& v) {
  get(j, "sha256", v.sha256);
  get(j, "vectors", v.vectors);
}
void to_json(json& j, const AppliedGains& v) { j = {{"sha256", v.sha256}, {"vectors", write(v.vectors)}}; }

void from_json(const json& j, RestoreRecord& v) {
  get(j, "sha256", v.sha256);
  get(j, "expected", v.expected);
  get(j, "ok", v.ok);
}
void to_json(json& j, const RestoreRecord& v) { j = {{"sha256", v.sha256}, {"expected", v.expected}, {"ok", v.ok}}; }

void from_json(const json& j, ReportedValue& v) {
  get(j, "perplexity", v.perplexity);
  get(j, "ratio_to_reported_control", v.ratio_to_reported_control);
}
void to_json(json& j, const ReportedValue& v) {
  j = {{"perplexity", v.perplexity}, {"ratio_to_reported_control", write(v.ratio_to_reported_control)}};
}

void from_json(const json& j, ConditionOp& v) {
  if (!j.is_object()) throw fields::FieldError("", std::string("expected an object, got ") + j.type_name());
  v.recorded = j;
  std::optional<std::string> name, target;
  get(j, "op", name);
  get(j, "target", target);
  v.name = name.value_or("composite");
  v.target = target.value_or("");
  const auto layers = j.find("layers");
  v.has_layers = layers != j.end();
  v.all_layers = v.has_layers && *layers == "all";
  v.picks_coordinates = j.contains("coordinates");
  const auto value = j.find("value");
  if (value != j.end() && value->is_number()) v.value = value->get<double>();
}
void to_json(json& j, const ConditionOp& v) { j = v.recorded; }

void from_json(const json& j, SweepCondition& v) {
  get(j, "id", v.id);
  get(j, "label", v.label);
  get(j, "op", v.op);
  get(j, "manifest_pointer", v.manifest_pointer);
  get(j, "touched", v.touched);
  get(j, "applied", v.applied);
  get(j, "start_layer", v.start_layer);
  get(j, "restore", v.restore);
  get(j, "seconds", v.seconds);
  get(j, "mechanism", v.mechanism);
  get(j, "result", v.result);
  get(j, "divergence", v.divergence);
  get(j, "reported", v.reported);
  get(j, "vs_control", v.vs_control);
}
void to_json(json& j, const SweepCondition& v) {
  j = {{"id", v.id},
       {"label", v.label},
       {"op", v.op},
       {"manifest_pointer", v.manifest_pointer},
       {"touched", v.touched},
       {"applied", v.applied},
       {"start_layer", v.start_layer},
       {"restore", v.restore},
       {"seconds", v.seconds},
       {"mechanism", write(v.mechanism)},
       {"result", v.result},
       {"vs_control", v.vs_control}};
  putIfSet(j, "divergence", v.divergence);
  putIfSet(j, "reported", v.reported);
}

void from_json(const json& j, GainDigests& v) {
  get(j, "checkpoint_sha256", v.checkpoint_sha256);
  get(j, "working_sha256", v.working_sha256);
}
void to_json(json& j, const GainDigests& v) { j = {{"checkpoint_sha256", v.checkpoint_sha256}, {"working_sha256", v.working_sha256}}; }

void from_json(const json& j, CacheRecord& v) {
  get(j, "enabled", v.enabled);
  get(j, "layer", v.layer);
  get(j, "bytes", v.bytes);
}
void to_json(json& j, const CacheRecord& v) { j = {{"enabled", v.enabled}, {"layer", write(v.layer)}, {"bytes", write(v.bytes)}}; }

void from_json(const json& j, ReportedSource& v) {
  get(j, "source", v.source);
  get(j, "control_perplexity", v.control_perplexity);
}
void to_json(json& j, const ReportedSource& v) { j = {{"source", v.source}, {"control_perplexity", write(v.control_perplexity)}}; }

void from_json(const json& j, Multiplicity& v) {
  get(j, "method", v.method);
  get(j, "family_size", v.family_size);
  get(j, "simultaneous_confidence", v.simultaneous_confidence);
  get(j, "complete", v.complete);
}
void to_json(json& j, const Multiplicity& v) {
  j = {{"method", v.method}, {"family_size", v.family_size}, {"simultaneous_confidence", v.simultaneous_confidence}, {"complete", v.complete}};
}

void from_json(const json& j, Confirms& v) {
  get(j, "path", v.path);
  get(j, "dtype", v.dtype);
}
void to_json(json& j, const Confirms& v) { j = {{"path", v.path}, {"dtype", v.dtype}}; }

void from_json(const json& j, NoiseFloor& v) {
  get(j, "nats_per_token", v.nats_per_token);
  get(j, "basis", v.basis);
}
void to_json(json& j, const NoiseFloor& v) { j = {{"nats_per_token", v.nats_per_token}, {"basis", v.basis}}; }

void from_json(const json& j, InterventionDocument& v) {
  get(j, "provenance", v.provenance);
  get(j, "manifest", v.manifest);
  get(j, "checkpoint", v.checkpoint);
  get(j, "model", v.model);
  get(j, "tokens", v.tokens);
  get(j, "selection", v.selection);
  get(j, "gains", v.gains);
  get(j, "cache", v.cache);
  get(j, "mechanism", v.mechanism);
  get(j, "reported", v.reported);
  get(j, "multiplicity", v.multiplicity);
  get(j, "confirms", v.confirms);
  get(j, "noise_floor", v.noise_floor);
  get(j, "kl", v.kl);
  get(j, "shard", v.shard);
  get(j, "merged_from", v.merged_from);
  get(j, "control", v.control);
  get(j, "conditions", v.conditions);
}

InterventionDocument InterventionDocument::fromJson(const json& doc, const std::string& label) {
  return fields::readAs<InterventionDocument>(doc, label);
}

json InterventionDocument::toJson() const {
  json j = {{"schema", "omn-audit/intervention@1"},
            {"provenance", provenance},
            {"manifest", manifest},
            {"checkpoint", checkpoint},
            {"model", model},
            {"tokens", tokens},
            {"selection", selection},
            {"gains", gains},
            {"cache", cache},
            {"mechanism", mechanism},
            {"shard", write(shard)},
            {"control", control},
            {"conditions", write(conditions)}};
  putIfSet(j, "reported", reported);
  putIfSet(j, "multiplicity", multiplicity);
  putIfSet(j, "confirms", confirms);
  putIfSet(j, "noise_floor", noise_floor);
  putIfSet(j, "kl", kl);
  putIfSet(j, "merged_from", merged_from);
  return j;
}

}  // namespace omn::documents
