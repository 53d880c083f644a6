// What the trainer records at an evaluation, typed: the held-out loss and each layer's health -- the
// per-layer metrics of the one metric type (documents/layer_metrics.h, which --mechanism records
// too) and, with QK-norm, the gains' statistics. The log record, the study's trajectories and the
// study's figures loop over the metrics the trainer records (kLayerMetrics: the table's rows marked
// `trained`); adding one is documents/layer_metrics.h's procedure. No libtorch.
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "omn/documents/layer_metrics.h"

namespace omn::train {

struct GainStats {
  double mean = 0, std = 0, min = 0, max = 0;  // std: population (unbiased = false)
};

struct LayerHealth : documents::LayerMetrics {
  std::optional<GainStats> q_gain, k_gain;  // with QK-norm only
};

struct Evaluation {
  std::optional<double> heldout_loss;  // mean NLL per scored token; empty when not finite
  std::int64_t heldout_tokens = 0;
  std::vector<LayerHealth> layers;
};

using documents::AcrossLayers;
using documents::LayerMetric;
inline constexpr auto kLayerMetrics = documents::trainedLayerMetrics();

// The log record's "eval": {heldout_loss, heldout_tokens, layers: [{layer, <each metric>, q_gain?,
// k_gain?}]}; a non-finite number is null.
nlohmann::json toJson(const Evaluation& e);

}  // namespace omn::train
