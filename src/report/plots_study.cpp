// The figures of a training study (omn-audit/study@1): final held-out loss against the learning
// rate per arm (seed spread, divergence marks), and for the runs that tell the matched story —
// the largest LR every arm survives and the next one up — the loss, max attention logit, attention
// entropy and activation kurtosis over training. Everything from the study document alone.
#include <map>

#include "chart.h"
#include "omn/errors.h"
#include "omn/report/plots.h"
#include "omn/output/table.h"

namespace omn::report {
using output::fixed;
using output::general;
using output::significant;
using documents::StudyDocument;
using documents::StudyRun;


namespace {

using namespace chart;  // NOLINT

std::string studySource(const StudyDocument& s) {
  return "study manifest sha256 " + prefix(s.manifest.sha256) + "… · corpus sha256 " + prefix(s.corpus.sha256) + "… · " +
         buildLine(s.provenance);
}


// "1e-4", "2.3e-3", "0.015", "1": short enough to sit side by side under a dense grid
std::string lrTick(double v) {
  char b[32];
  if (!(v > 0) || !std::isfinite(v)) return general(v);
  if (v >= 0.01) {
    std::snprintf(b, sizeof b, "%.2g", v);
    return b;
  }
  const int e = static_cast<int>(std::floor(std::log10(v) + 1e-9));
  const double m = v / std::pow(10.0, e);
  if (std::fabs(m - std::round(m)) < 0.05) std::snprintf(b, sizeof b, "%.0fe%d", std::round(m), e);
  else std::snprintf(b, sizeof b, "%.1fe%d", m, e);
  return b;
}

std::vector<std::pair<double, std::string>> lrTicks(const StudyDocument& s) {
  std::vector<std::pair<double, std::string>> t;
  for (const double lr : s.grid.lrs) t.emplace_back(lr, lrTick(lr));
  return t;
}

Figure lossVsLr(const StudyDocument& s) {
  const std::vector<double>& lrs = s.grid.lrs;
  if (lrs.empty()) return {};
  double ylo = INFINITY, yhi = -INFINITY, l0 = -INFINITY;
  for (const auto& a : s.arms) {
    l0 = std::max(l0, val(a.initial_loss));
    for (const auto& p : a.per_lr)
      for (const auto& l : p.final_heldout_loss)
        if (l && *l < val(a.initial_loss) * 1.0001) {
          ylo = std::min(ylo, *l);
          yhi = std::max(yhi, *l);
        }
  }
  if (!std::isfinite(ylo) || !std::isfinite(l0)) return {};
  yhi = std::max(yhi, l0);
  const double unigram = s.corpus.heldout_unigram_cross_entropy;
  if (std::isfinite(unigram)) ylo = std::min(ylo, unigram);
  Chart c("Final held-out loss against the learning rate", "peak learning rate (log scale)", "held-out loss (nats/token)",
          rangeOf(lrs.front() / 1.4, lrs.back() * 1.4, true), rangeOf(ylo, yhi, false));
  c.yTicks();
  const auto ticks = lrTicks(s);
  c.xTicks(ticks, ticks.size() > 14);  // rotated only when even the short labels would collide
  c.svg.line(c.left(), c.Y(l0), c.right(), c.Y(l0), "stroke:#555;stroke-width:1;stroke-dasharray:6,3", "initial-loss");
  if (std::isfinite(unigram))
    c.svg.line(c.left(), c.Y(unigram), c.right(), c.Y(unigram), "stroke:#999;stroke-width:1;stroke-dasharray:2,3", "unigram");
  std::vector<Key> keys;
  const std::size_t n_arms = s.arms.size();
  for (std::size_t i = 0; i < n_arms; ++i) {
    const documents::StudyArm& a = s.arms[i];
    const std::string colour = chart::colour(i, n_arms);
    std::string label = a.arm;
    if (a.lr_sensitivity) label += " (sens. " + fixed(*a.lr_sensitivity, 2) + ")";
    c.beginSeries(label);
    const double dx = (static_cast<double>(i) - (static_cast<double>(n_arms) - 1) / 2) * 5;  // dodge the arms
    std::vector<std::pair<double, double>> pts;
    for (const auto& p : a.per_lr) {
      const double px = c.X(p.lr) + dx;
      if (p.diverged > 0)  // a cross at L0 per LR with a diverged run
        for (double d : {-4.0, 4.0}) c.svg.line(px - 4, c.Y(l0) - d, px + 4, c.Y(l0) + d, "stroke:" + colour + ";stroke-width:2", "diverged");
      const double mean = val(p.finished.mean);
      const double range_lo = p.range ? val(p.range->at(0)) : NAN, range_hi = p.range ? val(p.range->at(1)) : NAN;
      c.data(label, p.lr, mean, range_lo, range_hi);
      if (!std::isfinite(mean) || mean >= l0) continue;
      if (p.range) c.svg.line(px, c.Y(std::min(range_hi, l0)), px, c.Y(range_lo), "stroke:" + colour + ";stroke-width:1.5", "seed-range");
      pts.emplace_back(px, c.Y(mean));
      c.svg.circle(px, c.Y(mean), 3.5, "fill:" + colour, "point", a.arm + " lr " + significant(p.lr, 2) + ": " + fixed(mean, 4));
    }
    c.svg.polyline(pts, "stroke:" + colour + ";stroke-width:1.5");
    c.endSeries();
    keys.push_back({Key::Mark::line, colour, label, "", "", "circle"});
  }
  // the reference lines' labels last, at the low-LR end (the diverged crosses sit on L0 at the high
  // end) and on a white halo, so that no series is drawn through them
  const std::string halo = ";paint-order:stroke;stroke:#fff;stroke-width:3px;stroke-linejoin:round";
  c.svg.text(c.left() + 4, c.Y(l0) - 4, "loss at initialisation (L0)", "font-size:10px;fill:#555" + halo, "start", 0, "annotation");
  if (std::isfinite(unigram))
    c.svg.text(c.left() + 4, c.Y(unigram) + 12, "unigram model", "font-size:10px;fill:#777" + halo, "start", 0, "annotation");
  c.legend(keys);
  const std::string cap = "Mean over " + std::to_string(s.grid.seeds.size()) +
                          " seed(s) of the final held-out loss; whiskers: the seeds' range; crosses at L0: a run diverged. " +
                          "LR sensitivity (Wortsman et al. 2023) in the legend. " + studySource(s);
  c.caption(cap);
  return c.figure("study-loss-vs-lr.svg", "Held-out loss against the learning rate", cap);
}

// The runs worth following over time: at the largest LR every arm survives, and at the next LR up.
std::vector<const StudyRun*> chosenRuns(const StudyDocument& s, const std::vector<std::string>& ids) {
  if (!ids.empty()) {
    std::vector<const StudyRun*> out;
    for (const auto& id : ids) {
      const StudyRun* found = nullptr;
      for (const auto& r : s.runs)
        if (r.id == id) found = &r;
      if (!found) throw UsageError("--runs: the study has no run \"" + id + "\" (its ids are in /runs/*/id and the CSV)");
      out.push_back(found);
    }
    return out;
  }
  const std::vector<double>& lrs = s.grid.lrs;
  // the smaller of the arms' largest stable learning rates (as the study computed them)
  double common = NAN;
  for (const auto& a : s.arms) {
    const double l = val(a.largest_stable_lr);
    if (std::isnan(l)) {  // an arm that trained at no learning rate: no common one
      common = NAN;
      break;
    }
    common = std::isnan(common) ? l : std::min(common, l);
  }
  std::vector<double> pick;
  if (std::isfinite(common)) {
    pick.push_back(common);
    for (double lr : lrs)
      if (lr > common) {
        pick.push_back(lr);
        break;
      }
  } else if (!lrs.empty()) {
    pick.push_back(lrs.front());
  }
  if (s.grid.seeds.empty()) return {};
  const std::uint64_t first_seed = s.grid.seeds.at(0);
  std::vector<const StudyRun*> out;
  for (double lr : pick)
    for (const auto& arm : s.grid.arms)
      for (const auto& r : s.runs)
        if (r.arm == arm && r.lr == lr && r.seed == first_seed) out.push_back(&r);
  return out;
}

// One value per evaluation step from the per-layer series: "max" or "mean" over layers.
double reduceLayers(const documents::Series& layers, bool max) {
  double acc = max ? -INFINITY : 0;
  int n = 0;
  for (const auto& v : layers) {
    if (!v) continue;
    acc = max ? std::max(acc, *v) : acc + *v;
    ++n;
  }
  return n == 0 ? NAN : max ? acc : acc / n;
}

// A run's value at its k-th logged step (the training loss: metric null) or k-th evaluation (one
// per-layer metric of documents::kLayerMetrics, reduced over the layers); NaN where there is none.
// .at(): the series need not be as long as the steps in a hostile document (exit 2, not a read past the end)
double trajectoryValue(const StudyRun& r, std::size_t k, const documents::LayerMetric* metric) {
  if (!metric) return val(r.trajectory.train.loss.at(k));
  const auto& series = r.trajectory.eval.metric(*metric);
  return series ? reduceLayers(series->at(k), metric->across_layers == documents::AcrossLayers::Max) : NAN;
}

// The training loss (metric null) or one per-layer metric of documents::kLayerMetrics over the steps.
Figure trajectory(const StudyDocument& s, const std::vector<std::string>& ids, const std::string& name, const std::string& title,
                  const std::string& ylabel, bool logy, const documents::LayerMetric* metric) {
  const std::vector<const StudyRun*> runs = chosenRuns(s, ids);
  struct Line {
    std::string label, colour, dash;
    std::vector<std::pair<double, double>> pts;
  };
  std::vector<Line> lines;
  double xhi = 1, ylo = INFINITY, yhi = -INFINITY;
  std::map<std::string, std::size_t> arm_index;
  for (std::size_t i = 0; i < s.grid.arms.size(); ++i) arm_index[s.grid.arms[i]] = i;
  const double first_lr = runs.empty() ? 0 : runs.front()->lr;
  for (const StudyRun* r : runs) {
    Line l;
    const bool higher = r->lr != first_lr;
    l.colour = colour(arm_index[r->arm], s.grid.arms.size());
    l.dash = higher ? "5,3" : "";
    l.label = r->arm + " lr " + significant(r->lr, 2) + (r->diverged ? " (diverged)" : "");
    const std::vector<std::int64_t>& steps = !metric ? r->trajectory.train.step : r->trajectory.eval.step;
    for (std::size_t k = 0; k < steps.size(); ++k) {
      const double y = trajectoryValue(*r, k, metric);
      if (!std::isfinite(y) || (logy && y <= 0)) continue;
      const double x = static_cast<double>(steps[k]);
      l.pts.emplace_back(x, y);
      xhi = std::max(xhi, x);
      ylo = std::min(ylo, y);
      yhi = std::max(yhi, y);
    }
    if (!l.pts.empty()) lines.push_back(std::move(l));
  }
  if (lines.empty()) return {};
  if (!metric) {  // a diverged run's loss shoots up: clip at 1.25 x the loss at initialisation
    double l0 = 0;
    for (const StudyRun* r : runs) l0 = std::max(l0, val(r->initial_loss));
    if (l0 > 0 && yhi > 1.25 * l0) {
      yhi = 1.25 * l0;
      for (auto& l : lines)
        for (auto& p : l.pts) p.second = std::min(p.second, yhi);
    }
  }
  if (logy && yhi / ylo < 3) logy = false;  // a log axis only where the data spans orders of magnitude
  Chart c(title, "training step", ylabel + (logy ? " (log scale)" : ""), rangeOf(0, xhi, false, 0.02), rangeOf(ylo, yhi, logy));
  c.yTicks();
  std::vector<std::pair<double, std::string>> xt;
  for (double v : rangeOf(0, xhi, false, 0.02).ticks(6))
    if (v >= 0) xt.emplace_back(v, general(v));
  c.xTicks(xt);
  std::vector<Key> keys;
  for (const auto& l : lines) {
    std::vector<std::pair<double, double>> px;
    for (const auto& [x, y] : l.pts) {
      px.emplace_back(c.X(x), c.Y(y));
      c.data(l.label, x, y);
    }
    c.beginSeries(l.label);
    c.svg.polyline(px, "stroke:" + l.colour + ";stroke-width:1.8" + (l.dash.empty() ? "" : ";stroke-dasharray:" + l.dash), "run");
    c.svg.circle(px.back().first, px.back().second, 3, "fill:" + l.colour, "run-end", l.label);  // where the run ended
    c.endSeries();
    keys.push_back({Key::Mark::line, l.colour, l.label, "", l.dash});  // the swatch is the line itself (solid or dashed)
  }
  c.legend(keys);
  const std::string cap = (ids.empty() ? "Seed " + std::to_string(s.grid.seeds.at(0)) +
                                             "; solid: the smaller of the arms' largest stable learning rates, dashed: the next one up. "
                                       : std::string("The runs chosen with --runs (dashed: a higher learning rate than the first). ")) +
                          studySource(s);
  c.caption(cap);
  return c.figure(name, title, cap);
}

}  // namespace

std::vector<Figure> studyFigures(const StudyDocument& s, const std::vector<std::string>& ids) {
  std::vector<Figure> out;
  std::vector<Figure> figures{lossVsLr(s), trajectory(s, ids, "study-train-loss.svg", "Training loss over steps",
                                                     "training-batch loss (nats/token)", false, nullptr)};
  for (const documents::LayerMetric& m : documents::kLayerMetrics)
    if (m.study_figure) figures.push_back(trajectory(s, ids, m.study_figure, m.study_title, m.study_axis, m.log_axis, &m));
  for (Figure& f : figures)
    if (!f.svg.empty()) out.push_back(std::move(f));
  return out;
}

}  // namespace omn::report
