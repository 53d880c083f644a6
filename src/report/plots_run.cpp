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

std::string runSource(const json& train) {
  const json& p = train.contains("provenance") ? train["provenance"] : json::object();
  const json& f = train.contains("final_checkpoint") && train["final_checkpoint"].is_object() ? train["final_checkpoint"] : json::object();
  return "run \"" + train.value("name", std::string("?")) + "\" · " + train.value("status", std::string("?")) + " at step " +
         (train.contains("steps_done") ? train["steps_done"].dump() : std::string("?")) + " of " +
         (train.contains("steps") ? train["steps"].dump() : std::string("?")) + " · final.pt sha256 " + prefix(f.value("sha256", json())) +
         "… · omn-audit " + p.value("version", "?") + " (" + p.value("git_revision", "?") + ")";
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

double recordNumber(const json& rec, const char* key) { return rec.contains(key) ? val(rec[key]) : NAN; }

Figure loss(const json& train, const std::vector<json>& log) {
  Series batch{"training batch", colour(0, 2), "", {}, false}, held{"held-out", colour(1, 2), "", {}, true};
  for (const json& r : log) {
    const double step = recordNumber(r, "step"), tl = recordNumber(r, "train_loss");
    if (std::isfinite(tl)) batch.pts.emplace_back(step, tl);
    if (r.contains("eval") && r["eval"].is_object()) {
      const double hl = recordNumber(r["eval"], "heldout_loss");
      if (std::isfinite(hl)) held.pts.emplace_back(step, hl);
    }
  }
  std::vector<Level> levels;
  // short labels: the legend column holds about 24 characters; the caption says what each is
  if (std::isfinite(recordNumber(train, "initial_loss"))) levels.push_back({"L0 at step 0", recordNumber(train, "initial_loss")});
  if (std::isfinite(recordNumber(train, "heldout_unigram_cross_entropy")))
    levels.push_back({"unigram model", recordNumber(train, "heldout_unigram_cross_entropy"), "#a0522d", "8,4"});
  return overSteps("run-loss.svg", "Loss over training", "loss (nats/token)", {batch, held}, levels,
                   "Training-batch loss at every logged step; held-out loss at every evaluation (markers); L0, the held-out "
                   "loss at initialisation (grey, dotted); the held-out text's unigram cross-entropy, a context-free "
                   "model's loss (brown, dashed). " + runSource(train));
}

// The gradient's global norm before clipping at every logged step, against the clip threshold.
Figure gradNorm(const json& train, const std::vector<json>& log) {
  Series norm{"gradient norm", colour(0, 1), "", {}, false};
  for (const json& r : log)
    if (std::isfinite(recordNumber(r, "grad_norm"))) norm.pts.emplace_back(recordNumber(r, "step"), recordNumber(r, "grad_norm"));
  const json& values = train.contains("config") && train["config"].is_object() && train["config"].contains("values")
                           ? train["config"]["values"] : json::object();
  std::vector<Level> levels;
  const double clip = values.is_object() && values.contains("clip_grad_norm") ? val(values["clip_grad_norm"]) : NAN;
  if (std::isfinite(clip) && clip > 0) levels.push_back({"clip at " + general(clip), clip, "#d62728", "5,3"});
  return overSteps("run-grad-norm.svg", "Gradient norm over training", "global gradient norm", {norm}, levels,
                   "The global norm of the gradient at every logged step, before clipping" +
                       std::string(levels.empty() ? "" : "; above the dashed line the step was clipped to it") + ". " + runSource(train),
                   true);
}

Figure rates(const json& train, const std::vector<json>& log) {
  Series adamw{"AdamW learning rate", colour(0, 2), "", {}, false}, muon{"Muon learning rate", colour(1, 2), "5,3", {}, false};
  for (const json& r : log) {
    const double step = recordNumber(r, "step");
    if (std::isfinite(recordNumber(r, "lr"))) adamw.pts.emplace_back(step, recordNumber(r, "lr"));
    if (std::isfinite(recordNumber(r, "muon_lr"))) muon.pts.emplace_back(step, recordNumber(r, "muon_lr"));
  }
  const json& s = train.contains("schedule") ? train["schedule"] : json::object();
  return overSteps("run-lr.svg", "Learning rate over training", "learning rate", {adamw, muon}, {},
                   "The schedule as the run logged it (warm-up " + (s.contains("warmup_steps") ? s["warmup_steps"].dump() : std::string("?")) +
                       " steps, decay " + s.value("decay", std::string("?")) + "). " + runSource(train));
}

// Per layer over the evaluations: `role` "q_gain"/"k_gain" (their means) or a per-layer number.
Figure perLayer(const json& train, const std::vector<json>& log, const std::string& name, const std::string& title,
                const std::string& ylabel, const std::vector<std::pair<std::string, std::string>>& roles, const std::string& what) {
  std::map<std::pair<std::size_t, std::size_t>, Series> by;  // (layer, role) → series
  std::size_t n_layers = 0;
  for (const json& r : log) {
    if (!r.contains("eval") || !r["eval"].is_object() || !r["eval"].contains("layers") || !r["eval"]["layers"].is_array()) continue;
    n_layers = std::max(n_layers, r["eval"]["layers"].size());
  }
  for (const json& r : log) {
    if (!r.contains("eval") || !r["eval"].is_object() || !r["eval"].contains("layers") || !r["eval"]["layers"].is_array()) continue;
    const json& layers = r["eval"]["layers"];
    for (std::size_t l = 0; l < layers.size(); ++l)
      for (std::size_t k = 0; k < roles.size(); ++k) {
        const json& entry = layers[l];
        const std::string& key = roles[k].first;
        double v = NAN;
        if (entry.is_object() && entry.contains(key))
          v = entry[key].is_object() ? recordNumber(entry[key], "mean") : val(entry[key]);
        Series& s = by[{l, k}];
        if (s.label.empty()) {
          s.label = "layer " + std::to_string(l) + (roles.size() > 1 ? " " + roles[k].second : "");
          s.colour = layerColour(l, n_layers);  // as in track's figures
          s.dash = dash(k);
          s.markers = true;
        }
        if (std::isfinite(v)) s.pts.emplace_back(recordNumber(r, "step"), v);
      }
  }
  std::vector<Series> lines;
  for (auto& [key, s] : by) lines.push_back(std::move(s));
  return overSteps(name, title, ylabel, std::move(lines), {}, what + " " + runSource(train));
}

}  // namespace

std::vector<Figure> runFigures(const json& train, const std::vector<json>& log) {
  std::vector<Figure> out;
  const bool qk = train.contains("model") && train["model"].is_object() && train["model"].contains("config") &&
                  train["model"]["config"].is_object() && train["model"]["config"].value("qk_norm", false);
  std::vector<Figure> figs = {loss(train, log), rates(train, log), gradNorm(train, log),
                              perLayer(train, log, "run-max-logit.svg", "Largest attention logit per layer over training",
                                       "max pre-softmax logit", {{"max_attention_logit", ""}},
                                       "Each layer's largest pre-softmax attention logit on the evaluation rows.")};
  if (qk)
    figs.push_back(perLayer(train, log, "run-qk-gains.svg", "Q/K gain means per layer over training", "gain mean",
                            {{"q_gain", "Q"}, {"k_gain", "K"}}, "Mean of each layer's Q (solid) and K (dashed) RMSNorm gains at every evaluation."));
  for (Figure& f : figs)
    if (!f.svg.empty()) out.push_back(std::move(f));
  return out;
}

}  // namespace omn::report
