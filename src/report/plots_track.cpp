// The figures of a track document (omn-audit/track@1): a layer × step heatmap of the Q and of the
// K gain means (with a colour bar), and each layer's mean over the steps as lines coloured by
// depth. Everything from the track document alone.
#include "chart.h"
#include "omn/report/plots.h"
#include "omn/output/table.h"

namespace omn::report {
using output::fixed;
using documents::TrackDocument;
using documents::TrackPoint;


namespace {

using namespace chart;  // NOLINT

std::string trackSource(const TrackDocument& t) {
  const auto& s = t.summary;
  return std::to_string(s.checkpoints) + " checkpoints (" + std::to_string(s.verified) + " verified by SHA-256) · " +
         buildLine(t.provenance);
}

std::string stepLabel(const TrackPoint& c, std::size_t i) { return c.step ? std::to_string(*c.step) : "#" + std::to_string(i); }
// A layer's Q or K mean at one checkpoint (NaN: none finite); .at(): checkpoints may differ in layers.
double layerMean(const TrackPoint& c, std::size_t layer, char role) { return val(c.layers.at(layer).role(role).mean); }

Figure trackHeatmap(const TrackDocument& t, char role) {
  const std::vector<TrackPoint>& cs = t.checkpoints;
  const std::size_t n_steps = cs.size(), n_layers = cs.empty() ? 0 : cs[0].layers.size();
  if (n_steps == 0 || n_layers == 0) return {};
  double lo = INFINITY, hi = -INFINITY;
  for (const auto& c : cs)
    for (const auto& l : c.layers) {
      const double v = val(l.role(role).mean);
      if (std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v);
    }
  if (!std::isfinite(lo)) lo = 0, hi = 1;
  if (hi <= lo) hi = lo + 1e-9;
  const double cell_h = std::clamp(300.0 / static_cast<double>(n_layers), 8.0, 28.0);
  const double plot_h = cell_h * static_cast<double>(n_layers);
  const std::string name = role == 'q' ? "Q" : "K";
  // layer 0 at the top, as the rows of the profile tables
  Chart c(name + " gain mean per layer over training", "training step", "layer", Axis{0, static_cast<double>(n_steps), false},
          Axis{static_cast<double>(n_layers), 0, false}, plot_h);
  const double cell_w = (c.right() - c.left()) / static_cast<double>(n_steps);
  for (std::size_t s = 0; s < n_steps; ++s)
    for (std::size_t l = 0; l < n_layers; ++l) {
      const double v = layerMean(cs[s], l, role);
      c.data("layer " + std::to_string(l), cs[s].step ? static_cast<double>(*cs[s].step) : static_cast<double>(s), v, NAN, NAN,
             stepLabel(cs[s], s));
      c.svg.rect(c.left() + cell_w * static_cast<double>(s), kTop + cell_h * static_cast<double>(l), cell_w + 0.5, cell_h + 0.5,
                 "fill:" + (std::isfinite(v) ? viridis((v - lo) / (hi - lo)) : std::string("#ff00ff")), "cell");
    }
  c.svg.rect(c.left(), kTop, c.right() - c.left(), plot_h, "fill:none;stroke:#444;stroke-width:1");
  std::vector<std::pair<double, std::string>> yl;
  for (std::size_t l = 0; l < n_layers; l += std::max<std::size_t>(1, n_layers / 14)) yl.emplace_back(static_cast<double>(l) + 0.5, std::to_string(l));
  c.yLabels(yl);
  std::vector<std::pair<double, std::string>> xt;
  for (std::size_t s = 0; s < n_steps; s += std::max<std::size_t>(1, n_steps / 10)) xt.emplace_back(static_cast<double>(s) + 0.5, stepLabel(cs[s], s));
  c.xTicks(xt);
  c.colourBar(lo, hi, "mean gain", viridis);
  const std::string cap = "Each cell: the mean of one layer's " + name + " gain vector at one checkpoint (magenta: not finite). " + trackSource(t);
  c.caption(cap);
  return c.figure(std::string("track-heatmap-") + role + ".svg", name + " gain means, layer × step", cap);
}

Figure layerLines(const TrackDocument& t) {
  const std::vector<TrackPoint>& cs = t.checkpoints;
  const std::size_t n_steps = cs.size(), n_layers = cs.empty() ? 0 : cs[0].layers.size();
  if (n_steps < 2 || n_layers == 0) return {};
  bool by_step = true;  // by step only when every checkpoint has one
  for (const auto& c : cs) by_step = by_step && c.step.has_value();
  auto x = [&](std::size_t s) { return by_step ? static_cast<double>(*cs[s].step) : static_cast<double>(s); };
  double lo = INFINITY, hi = -INFINITY;
  for (const auto& c : cs)
    for (const auto& l : c.layers)
      for (const char r : {'q', 'k'}) {
        const double v = val(l.role(r).mean);
        if (std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v);
      }
  if (!std::isfinite(lo)) return {};
  const bool logy = wantsLog(lo, hi);
  Chart c("Q/K gain mean of every layer over training", by_step ? "training step" : "checkpoint (given order)",
          std::string("mean gain") + (logy ? " (log scale)" : ""), rangeOf(x(0), x(n_steps - 1), false, 0.02), rangeOf(lo, hi, logy));
  c.yTicks();
  std::vector<std::pair<double, std::string>> xt;
  for (std::size_t s = 0; s < n_steps; s += std::max<std::size_t>(1, n_steps / 10)) xt.emplace_back(x(s), stepLabel(cs[s], s));
  c.xTicks(xt);
  // up to ten layers: one categorical colour each, named in the legend; more: by depth on viridis,
  // stopped short of its faint yellow end, with the colour bar as their legend
  const bool categorical = n_layers <= 10;
  std::vector<Key> keys;
  for (std::size_t l = 0; l < n_layers; ++l) {
    const std::string colour = layerColour(l, n_layers);
    if (categorical) keys.push_back({Key::Mark::line, colour, "layer " + std::to_string(l)});
    for (const char r : {'q', 'k'}) {
      const std::string series = "layer " + std::to_string(l) + " " + (r == 'q' ? "Q" : "K");
      std::vector<std::pair<double, double>> pts;
      for (std::size_t s = 0; s < n_steps; ++s) {
        const double v = layerMean(cs[s], l, r);
        c.data(series, x(s), v, NAN, NAN, stepLabel(cs[s], s));
        if (std::isfinite(v) && (!logy || v > 0)) pts.emplace_back(c.X(x(s)), c.Y(v));
      }
      // coloured by depth: the colour bar is their legend, the line style says the role
      c.svg.begin(categorical ? "series" : "series-by-scale", categorical ? "layer " + std::to_string(l) : series);
      c.svg.polyline(pts, "stroke:" + colour + ";stroke-width:1.6" + std::string(r == 'k' ? ";stroke-dasharray:5,3" : ""), "layer");
      for (const auto& pt : pts)  // a marker at every checkpoint: where the line has data
        c.marker(r == 'k' ? "square" : "circle", pt.first, pt.second, 2.6, colour, series);
      c.svg.end();
    }
  }
  keys.push_back({Key::Mark::line, "#333", "Q gain (solid)", "role-q", "", "circle"});
  keys.push_back({Key::Mark::line, "#333", "K gain (dashed)", "role-k", "5,3", "square"});
  c.legend(keys);
  if (!categorical) c.colourBar(0, static_cast<double>(n_layers - 1), "layer (depth)", [](double t) { return viridis(0.85 * t); });
  const std::string cap = std::string("One line per layer and role (Q solid, K dashed), a marker at each checkpoint; ") +
                          (categorical ? "a colour per layer" : "coloured by depth") + ". " + trackSource(t);
  c.caption(cap);
  return c.figure("track-layer-means.svg", "Q/K gain means over training", cap);
}

}  // namespace

std::vector<Figure> trackFigures(const TrackDocument& t) {
  std::vector<Figure> out;
  for (Figure f : {trackHeatmap(t, 'q'), trackHeatmap(t, 'k'), layerLines(t)})
    if (!f.svg.empty()) out.push_back(std::move(f));
  return out;
}

}  // namespace omn::report
