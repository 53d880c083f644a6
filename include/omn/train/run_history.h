// What a training run knows about its own past, between two steps: the held-out loss at step 0 (L0,
// the divergence reference), the first batch's loss, every evaluation's held-out loss, the best one,
// the step each loss threshold was first reached, the checkpoints written, and the log's bytes (each
// checkpoint's digest covers them). Kept as the record's typed values (documents/train_document.h):
// train.json is written from them. A resume rebuilds it from the verified log and the record's
// checkpoints, so a resumed run's record equals an uninterrupted one's. No libtorch (unit-tested in
// the core: test_run_history).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "omn/documents/train_document.h"

namespace omn::train {

using EvalPoint = documents::EvalLoss;  // {step, heldout_loss}; empty: not finite (null in the log)
// One entry of train.json's /checkpoints: the weights and optimizer state of a step, with the log's
// length and digest when they were written (what a resume verifies and continues).
using CheckpointEntry = documents::RunCheckpoint;

class RunHistory {
 public:
  explicit RunHistory(std::vector<double> loss_thresholds);

  // A resume: the log's records as restoreLog returned them (`text`, their bytes) and the record's
  // checkpoints. L0 comes from step 0's evaluation, the first batch's loss from step 1's record.
  void restore(const std::vector<documents::TrainLogRecord>& log, std::string text, std::vector<CheckpointEntry> checkpoints);

  // One record appended to the log (`line`: the bytes written), read as restore reads the log: its
  // evaluation noted, L0 taken from step 0's, the first batch's loss from step 1's.
  void logged(const documents::TrainLogRecord& record, const std::string& line);
  void checkpointed(CheckpointEntry e) { checkpoints_.push_back(std::move(e)); }

  // Divergence rule 2 (docs/train.md), for an evaluation at `step`: past the warm-up, a held-out
  // loss that is not finite or above L0. Empty when the run has not diverged.
  std::string heldoutDivergence(const std::optional<double>& heldout_loss, std::int64_t step, std::int64_t warmup_steps) const;

  double initialLoss() const { return initial_loss_; }  // NaN before step 0's evaluation
  double initialTrainLoss() const { return initial_train_loss_; }
  double bestHeldout() const { return best_heldout_; }   // +inf before a finite one
  const std::optional<EvalPoint>& lastEval() const { return last_eval_; }
  const std::vector<EvalPoint>& evals() const { return evals_; }  // train.json's /evals
  const std::vector<CheckpointEntry>& checkpoints() const { return checkpoints_; }  // its /checkpoints
  std::vector<documents::ThresholdStep> thresholds() const;  // its /steps_to_threshold
  const std::string& logText() const { return log_text_; }
  std::optional<std::int64_t> lastLoggedStep() const { return last_logged_; }
  bool logStartsAtStep0() const { return first_logged_ == std::int64_t{0}; }

 private:
  void take(const documents::TrainLogRecord& record);

  std::vector<double> thresholds_;
  std::vector<std::optional<std::int64_t>> reached_;
  std::vector<EvalPoint> evals_;
  std::optional<EvalPoint> last_eval_;
  std::vector<CheckpointEntry> checkpoints_;
  double initial_loss_, initial_train_loss_, best_heldout_;
  std::string log_text_;
  std::optional<std::int64_t> first_logged_, last_logged_;
};

}  // namespace omn::train
