// The per-layer statistics of a forward pass, one type and one name each wherever they appear: what
// `--mechanism` records per condition of a sweep (the intervention document's mechanism tables),
// what the trainer records at each held-out evaluation (the log's eval.layers[], the study's
// trajectory.eval) and what the figures of both draw. Measured by one observer of the forward pass
// (eval::MechanismObserver, whose LayerMechanism is this type).
// A new metric: a field here and its row in kLayerMetrics; its computation in eval/mechanism.cpp
// (MechanismObserver::observe); its key in docs/schema/intervention.schema.json ($defs/mechanism)
// and docs/manifest.md, and for a metric the trainer records also in docs/schema/study.schema.json
// (trajectory.eval) and docs/train.md. tests/unit/test_documents.cpp (LayerMetrics.*) fails until
// the schemas and docs have it, tests/unit/test_documents_mechanism.cpp until a pass measures it.
// The sweep's mechanism tables, the log, the study's trajectories, a pass's batches and every
// figure loop over the table. No libtorch.
#pragma once
#include <array>
#include <cmath>

#include <nlohmann/json.hpp>

namespace omn::documents {

// One layer's statistics; a value that is not finite is NaN here and null in a document.
struct LayerMetrics {
  double max_attention_logit = 0;  // the largest pre-softmax attention logit
  double attention_entropy = 0;    // nats: the mean over heads and queries of the attention distribution's entropy
  double q_rms = 0, k_rms = 0;     // RMS of Q and K entering RoPE (after the gain)
  double input_kurtosis = 0;       // of the block's input: mean over tokens of m4 / m2² over the features
};

// How values combine: a study figure's per-layer values into one per evaluation step, a pass's
// batches into the pass's value (the largest, or the mean weighted by each batch's rows).
enum class AcrossLayers { Max, Mean };
using AcrossBatches = AcrossLayers;

struct LayerMetric {
  const char* key;             // in every document and the log
  double LayerMetrics::*value;
  AcrossBatches across_batches;
  bool trained;  // recorded by the trainer at each evaluation (the log, the study's trajectories)
  // the training study's figure over the steps (nullptr: none)
  AcrossLayers across_layers;
  const char* study_figure;
  const char* study_title;
  const char* study_axis;
  bool log_axis;  // a log y-axis where the values span orders of magnitude
  // the sweep's figure per condition and layer (nullptr: none)
  const char* sweep_figure;
  const char* sweep_title;
  const char* unit;  // of a difference from the control ("" for a ratio)
  bool ratio;        // the change from the control as log2(condition / control), else the difference
  const char* over;  // what one value summarises, for the caption
  int sweep_place;   // where the figure comes among the sweep's (the report's order: the entropy, then the logit)
};

inline constexpr std::array<LayerMetric, 5> kLayerMetrics{{
    {"max_attention_logit", &LayerMetrics::max_attention_logit, AcrossBatches::Max, true, AcrossLayers::Max, "study-max-logit.svg",
     "Largest attention logit over training", "max pre-softmax logit (all layers)", true, "sweep-mechanism-max-logit.svg",
     "Largest pre-softmax attention logit per layer", "", true, "Each value is the largest logit over all the scored sequences", 1},
    {"attention_entropy", &LayerMetrics::attention_entropy, AcrossBatches::Mean, true, AcrossLayers::Mean, "study-entropy.svg", "Attention entropy over training",
     "mean attention entropy (nats)", false, "sweep-mechanism-entropy.svg", "Mean attention entropy per layer", "nats", false,
     "Each value is the mean over the scored sequences", 0},
    {"q_rms", &LayerMetrics::q_rms, AcrossBatches::Mean, false, AcrossLayers::Mean, nullptr, nullptr, nullptr, false, nullptr, nullptr, "", true, nullptr, 0},
    {"k_rms", &LayerMetrics::k_rms, AcrossBatches::Mean, false, AcrossLayers::Mean, nullptr, nullptr, nullptr, false, nullptr, nullptr, "", true, nullptr, 0},
    {"input_kurtosis", &LayerMetrics::input_kurtosis, AcrossBatches::Mean, true, AcrossLayers::Max, "study-kurtosis.svg", "Activation kurtosis over training",
     "max kurtosis of layer inputs", true, nullptr, nullptr, "", true, nullptr, 0},
}};

// The rows the trainer records, in the table's order (train::kLayerMetrics).
constexpr std::size_t trainedCount() {
  std::size_t n = 0;
  for (const LayerMetric& m : kLayerMetrics) n += m.trained;
  return n;
}
constexpr std::array<LayerMetric, trainedCount()> trainedLayerMetrics() {
  std::array<LayerMetric, trainedCount()> out{};
  std::size_t i = 0;
  for (const LayerMetric& m : kLayerMetrics)
    if (m.trained) out[i++] = m;
  return out;
}

// One batch's statistics folded into the pass's: `weight` the batch's share of the rows so far;
// `first` starts the pass (each row's across_batches says how).
void foldBatch(LayerMetrics& into, const LayerMetrics& batch, double weight, bool first);

// Each row's member of `j` into `m`: a number, or NaN for null or a row the record does not hold
// (written before the row existed).
void readLayerMetrics(const nlohmann::json& j, LayerMetrics& m);
// Each row's member set in `j`: a finite value, else null.
void writeLayerMetrics(nlohmann::json& j, const LayerMetrics& m);

}  // namespace omn::documents
