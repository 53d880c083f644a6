// What the trainer records at an evaluation, typed: the held-out loss and each layer's health -- the
// per-layer metrics of the one metric type (documents/layer_metrics.h, which --mechanism records
// too) and, with QK-norm, the gains' statistics. It is the log record's evaluation
// (documents::LogEvaluation, written by its one to_json). The log record, the study's trajectories
// and the study's figures loop over the metrics the trainer records (kLayerMetrics: the table's rows
// marked `trained`); adding one is documents/layer_metrics.h's procedure. No libtorch.
#pragma once
#include "omn/documents/layer_metrics.h"
#include "omn/documents/train_document.h"

namespace omn::train {

using Evaluation = documents::LogEvaluation;  // {heldout_loss, heldout_tokens, layers}
using LayerHealth = documents::EvalLayer;     // {layer, metrics, q_gain?, k_gain?}; a gain's std: population

using documents::AcrossLayers;
using documents::LayerMetric;
inline constexpr auto kLayerMetrics = documents::trainedLayerMetrics();

}  // namespace omn::train
