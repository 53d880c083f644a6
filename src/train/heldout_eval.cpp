#include "omn/train/heldout_eval.h"

#include <algorithm>
#include <cmath>

#include "omn/model/transformer.h"

namespace omn::train {

namespace {
GainStats gainStats(const at::Tensor& g) {
  const at::Tensor d = g.detach().to(at::kDouble);
  return {d.mean().item<double>(), d.std(/*unbiased=*/false).item<double>(), d.min().item<double>(), d.max().item<double>()};
}
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
    LayerHealth h;
    static_cast<documents::LayerMetrics&>(h) = mech[l];
    if (m.config.qk_norm) {
      h.q_gain = gainStats(w.layers[l].q_norm);
      h.k_gain = gainStats(w.layers[l].k_norm);
    }
    e.layers.push_back(h);
  }
  return e;
}

}  // namespace omn::train
