#include "run_sections.h"

#include <string>

#include "omn/output/table.h"

namespace omn::report {

namespace {
// a loss a run has not measured yet (null in train.json) is "—", not NaN
std::string lossCell(const std::optional<double>& v) { return v ? f(*v, 4) : "—"; }
std::string countOf(std::int64_t v) { return std::to_string(v); }
std::string trackLayerMeans(const documents::TrackLayer& layer) { return f(layer.q.mean, 3) + " / " + f(layer.k.mean, 3); }
}  // namespace

void trackSummaryRows(Grid& g, const documents::TrackDocument& t) {
  const auto& sum = t.summary;
  g.rows.push_back({"checkpoints tracked", countOf(sum.checkpoints) + " (" + countOf(sum.verified) + " verified by SHA-256)"});
  if (t.checkpoints.empty()) return;
  const documents::TrackPoint& last = t.checkpoints.back();
  const auto& s = last.statistics;
  const std::string at = last.step ? "step " + std::to_string(*last.step) : last.path;
  g.rows.push_back({"Q/K gains at " + at, countOf(s.count) + " values, mean " + f(s.mean, 4) + ", range [" + f(s.min, 4) + ", " +
                                              f(s.max, 4) + "], " + countOf(s.count_negative) + " negative"});
}

void runSummaryRows(Grid& g, const documents::TrainDocument& r) {
  g.rows.push_back({"run", r.name + ": " + r.status + ", " + countOf(r.steps_done) + " of " + countOf(r.steps) + " steps"});
  g.rows.push_back({"held-out loss (nats/token): final, best", lossCell(r.final_heldout_loss) + ", " + lossCell(r.best_heldout_loss)});
}

Grid trackGrid(const documents::TrackDocument& t) {
  const std::size_t n_layers = t.checkpoints.empty() ? 0 : t.checkpoints[0].layers.size();
  Grid g{{"step", "checkpoint", "verified", "mean (×)", "min (×)", "max (×)", "negative (count)"}, {}};
  if (n_layers) g.head.push_back("layer 0 Q / K mean (×)");
  if (n_layers > 1) g.head.push_back("layer " + std::to_string(n_layers - 1) + " Q / K mean (×)");
  for (const auto& c : t.checkpoints) {
    const auto& s = c.statistics;
    std::vector<std::string> row = {c.step ? std::to_string(*c.step) : "—", c.path, c.sha256_verified ? "sha256" : "no", f(s.mean, 4),
                                    f(s.min, 4), f(s.max, 4), countOf(s.count_negative)};
    if (n_layers) row.push_back(trackLayerMeans(c.layers.at(0)));
    if (n_layers > 1) row.push_back(trackLayerMeans(c.layers.at(n_layers - 1)));
    g.rows.push_back(std::move(row));
  }
  return g;
}

Grid runGrid(const documents::TrainDocument& r) {
  Grid g{{"field", "value"},
         {{"name", r.name},
          {"status", r.status},
          {"steps done (count)", countOf(r.steps_done)},
          {"tokens seen (count)", countOf(r.tokens_seen)},
          {"initial loss (nats/token)", lossCell(r.initial_loss)},
          {"final training loss (nats/token)", lossCell(r.final_train_loss)},
          {"final held-out loss (nats/token)", lossCell(r.final_heldout_loss)},
          {"best held-out loss (nats/token)", lossCell(r.best_heldout_loss)},
          {"held-out unigram cross-entropy (nats/token)", lossCell(r.heldout_unigram_cross_entropy)},
          {"QK-norm", r.model.qk_norm ? "on" : "off"},
          {"parameters (count)", countOf(r.model.parameters)},
          {"optimizer", r.optimizer.kind},
          {"dtype", r.dtype},
          {"threads (count)", countOf(r.threads)}}};
  if (r.timing) {
    g.rows.push_back({"training time (s)", output::fixed(r.timing->seconds, 1)});
    g.rows.push_back({"throughput (tokens/s)", output::fixed(r.timing->tokens_per_second, 0)});
  }
  if (r.diverged) g.rows.push_back({"diverged", documents::jsonText(r.divergence)});
  return g;
}

Grid runEvalsGrid(const documents::TrainDocument& r) {
  Grid g{{"step", "held-out loss (nats/token)"}, {}};
  for (const auto& e : r.evals) g.rows.push_back({countOf(e.step), lossCell(e.heldout_loss)});
  return g;
}

}  // namespace omn::report
