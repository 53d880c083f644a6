#include "omn/train/heldout_eval.h"

#include <algorithm>
#include <cmath>

#include "omn/model/transformer.h"

namespace omn::train {

namespace {
// mean, population std, min and max of a gain vector (float64); a value that is not finite: empty
documents::RoleSummary gainStats(const at::Tensor& g) {
  const at::Tensor d = g.detach().to(at::kDouble);
  auto finite = [](double v) { return std::isfinite(v) ? std::optional<double>(v) : std::nullopt; };
  return {finite(d.mean().item<double>()), finite(d.std(/*unbiased=*/false).item<double>()), finite(d.min().item<double>()),
          finite(d.max().item<double>())};
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
    h.layer = static_cast<std::int64_t>(l);
    h.metrics = mech[l];
    if (m.config.qk_norm) {
      h.q_gain = gainStats(w.layers[l].q_norm);
      h.k_gain = gainStats(w.layers[l].k_norm);
    }
    e.layers.push_back(h);
  }
  return e;
}

}  // namespace omn::train
