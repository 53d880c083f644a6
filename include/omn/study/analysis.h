// What a training study records per run and concludes per arm. No libtorch: every number here is
// computed from the runs' train.json and log.jsonl, so a merge of shards recomputes it exactly.
//
//   * A run's record: its cell (arm, learning rate, seed), its status and losses, steps-to-threshold
//     and its trajectory (train loss; held-out loss and per-layer health at every evaluation).
//   * Per arm (Wortsman et al. 2023, "Small-scale proxies for large-scale Transformer training
//     instabilities"): LR sensitivity = mean over the grid of min(L(lr), L0) − min over the grid of
//     L(lr), where L is the final held-out loss (a diverged run counts as L0, the loss at
//     initialisation); the largest stable LR; the best LR and its loss; the spread over seeds.
//   * The matched comparison: for arms that differ only in QK-norm, at each learning rate the paired
//     difference (on − off, same seed) with a Student-t interval over seeds.
#pragma once
#include <string>
#include <vector>

#include "omn/documents/study_document.h"
#include "omn/documents/train_document.h"
#include "omn/study/study_manifest.h"

namespace omn::study {

// The record of one finished (or diverged) run: `train` is its train.json, `log` its log.jsonl
// records, `dir` the run directory as the study document names it.
documents::StudyRun runRecord(const Cell& cell, const documents::TrainDocument& train, const std::vector<documents::TrainLogRecord>& log,
                              const std::string& dir, const std::string& train_json_sha256);

// The grid as the study document records it (arms, learning rates, seeds, cells).
documents::StudyGrid gridRecord(const StudyManifest& m);

// Per-arm summaries and the matched on/off comparison from the run records (any order), for the
// grid's arms and learning rates; `confidence` for the intervals over seeds.
std::vector<documents::StudyArm> analyseArms(const std::vector<documents::StudyRun>& runs, const documents::StudyGrid& grid, double confidence);
std::vector<documents::ArmComparison> compareArms(const std::vector<documents::StudyRun>& runs, const std::vector<documents::StudyArm>& arms,
                                                  double confidence);

// One CSV row per run.
std::string studyCsv(const documents::StudyDocument& study);

// The two-sided Student-t quantile: t such that P(T <= t) = p for `df` degrees of freedom.
double studentTQuantile(double p, int df);

// The study document (omn-audit/study@1) from `base` (provenance, manifest, grid, shard, confidence,
// ...) and the run records: runs in grid order, arms, comparison.
documents::StudyDocument assembleStudy(documents::StudyDocument base, std::vector<documents::StudyRun> runs);

}  // namespace omn::study
