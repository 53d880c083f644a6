// The figures of a sweep result (omn-audit/intervention@1): perplexity against the constant, the
// paired ratio per condition, the layer-selective heatmap, the mechanism statistics per layer.
#include <map>

#include "chart.h"
#include "omn/report/plots.h"
#include "omn/output/table.h"

namespace omn::report {
using output::fixed;
using output::general;
using output::significant;
using output::ciLabel;


namespace {

using namespace chart;  // NOLINT

// --- sweep ---------------------------------------------------------------------------------------

Figure pplVsConstant(const json& r) {
  const json& ctl = r["control"]["open"]["result"];
  std::vector<std::string> targets = {"q", "k", "qk"};
  double xlo = INFINITY, xhi = -INFINITY, ylo = val(ctl["perplexity_ci"]["low"]), yhi = val(ctl["perplexity_ci"]["high"]);
  for (const auto& c : r["conditions"])
    if (c["op"]["op"] == "constant" && c["op"]["layers"] == "all" && !c["op"].contains("coordinates")) {
      const double v = c["op"]["value"].get<double>();
      if (v <= 0) continue;
      xlo = std::min(xlo, v);
      xhi = std::max(xhi, v);
      for (const char* k : {"low", "high"})
        if (std::isfinite(val(c["result"]["perplexity_ci"][k]))) {
          ylo = std::min(ylo, val(c["result"]["perplexity_ci"][k]));
          yhi = std::max(yhi, val(c["result"]["perplexity_ci"][k]));
        }
    }
  if (!std::isfinite(xlo)) return {};
  Axis x = rangeOf(xlo / 1.3, xhi * 1.3, true);
  Axis y = rangeOf(ylo / 1.05, yhi * 1.05, true);
  Chart c("Perplexity when every gain is replaced by a constant", "constant c (log scale)", "perplexity (log scale)", x, y);
  c.yTicks();
  std::vector<std::pair<double, std::string>> xt;
  for (double t : x.ticks(6)) xt.emplace_back(t, general(t));
  c.xTicks(xt);
  // the control: its CI as a band, its estimate as a line
  c.svg.rect(kLeft, c.Y(val(ctl["perplexity_ci"]["high"])), kW - kLeft - kRight,
             c.Y(val(ctl["perplexity_ci"]["low"])) - c.Y(val(ctl["perplexity_ci"]["high"])), "fill:#999;opacity:0.25", "control-band");
  c.svg.line(kLeft, c.Y(val(ctl["perplexity"])), kW - kRight, c.Y(val(ctl["perplexity"])), "stroke:#555;stroke-width:1.5;stroke-dasharray:6,3");
  std::vector<std::pair<std::string, std::string>> legend;
  for (std::size_t t = 0; t < targets.size(); ++t) {
    std::vector<std::pair<double, double>> pts;
    std::vector<const json*> conds;
    for (const auto& cd : r["conditions"])
      if (cd["op"]["op"] == "constant" && cd["op"]["layers"] == "all" && !cd["op"].contains("coordinates") && cd["op"]["target"] == targets[t] &&
          cd["op"]["value"].get<double>() > 0)
        conds.push_back(&cd);
    std::sort(conds.begin(), conds.end(), [](const json* a, const json* b) { return (*a)["op"]["value"] < (*b)["op"]["value"]; });
    if (conds.empty()) continue;
    const std::string colour = kColours[t];
    const double dx = (static_cast<double>(t) - 1.0) * 4;  // side by side, not on top of each other
    for (const json* cd : conds) {
      const double px = c.X((*cd)["op"]["value"].get<double>()) + dx;
      const double ppl = val((*cd)["result"]["perplexity"]);
      if (!std::isfinite(ppl)) continue;
      const double lo = val((*cd)["result"]["perplexity_ci"]["low"]), hi = val((*cd)["result"]["perplexity_ci"]["high"]);
      c.svg.line(px, c.Y(lo), px, c.Y(hi), "stroke:" + colour + ";stroke-width:1.5", "whisker");
      pts.emplace_back(px, c.Y(ppl));
      c.svg.circle(px, c.Y(ppl), 4, "fill:" + colour, "point",
                   (*cd)["label"].get<std::string>() + ": perplexity " + fixed(ppl, 3));
    }
    c.svg.polyline(pts, "stroke:" + colour + ";stroke-width:1.5");
    legend.emplace_back(colour, targets[t] == "qk" ? "Q and K" : targets[t] == "q" ? "Q only" : "K only");
  }
  legend.emplace_back("#999", "control (" + ciLabel(r["control"]["open"]["result"]["perplexity_ci"]["confidence"].get<double>()) + ")");
  c.legend(legend);
  const std::string cap = "Every Q/K gain of all layers replaced by c; whiskers: bootstrap " +
                          ciLabel(r["control"]["open"]["result"]["perplexity_ci"]["confidence"].get<double>()) +
                          " over sequences; band: the unmodified checkpoint. " + sourceLine(r);
  c.caption(cap);
  return {"sweep-ppl-vs-constant.svg", "Perplexity against the constant", cap, c.svg.str()};
}

Figure ratios(const json& r) {
  const json& cs = r["conditions"];
  const int n = static_cast<int>(cs.size());
  double lo = 1, hi = 1;
  for (const auto& c : cs)
    for (const char* k : {"estimate", "low", "high"}) {
      const double v = val(c["vs_control"]["ppl_ratio"][k]);
      if (std::isfinite(v) && v > 0) {
        lo = std::min(lo, v);
        hi = std::max(hi, v);
      }
    }
  Axis x{-0.5, n - 0.5, false};
  Axis y = rangeOf(lo / 1.02, hi * 1.02, true);
  Chart c("Perplexity ratio against the control, per condition", "condition", "perplexity ratio (paired, log scale)", x, y);
  c.yTicks();
  std::vector<std::pair<double, std::string>> xt;
  for (int i = 0; i < n; ++i) xt.emplace_back(i, cs[i]["id"].get<std::string>());
  c.xTicks(xt, n > 12);
  c.svg.line(kLeft, c.Y(1), kW - kRight, c.Y(1), "stroke:#555;stroke-width:1.5;stroke-dasharray:6,3", "unity");
  std::map<std::string, std::string> colour_of;
  std::vector<std::pair<std::string, std::string>> legend;
  for (int i = 0; i < n; ++i) {
    const std::string op = cs[i]["op"]["op"];
    if (!colour_of.count(op)) {
      colour_of[op] = kColours[colour_of.size() % 9];
      legend.emplace_back(colour_of[op], op);
    }
    const json& q = cs[i]["vs_control"]["ppl_ratio"];
    const double e = val(q["estimate"]);
    if (!std::isfinite(e)) {
      c.svg.text(c.X(i), kTop + 14, "NaN", "font-size:10px;fill:#d62728", "middle");
      continue;
    }
    c.svg.line(c.X(i), c.Y(val(q["low"])), c.X(i), c.Y(val(q["high"])), "stroke:" + colour_of[op] + ";stroke-width:1.5", "whisker");
    c.svg.circle(c.X(i), c.Y(e), 4, "fill:" + colour_of[op], "point",
                 cs[i]["id"].get<std::string>() + " " + cs[i]["label"].get<std::string>() + ": ratio " + fixed(e, 4));
  }
  c.legend(legend);
  const std::string cap = "Perplexity of each condition divided by the control's on the same sequences, with the paired "
                          "bootstrap CI (the same resampled sequences for both); labels in the results table. " + sourceLine(r);
  c.caption(cap);
  return {"sweep-ratio.svg", "Ratio against the control", cap, c.svg.str()};
}

Figure heatmap(const json& r) {
  std::vector<const json*> sel;
  for (const auto& c : r["conditions"])
    if (c["op"].contains("layers") && c["op"]["layers"] != "all") sel.push_back(&c);  // a composite has no one layer set
  if (sel.empty()) return {};
  const int L = r["model"]["config"]["n_layers"].get<int>();
  double amax = 1e-12;
  for (const json* c : sel) amax = std::max(amax, std::fabs(val((*c)["vs_control"]["delta_nll_per_token"]["estimate"])));
  const double cell_w = (kW - kLeft - kRight) / L;
  const double cell_h = std::min(24.0, (kH - kTop - kBottom) / static_cast<double>(sel.size()));
  Chart c("ΔNLL per token of layer-selective conditions", "layer", "", Axis{-0.5, L - 0.5, false}, Axis{0, 1, false});
  for (std::size_t k = 0; k < sel.size(); ++k) {
    const json& cd = *sel[k];
    const double d = val(cd["vs_control"]["delta_nll_per_token"]["estimate"]);
    const double y0 = kTop + cell_h * static_cast<double>(k);
    c.svg.text(kLeft - 6, y0 + cell_h * 0.7, cd["id"].get<std::string>(), "font-size:10px", "end");
    for (const auto& name : cd["touched"]) {
      // the layer index is the number in the tensor name
      const std::string n = name.get<std::string>();
      const auto p = n.find_first_of("0123456789");
      if (p == std::string::npos) continue;
      const int l = std::stoi(n.substr(p));
      const double s = std::isfinite(d) ? std::min(1.0, std::fabs(d) / amax) : 1.0;
      const int shade = static_cast<int>(255 - 200 * s);
      const std::string fill = !std::isfinite(d) ? "#000000"
                               : d >= 0 ? "rgb(255," + std::to_string(shade) + "," + std::to_string(shade) + ")"
                                        : "rgb(" + std::to_string(shade) + "," + std::to_string(shade) + ",255)";
      c.svg.rect(kLeft + cell_w * l, y0, cell_w, cell_h - 1, "fill:" + fill + ";stroke:#fff", "cell");
    }
  }
  std::vector<std::pair<double, std::string>> xt;
  for (int i = 0; i < L; i += std::max(1, L / 14)) xt.emplace_back(i, std::to_string(i));
  c.xTicks(xt);
  c.legend({{"rgb(255,55,55)", "ΔNLL > 0 (worse)"}, {"rgb(55,55,255)", "ΔNLL < 0 (better)"},
            {"#ffffff", "max |Δ| " + significant(amax, 3) + " nats"}});
  const std::string cap = "Each row a condition touching only some layers (cells: the layers it touched), coloured by its "
                          "paired ΔNLL per token against the control. " + sourceLine(r);
  c.caption(cap);
  return {"sweep-heatmap.svg", "Layer-selective conditions", cap, c.svg.str()};
}

Figure mechanism(const json& r, const char* key, const char* title, const char* ylabel, const char* file) {
  const json& ctl = r["control"]["open"]["mechanism"];
  if (!ctl.is_array() || ctl.empty()) return {};
  const int L = static_cast<int>(ctl.size());
  double lo = INFINITY, hi = -INFINITY;
  auto scan = [&](const json& m) {
    for (const auto& x : m)
      if (!x[key].is_null()) {
        lo = std::min(lo, x[key].get<double>());
        hi = std::max(hi, x[key].get<double>());
      }
  };
  scan(ctl);
  for (const auto& c : r["conditions"])
    if (c["mechanism"].is_array()) scan(c["mechanism"]);
  Chart c(title, "layer", ylabel, Axis{-0.5, L - 0.5, false}, rangeOf(lo, hi, false));
  c.yTicks();
  std::vector<std::pair<double, std::string>> xt;
  for (int i = 0; i < L; i += std::max(1, L / 14)) xt.emplace_back(i, std::to_string(i));
  c.xTicks(xt);
  std::vector<std::pair<std::string, std::string>> legend;
  auto series = [&](const json& m, const std::string& colour, double width, const std::string& label) {
    std::vector<std::pair<double, double>> pts;
    for (int l = 0; l < L; ++l)
      if (!m[l][key].is_null()) pts.emplace_back(c.X(l), c.Y(m[l][key].get<double>()));
    c.svg.polyline(pts, "stroke:" + colour + ";stroke-width:" + num(width), "series");
    if (legend.size() < 9) legend.emplace_back(colour, label);
  };
  std::size_t k = 0;
  for (const auto& cd : r["conditions"])
    if (cd["mechanism"].is_array()) series(cd["mechanism"], kColours[k++ % 8 + 1], 1.2, cd["id"].get<std::string>());
  series(ctl, "#000000", 2.5, "control");
  c.legend(legend);
  const std::string cap = std::string(title) + " for the control (black) and each condition (ids as in the results table). " +
                          sourceLine(r);
  c.caption(cap);
  return {file, title, cap, c.svg.str()};
}

}  // namespace

std::vector<Figure> sweepFigures(const json& r) {
  std::vector<Figure> out;
  for (Figure f : {pplVsConstant(r), ratios(r), heatmap(r),
                   mechanism(r, "mean_attention_entropy", "Mean attention entropy per layer", "entropy (nats)",
                             "sweep-mechanism-entropy.svg"),
                   mechanism(r, "max_logit", "Largest pre-softmax attention logit per layer", "logit",
                             "sweep-mechanism-max-logit.svg")})
    if (!f.name.empty()) out.push_back(std::move(f));
  return out;
}

}  // namespace omn::report
