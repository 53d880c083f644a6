#include "omn/documents/study_document.h"

#include "json_fields.h"

namespace omn::documents {

using fields::get;
using fields::putIfSet;
using fields::write;
using nlohmann::json;

void from_json(const json& j, TrainTrajectory& v) {
  get(j, "step", v.step);
  get(j, "loss", v.loss);
}
void to_json(json& j, const TrainTrajectory& v) { j = {{"step", v.step}, {"loss", write(v.loss)}}; }

void from_json(const json& j, EvalTrajectory& v) {
  get(j, "step", v.step);
  get(j, "heldout_loss", v.heldout_loss);
  for (std::size_t i = 0; i < kLayerMetrics.size(); ++i) get(j, kLayerMetrics[i].key, v.metrics[i]);
  get(j, "q_gain_mean", v.q_gain_mean);
  get(j, "k_gain_mean", v.k_gain_mean);
}
void to_json(json& j, const EvalTrajectory& v) {
  j = {{"step", v.step}, {"heldout_loss", write(v.heldout_loss)}, {"q_gain_mean", write(v.q_gain_mean)}, {"k_gain_mean", write(v.k_gain_mean)}};
  for (std::size_t i = 0; i < kLayerMetrics.size(); ++i) putIfSet(j, kLayerMetrics[i].key, v.metrics[i]);
}

void from_json(const json& j, RunTrajectory& v) {
  get(j, "train", v.train);
  get(j, "eval", v.eval);
}
void to_json(json& j, const RunTrajectory& v) { j = {{"train", v.train}, {"eval", v.eval}}; }

void from_json(const json& j, StudyRun& v) {
  from_json(j, static_cast<RunOutcome&>(v));
  get(j, "id", v.id);
  get(j, "index", v.index);
  get(j, "arm", v.arm);
  get(j, "qk_norm", v.qk_norm);
  get(j, "n_layers", v.n_layers);
  get(j, "optimizer", v.optimizer);
  get(j, "lr", v.lr);
  get(j, "muon_lr", v.muon_lr);
  get(j, "seed", v.seed);
  get(j, "dir", v.dir);
  get(j, "config_sha256", v.config_sha256);
  get(j, "train_json_sha256", v.train_json_sha256);
  get(j, "final_checkpoint_sha256", v.final_checkpoint_sha256);
  get(j, "parameters", v.parameters);
  get(j, "seconds", v.seconds);
  get(j, "trajectory", v.trajectory);
}
void to_json(json& j, const StudyRun& v) {
  j = static_cast<const RunOutcome&>(v);
  j.update({{"id", v.id},
            {"index", v.index},
            {"arm", v.arm},
            {"qk_norm", v.qk_norm},
            {"n_layers", v.n_layers},
            {"optimizer", v.optimizer},
            {"lr", v.lr},
            {"muon_lr", write(v.muon_lr)},
            {"seed", v.seed},
            {"dir", v.dir},
            {"config_sha256", v.config_sha256},
            {"train_json_sha256", v.train_json_sha256},
            {"final_checkpoint_sha256", write(v.final_checkpoint_sha256)},
            {"parameters", v.parameters},
            {"seconds", write(v.seconds)},
            {"trajectory", v.trajectory}});
}

void from_json(const json& j, SeriesSummary& v) {
  get(j, "n", v.n);
  get(j, "mean", v.mean);
  get(j, "sd", v.sd);
  get(j, "ci_low", v.ci_low);
  get(j, "ci_high", v.ci_high);
}
void to_json(json& j, const SeriesSummary& v) {
  j = {{"n", v.n}, {"mean", write(v.mean)}, {"sd", write(v.sd)}, {"ci_low", write(v.ci_low)}, {"ci_high", write(v.ci_high)}};
}

void from_json(const json& j, ArmLr& v) {
  get(j, "lr", v.lr);
  get(j, "runs", v.runs);
  get(j, "diverged", v.diverged);
  get(j, "final_heldout_loss", v.final_heldout_loss);
  get(j, "finished", v.finished);
  get(j, "range", v.range);
  get(j, "capped_mean", v.capped_mean);
}
void to_json(json& j, const ArmLr& v) {
  j = {{"lr", v.lr},
       {"runs", v.runs},
       {"diverged", v.diverged},
       {"final_heldout_loss", write(v.final_heldout_loss)},
       {"finished", v.finished},
       {"range", write(v.range)},
       {"capped_mean", write(v.capped_mean)}};
}

void from_json(const json& j, SeedSensitivity& v) {
  get(j, "seed", v.seed);
  get(j, "lr_sensitivity", v.lr_sensitivity);
}
void to_json(json& j, const SeedSensitivity& v) { j = {{"seed", v.seed}, {"lr_sensitivity", write(v.lr_sensitivity)}}; }

void from_json(const json& j, StudyArm& v) {
  get(j, "arm", v.arm);
  get(j, "qk_norm", v.qk_norm);
  get(j, "n_layers", v.n_layers);
  get(j, "optimizer", v.optimizer);
  get(j, "runs", v.runs);
  get(j, "diverged", v.diverged);
  get(j, "complete", v.complete);
  get(j, "initial_loss", v.initial_loss);
  get(j, "per_lr", v.per_lr);
  get(j, "lr_sensitivity", v.lr_sensitivity);
  v.has_lr_sensitivity_note = j.contains("lr_sensitivity_note");
  get(j, "lr_sensitivity_note", v.lr_sensitivity_note);
  get(j, "lr_sensitivity_by_seed", v.lr_sensitivity_by_seed);
  get(j, "largest_stable_lr", v.largest_stable_lr);
  get(j, "best_lr", v.best_lr);
  get(j, "best_loss", v.best_loss);
  get(j, "seed_spread", v.seed_spread);
}
void to_json(json& j, const StudyArm& v) {
  j = {{"arm", v.arm},
       {"qk_norm", v.qk_norm},
       {"n_layers", v.n_layers},
       {"optimizer", v.optimizer},
       {"runs", v.runs},
       {"diverged", v.diverged},
       {"complete", v.complete},
       {"initial_loss", write(v.initial_loss)},
       {"per_lr", write(v.per_lr)},
       {"lr_sensitivity", write(v.lr_sensitivity)},
       {"lr_sensitivity_by_seed", write(v.lr_sensitivity_by_seed)},
       {"largest_stable_lr", write(v.largest_stable_lr)},
       {"best_lr", write(v.best_lr)},
       {"best_loss", write(v.best_loss)},
       {"seed_spread", write(v.seed_spread)}};
  if (v.has_lr_sensitivity_note) j["lr_sensitivity_note"] = write(v.lr_sensitivity_note);
}

void from_json(const json& j, OnOff& v) {
  get(j, "on", v.on);
  get(j, "off", v.off);
}
void to_json(json& j, const OnOff& v) { j = {{"on", write(v.on)}, {"off", write(v.off)}}; }

void from_json(const json& j, OnOffCount& v) {
  get(j, "on", v.on);
  get(j, "off", v.off);
}
void to_json(json& j, const OnOffCount& v) { j = {{"on", v.on}, {"off", v.off}}; }

void from_json(const json& j, SeedPair& v) {
  get(j, "seed", v.seed);
  get(j, "on", v.on);
  get(j, "off", v.off);
  get(j, "difference", v.difference);
}
void to_json(json& j, const SeedPair& v) {
  j = {{"seed", v.seed}, {"on", write(v.on)}, {"off", write(v.off)}, {"difference", write(v.difference)}};
}

void from_json(const json& j, ComparedLr& v) {
  get(j, "lr", v.lr);
  get(j, "pairs", v.pairs);
  get(j, "diverged", v.diverged);
  get(j, "difference", v.difference);
}
void to_json(json& j, const ComparedLr& v) {
  j = {{"lr", v.lr}, {"pairs", write(v.pairs)}, {"diverged", v.diverged}, {"difference", v.difference}};
}

void from_json(const json& j, ArmComparison& v) {
  get(j, "on", v.on);
  get(j, "off", v.off);
  get(j, "confidence", v.confidence);
  get(j, "lr_sensitivity", v.lr_sensitivity);
  get(j, "largest_stable_lr", v.largest_stable_lr);
  get(j, "best_lr", v.best_lr);
  get(j, "best_loss", v.best_loss);
  get(j, "per_lr", v.per_lr);
}
void to_json(json& j, const ArmComparison& v) {
  j = {{"on", v.on},
       {"off", v.off},
       {"confidence", v.confidence},
       {"lr_sensitivity", v.lr_sensitivity},
       {"largest_stable_lr", v.largest_stable_lr},
       {"best_lr", v.best_lr},
       {"best_loss", v.best_loss},
       {"per_lr", write(v.per_lr)}};
}

void from_json(const json& j, StudyManifestRecord& v) {
  get(j, "path", v.path);
  get(j, "sha256", v.sha256);
  get(j, "verbatim", v.verbatim);
  get(j, "description", v.description);
}
void to_json(json& j, const StudyManifestRecord& v) {
  j = {{"path", v.path}, {"sha256", v.sha256}, {"verbatim", v.verbatim}, {"description", v.description}};
}

void from_json(const json& j, StudyCorpus& v) {
  get(j, "path", v.path);
  get(j, "sha256", v.sha256);
  get(j, "heldout_unigram_cross_entropy", v.heldout_unigram_cross_entropy);
}
void to_json(json& j, const StudyCorpus& v) {
  j = {{"path", v.path}, {"sha256", v.sha256}, {"heldout_unigram_cross_entropy", v.heldout_unigram_cross_entropy}};
}

void from_json(const json& j, StudyGrid& v) {
  get(j, "arms", v.arms);
  get(j, "lrs", v.lrs);
  get(j, "seeds", v.seeds);
  get(j, "cells", v.cells);
}
void to_json(json& j, const StudyGrid& v) { j = {{"arms", v.arms}, {"lrs", v.lrs}, {"seeds", v.seeds}, {"cells", v.cells}}; }

void from_json(const json& j, ShardOf& v) {
  get(j, "index", v.index);
  get(j, "count", v.count);
}
void to_json(json& j, const ShardOf& v) { j = {{"index", v.index}, {"count", v.count}}; }

void from_json(const json& j, StudyDocument& v) {
  get(j, "provenance", v.provenance);
  get(j, "manifest", v.manifest);
  get(j, "base_config", v.base_config);
  get(j, "corpus", v.corpus);
  get(j, "runs_dir", v.runs_dir);
  get(j, "grid", v.grid);
  get(j, "confidence", v.confidence);
  get(j, "shard", v.shard);
  get(j, "merged_from", v.merged_from);
  get(j, "runs", v.runs);
  get(j, "arms", v.arms);
  get(j, "comparison", v.comparison);
}

StudyDocument StudyDocument::fromJson(const json& doc, const std::string& label) { return fields::readAs<StudyDocument>(doc, label); }

json StudyDocument::toJson() const {
  json j = {{"schema", "omn-audit/study@1"},
            {"provenance", provenance},
            {"manifest", manifest},
            {"base_config", base_config},
            {"corpus", corpus},
            {"runs_dir", runs_dir},
            {"grid", grid},
            {"confidence", confidence},
            {"shard", write(shard)},
            {"runs", write(runs)},
            {"arms", write(arms)},
            {"comparison", write(comparison)}};
  putIfSet(j, "merged_from", merged_from);
  return j;
}

}  // namespace omn::documents
