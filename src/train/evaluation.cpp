#include "omn/train/evaluation.h"

#include "omn/output/json_file.h"

namespace omn::train {
using nlohmann::json;

namespace {
json toJson(const GainStats& s) { return {{"mean", s.mean}, {"std", s.std}, {"min", s.min}, {"max", s.max}}; }
}  // namespace

json toJson(const Evaluation& e) {
  json layers = json::array();
  for (std::size_t l = 0; l < e.layers.size(); ++l) {
    const LayerHealth& h = e.layers[l];
    json x = {{"layer", l}};
    for (const LayerMetric& m : kLayerMetrics) x[m.key] = output::finiteOrNull(h.*m.value);
    if (h.q_gain) x["q_gain"] = toJson(*h.q_gain);
    if (h.k_gain) x["k_gain"] = toJson(*h.k_gain);
    layers.push_back(std::move(x));
  }
  return {{"heldout_loss", e.heldout_loss ? json(*e.heldout_loss) : json(nullptr)}, {"heldout_tokens", e.heldout_tokens}, {"layers", layers}};
}

}  // namespace omn::train
