#include "omn/train/run_history.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "omn/output/table.h"

namespace omn::train {
using nlohmann::json;

namespace {
std::optional<double> number(const json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}
json optionalOrNull(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }
}  // namespace

json toJson(const CheckpointEntry& e) {
  return {{"step", e.step}, {"path", e.path}, {"sha256", e.sha256}, {"optimizer_sha256", e.optimizer_sha256},
          {"log_bytes", e.log_bytes}, {"log_sha256", e.log_sha256}};
}

CheckpointEntry checkpointEntry(const json& j) {
  return {j.at("step").get<std::int64_t>(), j.at("path").get<std::string>(), j.at("sha256").get<std::string>(),
          j.at("optimizer_sha256").get<std::string>(), j.at("log_bytes").get<std::uint64_t>(), j.at("log_sha256").get<std::string>()};
}

RunHistory::RunHistory(std::vector<double> loss_thresholds)
    : thresholds_(std::move(loss_thresholds)),
      reached_(thresholds_.size()),
      initial_loss_(std::numeric_limits<double>::quiet_NaN()),
      initial_train_loss_(std::numeric_limits<double>::quiet_NaN()),
      best_heldout_(std::numeric_limits<double>::infinity()) {}

void RunHistory::take(const json& r) {
  const std::int64_t step = r.at("step").get<std::int64_t>();
  if (!first_logged_) first_logged_ = step;
  last_logged_ = step;
  if (step == 1)
    if (const auto l = number(r, "train_loss")) initial_train_loss_ = *l;
  const auto e = r.find("eval");
  if (e == r.end()) return;
  const EvalPoint p{step, number(*e, "heldout_loss")};
  if (step == 0 && p.heldout_loss) initial_loss_ = *p.heldout_loss;
  evals_.push_back(p);
  last_eval_ = p;
  if (!p.heldout_loss) return;
  best_heldout_ = std::min(best_heldout_, *p.heldout_loss);
  for (std::size_t i = 0; i < reached_.size(); ++i)
    if (!reached_[i] && *p.heldout_loss <= thresholds_[i]) reached_[i] = step;
}

void RunHistory::restore(const std::vector<json>& log, std::string text, const json& checkpoints) {
  for (const json& r : log) take(r);
  log_text_ = std::move(text);
  for (const json& c : checkpoints) checkpoints_.push_back(checkpointEntry(c));
}

void RunHistory::logged(const json& record, const std::string& line) {
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

json RunHistory::thresholdsJson() const {
  json out = json::array();
  for (std::size_t i = 0; i < reached_.size(); ++i)
    out.push_back({{"threshold", thresholds_[i]}, {"step", reached_[i] ? json(*reached_[i]) : json(nullptr)}});
  return out;
}

json RunHistory::evalsJson() const {
  json out = json::array();
  for (const EvalPoint& e : evals_) out.push_back({{"step", e.step}, {"heldout_loss", optionalOrNull(e.heldout_loss)}});
  return out;
}

json RunHistory::checkpointsJson() const {
  json out = json::array();
  for (const CheckpointEntry& e : checkpoints_) out.push_back(toJson(e));
  return out;
}

}  // namespace omn::train
