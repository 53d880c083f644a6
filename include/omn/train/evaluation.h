// What the trainer records at an evaluation, typed: the held-out loss and each layer's health. The
// per-layer metrics are rows of one table (kLayerMetrics): the log record, the study's trajectories
// and the study's figures are all made from it, and tests check that the schemas and docs list every
// row. Adding a metric: a field in LayerHealth, its row here, its computation (an observer of the
// forward pass, eval/mechanism.h, filled in by train::evaluateHeldout), and its entry in
// docs/schema/study.schema.json and docs/train.md -- test_run_history fails until those exist.
// No libtorch.
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

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

// How a study figure turns a metric's per-layer values into one value per evaluation step.
enum class AcrossLayers { Max, Mean };

struct LayerMetric {
  const char* key;                // in the log's eval.layers[] and the study's trajectory.eval
  double LayerHealth::*value;
  AcrossLayers across_layers;
  const char* figure;             // the study figure's file
  const char* title;              // its title
  const char* axis;               // its y-axis label
  bool log_axis;                  // a log y-axis where the values span orders of magnitude
};

inline constexpr std::array<LayerMetric, 3> kLayerMetrics{{
    {"max_attention_logit", &LayerHealth::max_attention_logit, AcrossLayers::Max, "study-max-logit.svg",
     "Largest attention logit over training", "max pre-softmax logit (all layers)", true},
    {"attention_entropy", &LayerHealth::attention_entropy, AcrossLayers::Mean, "study-entropy.svg",
     "Attention entropy over training", "mean attention entropy (nats)", false},
    {"input_kurtosis", &LayerHealth::input_kurtosis, AcrossLayers::Max, "study-kurtosis.svg",
     "Activation kurtosis over training", "max kurtosis of layer inputs", true},
}};

// The log record's "eval": {heldout_loss, heldout_tokens, layers: [{layer, <each metric>, q_gain?,
// k_gain?}]}; a non-finite number is null.
nlohmann::json toJson(const Evaluation& e);

}  // namespace omn::train
