// The figures of a track document (omn-audit/track@1): a layer × step heatmap of the Q and of the
// K gain means (with a colour bar), and each layer's mean over the steps as lines coloured by
// depth. Everything from the track document alone.
#include "chart.h"
#include "omn/report/plots.h"
#include "omn/output/table.h"

namespace omn::report {
using output::fixed;


namespace {

using namespace chart;  // NOLINT

// viridis, sampled: t in [0, 1] → colour
std::string viridis(double t) {
  static const double k[][3] = {{68, 1, 84}, {72, 40, 120}, {62, 74, 137}, {49, 104, 142}, {38, 130, 142},
                                {31, 158, 137}, {53, 183, 121}, {109, 205, 89}, {180, 222, 44}, {253, 231, 37}};
  t = std::clamp(std::isfinite(t) ? t : 0.0, 0.0, 1.0) * 9;
  const int i = std::min(8, static_cast<int>(t));
  const double f = t - i;
  char b[16];
  std::snprintf(b, sizeof b, "#%02x%02x%02x", static_cast<int>(k[i][0] + f * (k[i + 1][0] - k[i][0])),
                static_cast<int>(k[i][1] + f * (k[i + 1][1] - k[i][1])), static_cast<int>(k[i][2] + f * (k[i + 1][2] - k[i][2])));
  return b;
}

std::string trackSource(const json& t) {
  const json& s = t["summary"];
  return std::to_string(s["checkpoints"].get<std::size_t>()) + " checkpoints (" + std::to_string(s["verified"].get<std::size_t>()) +
         " verified by SHA-256) · omn-audit " + t["provenance"].value("version", "?") + " (" + t["provenance"].value("git_revision", "?") + ")";
}

std::string stepLabel(const json& c, std::size_t i) { return c["step"].is_null() ? "#" + std::to_string(i) : c["step"].dump(); }

Figure heatmap(const json& t, const char* role) {
  const json& cs = t["checkpoints"];
  const std::size_t n_steps = cs.size(), n_layers = cs.empty() ? 0 : cs[0]["layers"].size();
  if (n_steps == 0 || n_layers == 0) return {};
  double lo = INFINITY, hi = -INFINITY;
  for (const auto& c : cs)
    for (const auto& l : c["layers"]) {
      lo = std::min(lo, val(l[role]["mean"]));
      hi = std::max(hi, val(l[role]["mean"]));
    }
  if (hi <= lo) hi = lo + 1e-9;
  const double cell_h = std::clamp(300.0 / static_cast<double>(n_layers), 8.0, 28.0);
  const double plot_w = kW - kLeft - kRight, plot_h = cell_h * static_cast<double>(n_layers);
  const double height = kTop + plot_h + kBottom;
  const std::string name = role == std::string("q") ? "Q" : "K";
  Svg svg(kW, height, name + " gain mean per layer over training");
  svg.text(kW / 2, 22, name + " gain mean per layer over training", "font-size:15px;font-weight:bold", "middle");
  const double cell_w = plot_w / static_cast<double>(n_steps);
  for (std::size_t s = 0; s < n_steps; ++s)
    for (std::size_t l = 0; l < n_layers; ++l) {
      const double v = val(cs[s]["layers"][l][role]["mean"]);
      svg.rect(kLeft + cell_w * static_cast<double>(s), kTop + cell_h * static_cast<double>(l), cell_w + 0.5, cell_h + 0.5,
               "fill:" + viridis((v - lo) / (hi - lo)), "cell");
    }
  svg.rect(kLeft, kTop, plot_w, plot_h, "fill:none;stroke:#444;stroke-width:1");
  const std::size_t every_l = std::max<std::size_t>(1, n_layers / 14);
  for (std::size_t l = 0; l < n_layers; l += every_l)
    svg.text(kLeft - 6, kTop + cell_h * (static_cast<double>(l) + 0.5) + 4, std::to_string(l), "font-size:10px", "end");
  const std::size_t every_s = std::max<std::size_t>(1, n_steps / 12);
  for (std::size_t s = 0; s < n_steps; s += every_s)
    svg.text(kLeft + cell_w * (static_cast<double>(s) + 0.5), kTop + plot_h + 14, stepLabel(cs[s], s), "font-size:10px", "middle");
  svg.text((kLeft + kW - kRight) / 2, kTop + plot_h + 34, "training step", "font-size:12px", "middle");
  svg.text(18, kTop + plot_h / 2, "layer", "font-size:12px", "middle", -90);
  // the colour bar
  const double bx = kW - kRight + 24, bh = std::max(plot_h, 80.0);
  for (int i = 0; i < 50; ++i)
    svg.rect(bx, kTop + bh * (1 - (i + 1) / 50.0), 14, bh / 50.0 + 0.5, "fill:" + viridis(i / 49.0), "colour-bar");
  svg.rect(bx, kTop, 14, bh, "fill:none;stroke:#444;stroke-width:0.5");
  for (int i = 0; i <= 4; ++i)
    svg.text(bx + 18, kTop + bh * (1 - i / 4.0) + 4, fixed(lo + (hi - lo) * i / 4.0, 3), "font-size:10px");
  svg.text(bx, kTop - 8, "mean gain", "font-size:10px");
  const std::string cap = "Each cell: the mean of one layer's " + name + " gain vector at one checkpoint. " + trackSource(t);
  const std::size_t cut = cap.size() <= 120 ? cap.size() : cap.rfind(' ', 120);
  svg.text(12, height - 34, cap.substr(0, cut), "font-size:10.5px;fill:#333");
  if (cut < cap.size()) svg.text(12, height - 20, cap.substr(cut + 1), "font-size:10.5px;fill:#333");
  return {std::string("track-heatmap-") + role + ".svg", name + " gain means, layer × step", cap, svg.str()};
}

Figure layerLines(const json& t) {
  const json& cs = t["checkpoints"];
  const std::size_t n_steps = cs.size(), n_layers = cs.empty() ? 0 : cs[0]["layers"].size();
  if (n_steps < 2 || n_layers == 0) return {};
  const bool by_step = !cs[0]["step"].is_null();
  auto x = [&](std::size_t s) { return by_step ? cs[s]["step"].get<double>() : static_cast<double>(s); };
  double lo = INFINITY, hi = -INFINITY;
  for (const auto& c : cs)
    for (const auto& l : c["layers"])
      for (const char* r : {"q", "k"}) {
        lo = std::min(lo, val(l[r]["mean"]));
        hi = std::max(hi, val(l[r]["mean"]));
      }
  const bool logy = lo > 0 && hi / lo > 10;
  Chart c("Q/K gain mean of every layer over training", by_step ? "training step" : "checkpoint (given order)",
          std::string("mean gain") + (logy ? " (log scale)" : ""), rangeOf(x(0), x(n_steps - 1), false, 0.02), rangeOf(lo, hi, logy));
  c.yTicks();
  std::vector<std::pair<double, std::string>> xt;
  for (std::size_t s = 0; s < n_steps; s += std::max<std::size_t>(1, n_steps / 10)) xt.emplace_back(x(s), stepLabel(cs[s], s));
  c.xTicks(xt);
  for (std::size_t l = 0; l < n_layers; ++l) {
    const std::string colour = viridis(n_layers == 1 ? 0 : static_cast<double>(l) / static_cast<double>(n_layers - 1));
    for (const char* r : {"q", "k"}) {
      std::vector<std::pair<double, double>> pts;
      for (std::size_t s = 0; s < n_steps; ++s) pts.emplace_back(c.X(x(s)), c.Y(val(cs[s]["layers"][l][r]["mean"])));
      c.svg.polyline(pts, "stroke:" + colour + ";stroke-width:1.6" + std::string(r[0] == 'k' ? ";stroke-dasharray:5,3" : ""), "layer");
    }
  }
  // legend: line styles, and the depth colour scale
  const double lx = kW - kRight + 10;
  c.svg.line(lx, kTop + 12, lx + 22, kTop + 12, "stroke:#333;stroke-width:1.6");
  c.svg.text(lx + 26, kTop + 16, "Q gain", "font-size:11px");
  c.svg.line(lx, kTop + 30, lx + 22, kTop + 30, "stroke:#333;stroke-width:1.6;stroke-dasharray:5,3");
  c.svg.text(lx + 26, kTop + 34, "K gain", "font-size:11px");
  for (int i = 0; i < 40; ++i) c.svg.rect(lx + i * 3.0, kTop + 48, 3.5, 10, "fill:" + viridis(i / 39.0), "depth-bar");
  c.svg.text(lx, kTop + 72, "layer 0", "font-size:10px");
  c.svg.text(lx + 120, kTop + 72, "layer " + std::to_string(n_layers - 1), "font-size:10px", "end");
  const std::string cap = "One line per layer and role (Q solid, K dashed), coloured by depth. " + trackSource(t);
  c.caption(cap);
  return {"track-layer-means.svg", "Q/K gain means over training", cap, c.svg.str()};
}

}  // namespace

std::vector<Figure> trackFigures(const json& t) {
  std::vector<Figure> out;
  for (Figure f : {heatmap(t, "q"), heatmap(t, "k"), layerLines(t)})
    if (!f.svg.empty()) out.push_back(std::move(f));
  return out;
}

}  // namespace omn::report
