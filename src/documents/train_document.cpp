#include "omn/documents/train_document.h"

#include <cmath>

#include "json_fields.h"

namespace omn::documents {

using fields::get;
using fields::putIfSet;
using fields::write;
using nlohmann::json;

namespace {
std::optional<double> finiteValue(double v) { return std::isfinite(v) ? std::optional<double>(v) : std::nullopt; }
}  // namespace

void from_json(const json& j, TrainConfigRecord& v) {
  get(j, "path", v.path);
  get(j, "sha256", v.sha256);
  get(j, "values", v.values);
}
void to_json(json& j, const TrainConfigRecord& v) { j = {{"path", v.path}, {"sha256", v.sha256}, {"values", v.values}}; }

void from_json(const json& j, TrainCorpus& v) {
  get(j, "path", v.path);
  get(j, "sha256", v.sha256);
  get(j, "tokenizer_sha256", v.tokenizer_sha256);
  get(j, "train_sha256", v.train_sha256);
  get(j, "heldout_sha256", v.heldout_sha256);
  get(j, "heldout_unigram_cross_entropy", v.heldout_unigram_cross_entropy);
}
void to_json(json& j, const TrainCorpus& v) {
  j = {{"path", v.path},
       {"sha256", v.sha256},
       {"tokenizer_sha256", v.tokenizer_sha256},
       {"train_sha256", v.train_sha256},
       {"heldout_sha256", v.heldout_sha256},
       {"heldout_unigram_cross_entropy", v.heldout_unigram_cross_entropy}};
}

void from_json(const json& j, TrainModel& v) {
  get(j, "config", v.config);
  get(j, "parameters", v.parameters);
  get(j, "qk_norm", v.qk_norm);
}
void to_json(json& j, const TrainModel& v) { j = {{"config", v.config}, {"parameters", v.parameters}, {"qk_norm", v.qk_norm}}; }

void from_json(const json& j, TrainOptimizer& v) {
  get(j, "kind", v.kind);
  get(j, "groups", v.groups);
}
void to_json(json& j, const TrainOptimizer& v) { j = {{"kind", v.kind}, {"groups", v.groups}}; }

void from_json(const json& j, TrainSchedule& v) {
  get(j, "warmup_steps", v.warmup_steps);
  get(j, "decay", v.decay);
  get(j, "min_lr_ratio", v.min_lr_ratio);
}
void to_json(json& j, const TrainSchedule& v) { j = {{"warmup_steps", v.warmup_steps}, {"decay", v.decay}, {"min_lr_ratio", v.min_lr_ratio}}; }

void from_json(const json& j, EvalLoss& v) {
  get(j, "step", v.step);
  get(j, "heldout_loss", v.heldout_loss);
}
void to_json(json& j, const EvalLoss& v) { j = {{"step", v.step}, {"heldout_loss", write(v.heldout_loss)}}; }

void from_json(const json& j, RunCheckpoint& v) {
  get(j, "step", v.step);
  get(j, "path", v.path);
  get(j, "sha256", v.sha256);
  get(j, "optimizer_sha256", v.optimizer_sha256);
  get(j, "log_bytes", v.log_bytes);
  get(j, "log_sha256", v.log_sha256);
}
void to_json(json& j, const RunCheckpoint& v) {
  j = {{"step", v.step}, {"path", v.path}, {"sha256", v.sha256}};
  putIfSet(j, "optimizer_sha256", v.optimizer_sha256);
  putIfSet(j, "log_bytes", v.log_bytes);
  putIfSet(j, "log_sha256", v.log_sha256);
}

void from_json(const json& j, FileDigest& v) {
  get(j, "path", v.path);
  get(j, "sha256", v.sha256);
}
void to_json(json& j, const FileDigest& v) { j = {{"path", v.path}, {"sha256", v.sha256}}; }

void from_json(const json& j, RunSegment& v) {
  get(j, "start_step", v.start_step);
  get(j, "end_step", v.end_step);
  get(j, "tokens", v.tokens);
  get(j, "end", v.end);
  get(j, "started_utc", v.started_utc);
  get(j, "finished_utc", v.finished_utc);
  get(j, "seconds", v.seconds);
  get(j, "threads", v.threads);
  get(j, "cpu", v.cpu);
  get(j, "openblas", v.openblas);
  get(j, "openblas_coretype", v.openblas_coretype);
  get(j, "bf16_products", v.bf16_products);
  get(j, "git_revision", v.git_revision);
  get(j, "model_code_fingerprint", v.model_code_fingerprint);
}
void to_json(json& j, const RunSegment& v) {
  j = {{"start_step", v.start_step},
       {"end_step", v.end_step},
       {"tokens", v.tokens},
       {"end", v.end},
       {"started_utc", write(v.started_utc)},
       {"finished_utc", write(v.finished_utc)},
       {"seconds", write(v.seconds)},
       {"threads", write(v.threads)},
       {"cpu", write(v.cpu)},
       {"openblas", write(v.openblas)},
       {"openblas_coretype", write(v.openblas_coretype)},
       {"bf16_products", write(v.bf16_products)},
       {"git_revision", write(v.git_revision)},
       {"model_code_fingerprint", write(v.model_code_fingerprint)}};
}

void from_json(const json& j, TrainTiming& v) {
  get(j, "seconds", v.seconds);
  get(j, "tokens_per_second", v.tokens_per_second);
  get(j, "tokens_trained", v.tokens_trained);
  get(j, "segments", v.segments);
  get(j, "unrecorded_steps", v.unrecorded_steps);
}
void to_json(json& j, const TrainTiming& v) {
  j = {{"seconds", v.seconds}, {"tokens_per_second", v.tokens_per_second}};
  putIfSet(j, "tokens_trained", v.tokens_trained);
  putIfSet(j, "segments", v.segments);
  putIfSet(j, "unrecorded_steps", v.unrecorded_steps);
}

void from_json(const json& j, TrainDocument& v) {
  from_json(j, static_cast<RunOutcome&>(v));
  get(j, "provenance", v.provenance);
  get(j, "name", v.name);
  get(j, "config", v.config);
  get(j, "corpus", v.corpus);
  get(j, "model", v.model);
  get(j, "optimizer", v.optimizer);
  get(j, "schedule", v.schedule);
  get(j, "threads", v.threads);
  get(j, "dtype", v.dtype);
  get(j, "tokens_seen", v.tokens_seen);
  get(j, "heldout_unigram_cross_entropy", v.heldout_unigram_cross_entropy);
  get(j, "evals", v.evals);
  get(j, "last_checkpoint_step", v.last_checkpoint_step);
  get(j, "checkpoints", v.checkpoints);
  get(j, "final_checkpoint", v.final_checkpoint);
  get(j, "log", v.log);
  get(j, "segments", v.segments);
  get(j, "timing", v.timing);
}

TrainDocument TrainDocument::fromJson(const json& doc, const std::string& label) { return fields::readAs<TrainDocument>(doc, label); }

void to_json(json& j, const TrainDocument& v) { j = v.toJson(); }

json TrainDocument::toJson() const {
  json j = static_cast<const RunOutcome&>(*this);
  j.update({{"schema", "omn-audit/train@1"},
            {"provenance", provenance},
            {"name", name},
            {"config", config},
            {"corpus", corpus},
            {"model", model},
            {"optimizer", optimizer},
            {"schedule", schedule},
            {"threads", threads},
            {"dtype", dtype},
            {"tokens_seen", tokens_seen},
            {"heldout_unigram_cross_entropy", heldout_unigram_cross_entropy},
            {"evals", write(evals)},
            {"last_checkpoint_step", write(last_checkpoint_step)},
            {"checkpoints", write(checkpoints)},
            {"log", log}});
  putIfSet(j, "final_checkpoint", final_checkpoint);
  putIfSet(j, "segments", segments);
  putIfSet(j, "timing", timing);
  return j;
}

double TrainDocument::clipGradNorm() const {
  const auto it = config.values.is_object() ? config.values.find("clip_grad_norm") : config.values.end();
  return it != config.values.end() && it->is_number() ? it->get<double>() : std::nan("");
}

// --- the log -------------------------------------------------------------------------------------

void from_json(const json& j, EvalLayer& v) {
  get(j, "layer", v.layer);
  readLayerMetrics(j, v.metrics);
  get(j, "q_gain", v.q_gain);
  get(j, "k_gain", v.k_gain);
}
void to_json(json& j, const EvalLayer& v) {
  j = {{"layer", v.layer}};
  for (const LayerMetric& row : trainedLayerMetrics()) j[row.key] = write(finiteValue(v.metrics.*row.value));
  putIfSet(j, "q_gain", v.q_gain);
  putIfSet(j, "k_gain", v.k_gain);
}

void from_json(const json& j, LogEvaluation& v) {
  get(j, "heldout_loss", v.heldout_loss);
  std::optional<std::int64_t> tokens;
  get(j, "heldout_tokens", tokens);
  v.heldout_tokens = tokens.value_or(0);
  std::optional<std::vector<EvalLayer>> layers;  // (a log from before per-layer metrics has none)
  get(j, "layers", layers);
  v.layers = layers.value_or(std::vector<EvalLayer>{});
}
void to_json(json& j, const LogEvaluation& v) {
  j = {{"heldout_loss", write(v.heldout_loss)}, {"heldout_tokens", v.heldout_tokens}, {"layers", write(v.layers)}};
}

void from_json(const json& j, TrainLogRecord& v) {
  get(j, "step", v.step);
  get(j, "tokens_seen", v.tokens_seen);
  v.trained = j.contains("train_loss");
  get(j, "train_loss", v.train_loss);
  get(j, "grad_norm", v.grad_norm);
  get(j, "lr", v.lr);
  get(j, "muon_lr", v.muon_lr);
  get(j, "tokens_per_second", v.tokens_per_second);
  get(j, "batch_offsets", v.batch_offsets);
  get(j, "eval", v.eval);
}

json TrainLogRecord::toJson() const {
  json j = {{"step", step}};
  putIfSet(j, "tokens_seen", tokens_seen);
  if (trained)
    j.update({{"train_loss", write(train_loss)},
              {"grad_norm", write(grad_norm)},
              {"lr", write(lr)},
              {"muon_lr", write(muon_lr)},
              {"tokens_per_second", write(tokens_per_second)},
              {"batch_offsets", write(batch_offsets)}});
  putIfSet(j, "eval", eval);
  return j;
}

TrainLogRecord TrainLogRecord::fromJson(const json& record, const std::string& label) { return fields::readAs<TrainLogRecord>(record, label); }

std::vector<TrainLogRecord> TrainLogRecord::fromJson(const std::vector<json>& records, const std::string& label) {
  std::vector<TrainLogRecord> out;
  out.reserve(records.size());
  for (std::size_t i = 0; i < records.size(); ++i) out.push_back(fromJson(records[i], label + " record " + std::to_string(i + 1)));
  return out;
}

}  // namespace omn::documents
