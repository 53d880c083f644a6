// One training run's record (omn-audit/train@1, train.json; docs/schema/train.schema.json,
// docs/train.md) and its log's records (log.jsonl), typed: the trainer builds them, the report and
// the figures read them, a study repeats the run's outcome.
// The blocks the record copies from elsewhere -- the training config's values, the model's
// config, the optimizer's parameter groups -- stay as written.
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
#include "omn/documents/run_outcome.h"

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

// One process that trained the run (train.json's /segments, docs/train.md "Segments"): the first
// start and every --resume. Steps start_step + 1 to end_step were trained in it (the first segment
// also evaluated step 0); a segment stopped after its last checkpoint covers steps the next one
// trains again (its start_step below this end_step), and both count, as both were spent.
struct RunSegment {
  std::int64_t start_step = 0, end_step = 0;
  std::int64_t tokens = 0;  // tokens trained in it: (end_step - start_step) x batch_size x seq_len
  // "started" (the record before step 0's checkpoint), "checkpoint", "interrupted" (SIGINT or
  // SIGTERM), "finished", "diverged": when its record was last written; "unrecorded" for the one
  // segment a resume makes of a record written before segments were recorded (every field but the
  // steps and tokens null: that record cannot say how many processes trained it, nor where)
  std::string end = "started";
  std::optional<std::string> started_utc, finished_utc;
  std::optional<double> seconds;  // wall-clock, from the process's start of the run to its last record
  std::optional<int> threads;
  // as the provenance block records them: /host/cpu, /libraries/openblas (OpenBLAS's build string,
  // which names the kernels in use), /git_revision and /model_code_fingerprint; OPENBLAS_CORETYPE as
  // the process ran (null: unset); the bf16 product kernel chosen for the process (model/products.h)
  std::optional<std::string> cpu, openblas, openblas_coretype, bf16_products, git_revision, model_code_fingerprint;

  bool recorded() const { return end != "unrecorded"; }
};

struct TrainTiming {
  double seconds = 0, tokens_per_second = 0;
  std::optional<std::int64_t> tokens_trained, segments, unrecorded_steps;
};

// train.json: the run's outcome (run_outcome.h, which a study's run repeats) and what it ran.
struct TrainDocument : RunOutcome {
  Provenance provenance;
  std::string name;
  TrainConfigRecord config;
  TrainCorpus corpus;
  TrainModel model;
  TrainOptimizer optimizer;
  TrainSchedule schedule;
  std::int64_t threads = 0;
  std::string dtype;
  std::int64_t tokens_seen = 0;
  double heldout_unigram_cross_entropy = 0;
  std::vector<EvalLoss> evals;
  std::optional<std::int64_t> last_checkpoint_step;
  std::vector<RunCheckpoint> checkpoints;
  std::optional<FileDigest> final_checkpoint;
  std::string log;                        // the log's file name, beside train.json
  std::optional<std::vector<RunSegment>> segments;  // absent in records written before they were recorded
  std::optional<TrainTiming> timing;

  static TrainDocument fromJson(const nlohmann::json& doc, const std::string& label);
  nlohmann::json toJson() const;
  // The training config's clip_grad_norm (NaN: none recorded).
  double clipGradNorm() const;
};

// The whole record (toJson): never its RunOutcome part alone, which a conversion to its base would write.
void from_json(const nlohmann::json& j, TrainDocument& v);
void to_json(nlohmann::json& j, const TrainDocument& v);
void from_json(const nlohmann::json& j, TrainCorpus& v);
void to_json(nlohmann::json& j, const TrainCorpus& v);
void from_json(const nlohmann::json& j, EvalLoss& v);
void to_json(nlohmann::json& j, const EvalLoss& v);
void from_json(const nlohmann::json& j, RunCheckpoint& v);
void to_json(nlohmann::json& j, const RunCheckpoint& v);
void from_json(const nlohmann::json& j, FileDigest& v);  // shared with the study document
void to_json(nlohmann::json& j, const FileDigest& v);
void from_json(const nlohmann::json& j, RunSegment& v);
void to_json(nlohmann::json& j, const RunSegment& v);
void from_json(const nlohmann::json& j, TrainTiming& v);
void to_json(nlohmann::json& j, const TrainTiming& v);

// One layer at a held-out evaluation: the metrics the trainer records (kLayerMetrics' `trained`
// rows; the others NaN) and, with QK-norm, the Q and K gains (std: population).
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

// One line of log.jsonl: a logged step (its loss, gradient norm, learning rates, throughput and the
// batch's offsets) and/or an evaluation; step 0's record is its evaluation only.
struct TrainLogRecord {
  std::int64_t step = 0;
  std::optional<std::int64_t> tokens_seen;
  bool trained = false;  // a training step's record (train_loss present, null when not finite)
  std::optional<double> train_loss, grad_norm, lr, muon_lr, tokens_per_second;
  std::optional<std::vector<std::uint64_t>> batch_offsets;
  std::optional<LogEvaluation> eval;

  // FormatError naming `label` and the pointer of a member that does not convert.
  static TrainLogRecord fromJson(const nlohmann::json& record, const std::string& label);
  static std::vector<TrainLogRecord> fromJson(const std::vector<nlohmann::json>& records, const std::string& label);
  nlohmann::json toJson() const;  // the line as the trainer appends it (compact, one per record)
};

void from_json(const nlohmann::json& j, EvalLayer& v);
void to_json(nlohmann::json& j, const EvalLayer& v);
void from_json(const nlohmann::json& j, LogEvaluation& v);
void to_json(nlohmann::json& j, const LogEvaluation& v);

}  // namespace omn::documents
