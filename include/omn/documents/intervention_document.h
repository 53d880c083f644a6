// A sweep result (omn-audit/intervention@1, docs/schema/intervention.schema.json; docs/manifest.md),
// typed: the manifest as read, what was evaluated (shared with eval@1: eval_document.h), the control
// before and after, and every condition with its op, what it touched and restored, its scores and
// its paired comparison with the control; --mechanism's per-layer tables in the metrics of
// layer_metrics.h. The report and the figures read the struct. No libtorch.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "omn/documents/eval_document.h"
#include "omn/documents/layer_metrics.h"
#include "omn/documents/provenance.h"
#include "omn/documents/study_document.h"

namespace omn::documents {

struct SweepManifest {
  std::string path, sha256;
  nlohmann::json verbatim;            // the manifest as parsed
  std::optional<std::string> bytes;  // the file exactly as read (its SHA-256 is sha256)
  // The manifest's text as the sweep read it (empty: a result from before its bytes were recorded),
  // and its parsed form as indented JSON.
  std::optional<std::string> asRead() const;
  std::string parsedText() const;
};

// One layer of --mechanism's table.
struct MechanismLayer {
  std::int64_t layer = 0;
  LayerMetrics metrics;
};
using MechanismTable = std::optional<std::vector<MechanismLayer>>;  // empty: --mechanism not asked

struct KlQuantiles {
  std::optional<double> p50, p90, p99, max;
};

// --kl, per sequence against the control.
struct DivergenceSums {
  std::vector<std::optional<double>> kl_sum;
  std::vector<std::int64_t> top1_agree;
  std::vector<std::optional<double>> dp_correct_sum;
  KlQuantiles kl_quantiles;
  std::optional<std::int64_t> non_finite_tokens;
};

struct ControlPass {
  Scores result;
  std::string gain_sha256;
  double seconds = 0;
  MechanismTable mechanism;
  std::optional<DivergenceSums> divergence;
};

struct ControlRecord {
  ControlPass open, close;
  bool reproduced_bitwise = false;
  std::optional<double> max_abs_nll_difference;  // empty: infinite (a sequence's sum finite in one pass only)
};

struct Interval {
  std::optional<double> estimate, low, high;
};

struct SimultaneousIntervals {
  double confidence = 0;
  Interval delta_nll_per_token, ppl_ratio;
};

struct DivergenceSummary {
  std::optional<double> kl_per_token, top1_agreement, delta_p_correct;
  KlQuantiles kl_quantiles;
  std::string method;
};

struct VsControl {
  Interval delta_nll_per_token, ppl_ratio;
  std::string method;
  std::int64_t resamples = 0;
  double confidence = 0;
  std::uint64_t seed = 0;
  std::optional<double> p_value;
  std::optional<bool> below_noise_floor;
  std::optional<std::optional<double>> p_value_adjusted;  // absent without multiplicity; null: Holm in a shard
  std::optional<SimultaneousIntervals> simultaneous;
  std::optional<DivergenceSummary> divergence;
};

struct AppliedVector {
  std::int64_t layer = 0;
  std::string role;
  bool bypassed = false;
  std::int64_t coordinates = 0, changed = 0;
  std::optional<double> mean, min, max;
};
struct AppliedGains {
  std::string sha256;
  std::vector<AppliedVector> vectors;
};

struct RestoreRecord {
  std::string sha256, expected;
  bool ok = false;
};

struct ReportedValue {
  double perplexity = 0;
  std::optional<double> ratio_to_reported_control;
};

// A condition's op as the manifest gave it (docs/manifest.md): one step, or a composite of steps.
struct ConditionOp {
  nlohmann::json recorded;  // as written
  // read from it: the op's name ("composite" for one), its target ("" for a composite), whether it
  // names its layers and whether that is every layer, its value, whether it picks coordinates
  std::string name, target;
  bool has_layers = false, all_layers = false, picks_coordinates = false;
  std::optional<double> value;
};

// What a sweep's condition was, what it changed and the restore after it: the part of its document
// its pass makes (intervene::PassRecord is one too), before the result and the statistics.
struct ConditionIdentity {
  std::string id, label;
  ConditionOp op;
  std::string manifest_pointer;
  std::vector<std::string> touched;
  AppliedGains applied;
  std::int64_t start_layer = 0;
  RestoreRecord restore;
};

struct SweepCondition : ConditionIdentity {
  double seconds = 0;
  MechanismTable mechanism;
  Scores result;
  std::optional<DivergenceSums> divergence;
  std::optional<ReportedValue> reported;
  VsControl vs_control;
};

struct GainDigests {
  std::string checkpoint_sha256, working_sha256;
};
struct CacheRecord {
  bool enabled = false;
  std::optional<std::int64_t> layer, bytes;
};
struct ReportedSource {
  std::string source;
  std::optional<double> control_perplexity;
};
struct Multiplicity {
  std::string method;
  std::int64_t family_size = 0;
  double simultaneous_confidence = 0;
  bool complete = false;
};
struct Confirms {
  std::string path, dtype;
};
struct NoiseFloor {
  double nats_per_token = 0;
  std::string basis;
};

struct InterventionDocument {
  Provenance provenance;
  SweepManifest manifest;
  EvalCheckpoint checkpoint;
  EvalModel model;
  TokensRecord tokens;
  SelectionRecord selection;
  GainDigests gains;
  CacheRecord cache;
  bool mechanism = false;
  std::optional<ReportedSource> reported;
  std::optional<Multiplicity> multiplicity;
  std::optional<Confirms> confirms;
  std::optional<NoiseFloor> noise_floor;
  std::optional<bool> kl;
  std::optional<ShardOf> shard;  // this shard of a --shard run
  std::optional<nlohmann::json> merged_from;
  ControlRecord control;
  std::vector<SweepCondition> conditions;

  static InterventionDocument fromJson(const nlohmann::json& doc, const std::string& label);
  nlohmann::json toJson() const;
};

// nlohmann's conversions of the parts the sweep's journal shares with the document (found by ADL).
void from_json(const nlohmann::json& j, MechanismLayer& v);
void to_json(nlohmann::json& j, const MechanismLayer& v);
void from_json(const nlohmann::json& j, DivergenceSums& v);
void to_json(nlohmann::json& j, const DivergenceSums& v);
void from_json(const nlohmann::json& j, ControlPass& v);
void to_json(nlohmann::json& j, const ControlPass& v);
void from_json(const nlohmann::json& j, AppliedVector& v);
void to_json(nlohmann::json& j, const AppliedVector& v);
void from_json(const nlohmann::json& j, AppliedGains& v);
void to_json(nlohmann::json& j, const AppliedGains& v);
void from_json(const nlohmann::json& j, RestoreRecord& v);
void to_json(nlohmann::json& j, const RestoreRecord& v);
void from_json(const nlohmann::json& j, ConditionOp& v);
void to_json(nlohmann::json& j, const ConditionOp& v);
void from_json(const nlohmann::json& j, SweepCondition& v);
void to_json(nlohmann::json& j, const SweepCondition& v);

}  // namespace omn::documents
