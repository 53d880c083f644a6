// The figures of one training run: its record (train.json, omn-audit/train@1) and the log beside it
// (log.jsonl, one record per logged step and evaluation). Loss over the steps (the training batches
// and the held-out evaluations, against the loss at initialisation and the held-out text's unigram
// entropy), the learning rates of the schedule, and per layer over the evaluations the Q/K gain
// means and the largest attention logit. Everything from the two files alone.
#include <cmath>
#include <map>

#include "chart.h"
#include "omn/report/plots.h"

namespace omn::report {

using documents::TrainDocument;
using documents::TrainLogRecord;

namespace {

using namespace chart;  // NOLINT

struct Series {
  std::string label, colour, dash;
  std::vector<std::pair<double, double>> pts = {};
  bool markers = false;  // a marker at every point (sparse series: the evaluations)
};
struct Level {
  std::string label;
  double y;
  std::string colour = "#777777", dash = "2,3";  // two levels on one figure drawn apart
};

std::string runSource(const TrainDocument& train) {
  const std::optional<std::string> final_sha256 =
      train.final_checkpoint ? std::optional<std::string>(train.final_checkpoint->sha256) : std::nullopt;
  return "run \"" + train.name + "\" · " + train.status + " at step " + std::to_string(train.steps_done) + " of " +
         std::to_string(train.steps) + " · final.pt sha256 " + prefix(final_sha256) + "… · " + buildLine(train.provenance);
}

Figure overSteps(const std::string& name, const std::string& title, const std::string& ylabel, std::vector<Series> lines,
                 const std::vector<Level>& levels, const std::string& caption, bool may_log = false) {
  lines.erase(std::remove_if(lines.begin(), lines.end(), [](const Series& s) { return s.pts.empty(); }), lines.end());
  if (lines.empty()) return {};
  double xhi = 1, ylo = INFINITY, yhi = -INFINITY;
  for (const auto& l : lines)
    for (const auto& [x, y] : l.pts) xhi = std::max(xhi, x), ylo = std::min(ylo, y), yhi = std::max(yhi, y);
  for (const auto& lv : levels) ylo = std::min(ylo, lv.y), yhi = std::max(yhi, lv.y);
  if (yhi <= ylo) yhi = ylo + 1e-9;
  const bool logy = may_log && wantsLog(ylo, yhi);  // (only where every value is positive)
  Chart c(title, "training step", ylabel + (logy ? " (log scale)" : ""), rangeOf(0, xhi, false, 0.02), rangeOf(ylo, yhi, logy));
  c.yTicks();
  c.xTicksAuto();
  std::vector<Key> keys;
  for (const auto& lv : levels) {  // reference levels first, under the data
    c.beginSeries(lv.label);
    c.svg.polyline({{c.X(0), c.Y(lv.y)}, {c.X(xhi), c.Y(lv.y)}}, "stroke:" + lv.colour + ";stroke-width:1.2;stroke-dasharray:" + lv.dash,
                   "level");
    c.endSeries();
    c.data(lv.label, 0, lv.y);
    keys.push_back({Key::Mark::line, lv.colour, lv.label, "", lv.dash});
  }
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const Series& l = lines[i];
    std::vector<std::pair<double, double>> px;
    for (const auto& [x, y] : l.pts) {
      px.emplace_back(c.X(x), c.Y(y));
      c.data(l.label, x, y);
    }
    c.beginSeries(l.label);
    c.svg.polyline(px, "stroke:" + l.colour + ";stroke-width:1.8" + (l.dash.empty() ? "" : ";stroke-dasharray:" + l.dash), "run");
    if (l.markers)
      for (const auto& [x, y] : px) c.marker(Chart::shape(i), x, y, 3, l.colour);
    c.endSeries();
    keys.push_back({Key::Mark::line, l.colour, l.label, "", l.dash, l.markers ? Chart::shape(i) : ""});
  }
  c.legend(keys);
  c.caption(caption);
  return c.figure(name, title, caption);
}

Figure loss(const TrainDocument& train, const std::vector<TrainLogRecord>& log) {
  Series batch{"training batch", colour(0, 2), "", {}, false}, held{"held-out", colour(1, 2), "", {}, true};
  for (const TrainLogRecord& r : log) {
    const double step = static_cast<double>(r.step), tl = val(r.train_loss);
    if (std::isfinite(tl)) batch.pts.emplace_back(step, tl);
    if (r.eval) {
      const double hl = val(r.eval->heldout_loss);
      if (std::isfinite(hl)) held.pts.emplace_back(step, hl);
    }
  }
  std::vector<Level> levels;
  // short labels: the legend column holds about 24 characters; the caption says what each is
  if (std::isfinite(val(train.initial_loss))) levels.push_back({"L0 at step 0", *train.initial_loss});
  if (std::isfinite(train.heldout_unigram_cross_entropy))
    levels.push_back({"unigram model", train.heldout_unigram_cross_entropy, "#a0522d", "8,4"});
  return overSteps("run-loss.svg", "Loss over training", "loss (nats/token)", {batch, held}, levels,
                   "Training-batch loss at every logged step; held-out loss at every evaluation (markers); L0, the held-out "
                   "loss at initialisation (grey, dotted); the held-out text's unigram cross-entropy, a context-free "
                   "model's loss (brown, dashed). " + runSource(train));
}

// The gradient's global norm before clipping at every logged step, against the clip threshold.
Figure gradNorm(const TrainDocument& train, const std::vector<TrainLogRecord>& log) {
  Series norm{"gradient norm", colour(0, 1), "", {}, false};
  for (const TrainLogRecord& r : log)
    if (std::isfinite(val(r.grad_norm))) norm.pts.emplace_back(static_cast<double>(r.step), *r.grad_norm);
  std::vector<Level> levels;
  const double clip = train.clipGradNorm();
  if (std::isfinite(clip) && clip > 0) levels.push_back({"clip at " + general(clip), clip, "#d62728", "5,3"});
  return overSteps("run-grad-norm.svg", "Gradient norm over training", "global gradient norm", {norm}, levels,
                   "The global norm of the gradient at every logged step, before clipping" +
                       std::string(levels.empty() ? "" : "; above the dashed line the step was clipped to it") + ". " + runSource(train),
                   true);
}

Figure rates(const TrainDocument& train, const std::vector<TrainLogRecord>& log) {
  Series adamw{"AdamW learning rate", colour(0, 2), "", {}, false}, muon{"Muon learning rate", colour(1, 2), "5,3", {}, false};
  for (const TrainLogRecord& r : log) {
    const double step = static_cast<double>(r.step);
    if (std::isfinite(val(r.lr))) adamw.pts.emplace_back(step, *r.lr);
    if (std::isfinite(val(r.muon_lr))) muon.pts.emplace_back(step, *r.muon_lr);
  }
  return overSteps("run-lr.svg", "Learning rate over training", "learning rate", {adamw, muon}, {},
                   "The schedule as the run logged it (warm-up " + std::to_string(train.schedule.warmup_steps) + " steps, decay " +
                       train.schedule.decay + "). " + runSource(train));
}

// One value of a layer at an evaluation: a metric, or the mean of its Q or K gains (NaN: none).
using LayerValue = double (*)(const documents::EvalLayer&);
double qGainMean(const documents::EvalLayer& l) { return l.q_gain ? val(l.q_gain->mean) : NAN; }
double kGainMean(const documents::EvalLayer& l) { return l.k_gain ? val(l.k_gain->mean) : NAN; }
double maxLogit(const documents::EvalLayer& l) { return l.metrics.max_attention_logit; }

// Per layer over the evaluations, one series per layer and role (a role's name: "" for one).
Figure perLayer(const TrainDocument& train, const std::vector<TrainLogRecord>& log, const std::string& name, const std::string& title,
                const std::string& ylabel, const std::vector<std::pair<LayerValue, std::string>>& roles, const std::string& what) {
  std::map<std::pair<std::size_t, std::size_t>, Series> by;  // (layer, role) → series
  std::size_t n_layers = 0;
  for (const TrainLogRecord& r : log)
    if (r.eval) n_layers = std::max(n_layers, r.eval->layers.size());
  for (const TrainLogRecord& r : log) {
    if (!r.eval) continue;
    const auto& layers = r.eval->layers;
    for (std::size_t l = 0; l < layers.size(); ++l)
      for (std::size_t k = 0; k < roles.size(); ++k) {
        const double v = roles[k].first(layers[l]);
        Series& s = by[{l, k}];
        if (s.label.empty()) {
          s.label = "layer " + std::to_string(l) + (roles.size() > 1 ? " " + roles[k].second : "");
          s.colour = layerColour(l, n_layers);  // as in track's figures
          s.dash = dash(k);
          s.markers = true;
        }
        if (std::isfinite(v)) s.pts.emplace_back(static_cast<double>(r.step), v);
      }
  }
  std::vector<Series> lines;
  for (auto& [key, s] : by) lines.push_back(std::move(s));
  return overSteps(name, title, ylabel, std::move(lines), {}, what + " " + runSource(train));
}

}  // namespace

std::vector<Figure> runFigures(const TrainDocument& train, const std::vector<TrainLogRecord>& log) {
  std::vector<Figure> out;
  std::vector<Figure> figs = {loss(train, log), rates(train, log), gradNorm(train, log),
                              perLayer(train, log, "run-max-logit.svg", "Largest attention logit per layer over training",
                                       "max pre-softmax logit", {{maxLogit, ""}},
                                       "Each layer's largest pre-softmax attention logit on the evaluation rows.")};
  if (train.model.qk_norm)
    figs.push_back(perLayer(train, log, "run-qk-gains.svg", "Q/K gain means per layer over training", "gain mean",
                            {{qGainMean, "Q"}, {kGainMean, "K"}}, "Mean of each layer's Q (solid) and K (dashed) RMSNorm gains at every evaluation."));
  for (Figure& f : figs)
    if (!f.svg.empty()) out.push_back(std::move(f));
  return out;
}

}  // namespace omn::report
