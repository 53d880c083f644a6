#include "omn/train/heldout_eval.h"

#include <algorithm>
#include <cmath>

#include "omn/model/transformer.h"
#include "omn/output/json_file.h"

namespace omn::train {
using nlohmann::json;
using output::finiteOrNull;

namespace {
GainStats gainStats(const at::Tensor& g) {
  const at::Tensor d = g.detach().to(at::kDouble);
  return {d.mean().item<double>(), d.std(/*unbiased=*/false).item<double>(), d.min().item<double>(), d.max().item<double>()};
}
json toJson(const GainStats& s) { return {{"mean", s.mean}, {"std", s.std}, {"min", s.min}, {"max", s.max}}; }
}  // namespace

Evaluation evaluateHeldout(const eval::Evaluator& ev, const TrainableModel& m) {
  at::NoGradGuard no_grad;
  std::vector<eval::LayerMechanism> mech;
  eval::ScoreOptions so;
  so.mech = &mech;
  const eval::SequenceScores sc = ev.score(so);
  Evaluation e;
  const double loss = sc.totalNll() / static_cast<double>(std::max<std::int64_t>(1, sc.totalTokens()));
  if (std::isfinite(loss)) e.heldout_loss = loss;
  e.heldout_tokens = sc.totalTokens();
  const auto& w = m.model->weights();
  for (std::size_t l = 0; l < mech.size(); ++l) {
    LayerHealth h{mech[l].max_logit, mech[l].mean_entropy, mech[l].input_kurtosis, std::nullopt, std::nullopt};
    if (m.config.qk_norm) {
      h.q_gain = gainStats(w.layers[l].q_norm);
      h.k_gain = gainStats(w.layers[l].k_norm);
    }
    e.layers.push_back(h);
  }
  return e;
}

json toJson(const Evaluation& e) {
  json layers = json::array();
  for (std::size_t l = 0; l < e.layers.size(); ++l) {
    const LayerHealth& h = e.layers[l];
    json x = {{"layer", l},
              {"max_attention_logit", finiteOrNull(h.max_attention_logit)},
              {"attention_entropy", finiteOrNull(h.attention_entropy)},
              {"input_kurtosis", finiteOrNull(h.input_kurtosis)}};
    if (h.q_gain) x["q_gain"] = toJson(*h.q_gain);
    if (h.k_gain) x["k_gain"] = toJson(*h.k_gain);
    layers.push_back(std::move(x));
  }
  return {{"heldout_loss", e.heldout_loss ? json(*e.heldout_loss) : json(nullptr)}, {"heldout_tokens", e.heldout_tokens}, {"layers", layers}};
}

}  // namespace omn::train
