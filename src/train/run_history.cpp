#include "omn/train/run_history.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "omn/output/table.h"

namespace omn::train {

RunHistory::RunHistory(std::vector<double> loss_thresholds)
    : thresholds_(std::move(loss_thresholds)),
      reached_(thresholds_.size()),
      initial_loss_(std::numeric_limits<double>::quiet_NaN()),
      initial_train_loss_(std::numeric_limits<double>::quiet_NaN()),
      best_heldout_(std::numeric_limits<double>::infinity()) {}

void RunHistory::take(const documents::TrainLogRecord& r) {
  if (!first_logged_) first_logged_ = r.step;
  last_logged_ = r.step;
  if (r.step == 1 && r.train_loss) initial_train_loss_ = *r.train_loss;
  if (!r.eval) return;
  const EvalPoint p{r.step, r.eval->heldout_loss};
  if (r.step == 0 && p.heldout_loss) initial_loss_ = *p.heldout_loss;
  evals_.push_back(p);
  last_eval_ = p;
  if (!p.heldout_loss) return;
  best_heldout_ = std::min(best_heldout_, *p.heldout_loss);
  for (std::size_t i = 0; i < reached_.size(); ++i)
    if (!reached_[i] && *p.heldout_loss <= thresholds_[i]) reached_[i] = r.step;
}

void RunHistory::restore(const std::vector<documents::TrainLogRecord>& log, std::string text, std::vector<CheckpointEntry> checkpoints) {
  for (const documents::TrainLogRecord& r : log) take(r);
  log_text_ = std::move(text);
  checkpoints_ = std::move(checkpoints);
}

void RunHistory::logged(const documents::TrainLogRecord& record, const std::string& line) {
  take(record);
  log_text_ += line;
}

std::string RunHistory::heldoutDivergence(const std::optional<double>& h, std::int64_t step, std::int64_t warmup_steps) const {
  if (step <= warmup_steps) return "";
  if (!h) return "non-finite held-out loss after warm-up";
  if (*h > initial_loss_)
    return "held-out loss " + output::fixed(*h, 4) + " above L0 " + output::fixed(initial_loss_, 4) +
           " (the held-out loss at step 0) after warm-up";
  return "";
}

std::vector<documents::ThresholdStep> RunHistory::thresholds() const {
  std::vector<documents::ThresholdStep> out;
  for (std::size_t i = 0; i < reached_.size(); ++i) out.push_back({thresholds_[i], reached_[i]});
  return out;
}

}  // namespace omn::train
