// One training run's record (omn-audit/train@1, train.json; docs/schema/train.schema.json,
// docs/train.md) and its log's records (log.jsonl), typed as the report and the figures read them.
// The blocks the record copies from elsewhere -- the training config's values, the model's
// config, the optimizer's parameter groups, the processes that trained it -- stay as written.
// What a resume reads back is train/run_records.h. No libtorch.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "omn/documents/checkpoint_record.h"
#include "omn/documents/layer_metrics.h"
#include "omn/documents/provenance.h"

namespace omn::documents {

struct TrainConfigRecord {
  std::string path, sha256;
  nlohmann::json values;  // the training config as read (docs/train.md)
};

struct TrainCorpus {
  std::string path, sha256, tokenizer_sha256, train_sha256, heldout_sha256;
  double heldout_unigram_cross_entropy = 0;
};

struct TrainModel {
  nlohmann::json config;  // the model's config (model/config.h) as written
  std::int64_t parameters = 0;
  bool qk_norm = false;
};

struct TrainOptimizer {
  std::string kind;       // "muon+adamw" or "adamw"
  nlohmann::json groups;  // which parameter each optimizer updates
};

struct TrainSchedule {
  std::int64_t warmup_steps = 0;
  std::string decay;
  double min_lr_ratio = 0;
};

struct Divergence {
  std::int64_t step = 0;
  std::string reason;
};

// As the record writes it, compact JSON ({"reason":...,"step":...}); "null" for none.
std::string jsonText(const std::optional<Divergence>& divergence);

struct ThresholdStep {
  double threshold = 0;
  std::optional<std::int64_t> step;  // empty: never reached
};

struct EvalLoss {
  std::int64_t step = 0;
  std::optional<double> heldout_loss;
};

struct RunCheckpoint {
  std::int64_t step = 0;
  std::string path, sha256;
  std::optional<std::string> optimizer_sha256;
  std::optional<std::int64_t> log_bytes;
  std::optional<std::string> log_sha256;
};

struct FileDigest {
  std::string path, sha256;
};

struct TrainTiming {
  double seconds = 0, tokens_per_second = 0;
  std::optional<std::int64_t> tokens_trained, segments, unrecorded_steps;
};

struct TrainDocument {
  Provenance provenance;
  std::string name, status;  // status: "running", "finished" or "diverged"
  TrainConfigRecord config;
  TrainCorpus corpus;
  TrainModel model;
  TrainOptimizer optimizer;
  TrainSchedule schedule;
  std::int64_t threads = 0;
  std::string dtype;
  std::int64_t steps = 0, steps_done = 0, tokens_seen = 0;
  std::optional<double> initial_loss, initial_train_loss, final_train_loss, final_heldout_loss, best_heldout_loss;
  bool has_initial_train_loss = false;  // written by every run since 2026-12-02 (null or not)
  double heldout_unigram_cross_entropy = 0;
  bool diverged = false;
  std::optional<Divergence> divergence;
  std::vector<ThresholdStep> steps_to_threshold;
  std::vector<EvalLoss> evals;
  std::optional<std::int64_t> last_checkpoint_step;
  std::vector<RunCheckpoint> checkpoints;
  std::optional<FileDigest> final_checkpoint;
  std::string log;                        // the log's file name, beside train.json
  std::optional<nlohmann::json> segments;  // the processes that trained the run (docs/train.md)
  std::optional<TrainTiming> timing;

  static TrainDocument fromJson(const nlohmann::json& doc, const std::string& label);
  nlohmann::json toJson() const;
  // The training config's clip_grad_norm (NaN: none recorded).
  double clipGradNorm() const;
};

// Shared with the study document, whose runs record the same.
void from_json(const nlohmann::json& j, Divergence& v);
void to_json(nlohmann::json& j, const Divergence& v);
void from_json(const nlohmann::json& j, ThresholdStep& v);
void to_json(nlohmann::json& j, const ThresholdStep& v);
void from_json(const nlohmann::json& j, FileDigest& v);
void to_json(nlohmann::json& j, const FileDigest& v);

// One layer at a held-out evaluation: the metrics and, with QK-norm, the Q and K gains.
struct EvalLayer {
  std::int64_t layer = 0;
  LayerMetrics metrics;
  std::optional<RoleSummary> q_gain, k_gain;
};

struct LogEvaluation {
  std::optional<double> heldout_loss;
  std::int64_t heldout_tokens = 0;
  std::vector<EvalLayer> layers;
};

// One line of log.jsonl: a logged step (its loss, gradient norm, learning rates) and/or an evaluation.
struct TrainLogRecord {
  std::int64_t step = 0;
  std::optional<double> train_loss, grad_norm, lr, muon_lr;
  std::optional<LogEvaluation> eval;

  // FormatError naming `label` and the pointer of a member that does not convert.
  static TrainLogRecord fromJson(const nlohmann::json& record, const std::string& label);
  static std::vector<TrainLogRecord> fromJson(const std::vector<nlohmann::json>& records, const std::string& label);
};

}  // namespace omn::documents
