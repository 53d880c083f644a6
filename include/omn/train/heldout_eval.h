// The trainer's evaluation at a step: the held-out loss over the config's eval rows (the positions
// eval scores) and the health of each layer -- the largest attention logit, the attention entropy
// and the input kurtosis (the LayerMechanism intervene --mechanism records), and with QK-norm the
// statistics of the Q and K gains. Typed here; JSON only in the log record (toJson).
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "omn/eval/evaluator.h"
#include "omn/train/parameters.h"

namespace omn::train {

struct GainStats {
  double mean = 0, std = 0, min = 0, max = 0;  // std: population (unbiased = false)
};

struct LayerHealth {
  double max_attention_logit = 0, attention_entropy = 0, input_kurtosis = 0;
  std::optional<GainStats> q_gain, k_gain;  // with QK-norm only
};

struct Evaluation {
  std::optional<double> heldout_loss;  // mean NLL per scored token; empty when not finite
  std::int64_t heldout_tokens = 0;
  std::vector<LayerHealth> layers;
};

Evaluation evaluateHeldout(const eval::Evaluator& ev, const TrainableModel& m);

// The log record's "eval": {heldout_loss, heldout_tokens, layers: [{layer, max_attention_logit,
// attention_entropy, input_kurtosis, q_gain?, k_gain?}]}; a non-finite number is null.
nlohmann::json toJson(const Evaluation& e);

}  // namespace omn::train
