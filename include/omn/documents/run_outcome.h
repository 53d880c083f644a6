// What a training run came to, one definition for the two documents that record it: train.json
// (omn-audit/train@1, train_document.h) writes it of its own run, and each run of a study
// (omn-audit/study@1, study_document.h) repeats it from the run's train.json. Its status, the steps
// asked for and done, the losses (L0, the first batch's, the last, the held-out ones), whether and
// why it diverged, and the step each loss threshold was first reached. No libtorch.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace omn::documents {

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

struct RunOutcome {
  std::string status;  // "running", "finished" or "diverged"
  std::int64_t steps = 0, steps_done = 0;
  // L0 (the held-out loss at step 0), the first batch's, the last step's, the last and the best
  // held-out losses; empty: not finite (or not reached)
  std::optional<double> initial_loss, initial_train_loss, final_train_loss, final_heldout_loss, best_heldout_loss;
  bool has_initial_train_loss = false;  // recorded since 2026-12-02 (null or not)
  bool diverged = false;
  std::optional<Divergence> divergence;
  std::vector<ThresholdStep> steps_to_threshold;
};

// nlohmann's conversions (found by ADL); a RunOutcome's members are written beside its document's own.
void from_json(const nlohmann::json& j, Divergence& v);
void to_json(nlohmann::json& j, const Divergence& v);
void from_json(const nlohmann::json& j, ThresholdStep& v);
void to_json(nlohmann::json& j, const ThresholdStep& v);
void from_json(const nlohmann::json& j, RunOutcome& v);
void to_json(nlohmann::json& j, const RunOutcome& v);

}  // namespace omn::documents
