// A training study (omn-audit/study@1, docs/schema/study.schema.json; docs/study.md), typed: the grid,
// every run with its trajectories, each arm's learning-rate sensitivity and the arms compared by
// seed. The report and the figures read the struct. No libtorch.
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "omn/documents/layer_metrics.h"
#include "omn/documents/provenance.h"
#include "omn/documents/train_document.h"

namespace omn::documents {

using Series = std::vector<std::optional<double>>;  // one value per step; empty: not finite
using PerLayerSeries = std::vector<Series>;         // [evaluation][layer]

struct TrainTrajectory {
  std::vector<std::int64_t> step;
  Series loss;
};

struct EvalTrajectory {
  std::vector<std::int64_t> step;
  Series heldout_loss;
  // one per row of kLayerMetrics, in its order; empty: not recorded (a metric added after the study)
  std::array<std::optional<PerLayerSeries>, kLayerMetrics.size()> metrics;
  PerLayerSeries q_gain_mean, k_gain_mean;
  const std::optional<PerLayerSeries>& metric(const LayerMetric& row) const { return metrics[static_cast<std::size_t>(&row - kLayerMetrics.data())]; }
};

struct RunTrajectory {
  TrainTrajectory train;  // every logged step
  EvalTrajectory eval;    // every held-out evaluation
};

// One run of the grid: its cell, its files' digests, its outcome as its train.json records it
// (run_outcome.h), its wall-clock seconds and its trajectories.
struct StudyRun : RunOutcome {
  std::string id;
  std::int64_t index = 0;
  std::string arm;
  bool qk_norm = false;
  std::int64_t n_layers = 0;
  std::string optimizer;
  double lr = 0;
  std::optional<double> muon_lr;
  std::uint64_t seed = 0;
  std::string dir, config_sha256, train_json_sha256;
  std::optional<std::string> final_checkpoint_sha256;
  std::int64_t parameters = 0;
  std::optional<double> seconds;
  RunTrajectory trajectory;
};

struct SeriesSummary {
  std::int64_t n = 0;
  std::optional<double> mean, sd, ci_low, ci_high;
};

struct ArmLr {
  double lr = 0;
  std::vector<std::string> runs;
  std::int64_t diverged = 0;
  Series final_heldout_loss;
  SeriesSummary finished;
  std::optional<std::vector<std::optional<double>>> range;  // the seeds' [lowest, highest] finished loss
  std::optional<double> capped_mean;
};

struct SeedSensitivity {
  std::uint64_t seed = 0;
  std::optional<double> lr_sensitivity;
};

struct StudyArm {
  std::string arm;
  bool qk_norm = false;
  std::int64_t n_layers = 0;
  std::string optimizer;
  std::int64_t runs = 0, diverged = 0;
  bool complete = false;
  std::optional<double> initial_loss;
  std::vector<ArmLr> per_lr;
  std::optional<double> lr_sensitivity;
  std::optional<std::string> lr_sensitivity_note;  // why lr_sensitivity is empty
  bool has_lr_sensitivity_note = false;             // recorded since 2026-11-29
  std::vector<SeedSensitivity> lr_sensitivity_by_seed;
  std::optional<double> largest_stable_lr, best_lr, best_loss, seed_spread;
};

struct OnOff {
  std::optional<double> on, off;
};
struct OnOffCount {
  std::int64_t on = 0, off = 0;
};
struct SeedPair {
  std::uint64_t seed = 0;
  std::optional<double> on, off, difference;
};
struct ComparedLr {
  double lr = 0;
  std::vector<SeedPair> pairs;
  OnOffCount diverged;
  SeriesSummary difference;
};
struct ArmComparison {
  std::string on, off;
  double confidence = 0;
  OnOff lr_sensitivity, largest_stable_lr, best_lr, best_loss;
  std::vector<ComparedLr> per_lr;
};

struct StudyManifestRecord {
  std::string path, sha256, verbatim, description;
};
struct StudyCorpus {
  std::string path, sha256;
  double heldout_unigram_cross_entropy = 0;
};
struct StudyGrid {
  std::vector<std::string> arms;
  std::vector<double> lrs;
  std::vector<std::uint64_t> seeds;
  std::int64_t cells = 0;
};
struct ShardOf {
  std::int64_t index = 0, count = 0;
};

struct StudyDocument {
  Provenance provenance;
  StudyManifestRecord manifest;
  FileDigest base_config;
  StudyCorpus corpus;
  std::string runs_dir;
  StudyGrid grid;
  double confidence = 0;
  std::optional<ShardOf> shard;
  std::optional<nlohmann::json> merged_from;  // the shards merged into it, as merge records them
  std::vector<StudyRun> runs;
  std::vector<StudyArm> arms;
  std::vector<ArmComparison> comparison;

  static StudyDocument fromJson(const nlohmann::json& doc, const std::string& label);
  nlohmann::json toJson() const;
};

void from_json(const nlohmann::json& j, ShardOf& v);
void to_json(nlohmann::json& j, const ShardOf& v);
void from_json(const nlohmann::json& j, StudyRun& v);
void to_json(nlohmann::json& j, const StudyRun& v);
void from_json(const nlohmann::json& j, StudyArm& v);
void to_json(nlohmann::json& j, const StudyArm& v);
void from_json(const nlohmann::json& j, ArmComparison& v);
void to_json(nlohmann::json& j, const ArmComparison& v);
void from_json(const nlohmann::json& j, StudyGrid& v);
void to_json(nlohmann::json& j, const StudyGrid& v);

}  // namespace omn::documents
