#include "omn/report/plots.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "omn/errors.h"
#include "omn/report/svg.h"
#include "omn/report/table.h"

namespace omn::report {

using nlohmann::json;

namespace {

constexpr double kW = 760, kH = 440, kLeft = 78, kRight = 170, kTop = 44, kBottom = 96;
const char* kColours[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf", "#7f7f7f"};

std::string prefix(const json& v) { return v.is_string() ? v.get<std::string>().substr(0, 12) : std::string("n/a"); }

// A chart: the plot area, its axes and ticks, a legend at the right, a caption under it.
class Chart {
 public:
  Chart(const std::string& title, const std::string& xlabel, const std::string& ylabel, Axis x, Axis y)
      : svg(kW, kH, title), x_(x), y_(y) {
    svg.text(kW / 2, 22, title, "font-size:15px;font-weight:bold", "middle");
    svg.rect(kLeft, kTop, kW - kLeft - kRight, kH - kTop - kBottom, "fill:#fafafa;stroke:#444;stroke-width:1");
    svg.text((kLeft + kW - kRight) / 2, kH - kBottom + 38, xlabel, "font-size:12px", "middle");
    svg.text(18, (kTop + kH - kBottom) / 2, ylabel, "font-size:12px", "middle", -90);
  }
  double X(double v) const { return x_.map(v, kLeft, kW - kRight); }
  double Y(double v) const { return y_.map(v, kH - kBottom, kTop); }
  void yTicks() {
    for (double t : y_.ticks(6)) {
      const double py = Y(t);
      svg.line(kLeft, py, kW - kRight, py, "stroke:#ddd;stroke-width:1");
      svg.text(kLeft - 6, py + 4, general(t), "font-size:11px", "end");
    }
  }
  void xTicks(const std::vector<std::pair<double, std::string>>& ticks, bool rotate = false) {
    for (const auto& [v, label] : ticks) {
      const double px = X(v);
      svg.line(px, kH - kBottom, px, kH - kBottom + 5, "stroke:#444");
      if (rotate) svg.text(px + 3, kH - kBottom + 14, label, "font-size:10px", "end", -40);
      else svg.text(px, kH - kBottom + 18, label, "font-size:11px", "middle");
    }
  }
  void legend(const std::vector<std::pair<std::string, std::string>>& entries) {  // colour, label
    double y = kTop + 8;
    for (const auto& [colour, label] : entries) {
      svg.rect(kW - kRight + 12, y, 14, 10, "fill:" + colour);
      svg.text(kW - kRight + 32, y + 9, label, "font-size:11px");
      y += 18;
    }
  }
  void caption(const std::string& text) {
    // wrapped at ~120 characters on up to three lines
    std::string rest = text;
    double y = kH - kBottom + 60;
    while (!rest.empty() && y < kH - 4) {
      std::size_t cut = rest.size() <= 120 ? rest.size() : rest.rfind(' ', 120);
      if (cut == std::string::npos || cut == 0) cut = std::min<std::size_t>(120, rest.size());
      svg.text(12, y, rest.substr(0, cut), "font-size:10.5px;fill:#333");
      rest = rest.substr(std::min(rest.size(), cut + 1));
      y += 14;
    }
  }
  Svg svg;

 private:
  Axis x_, y_;
};

Axis rangeOf(double lo, double hi, bool log, double pad = 0.05) {
  Axis a;
  a.log = log;
  if (log) {
    lo = std::max(lo, std::numeric_limits<double>::min());
    a.lo = std::pow(10.0, std::floor(std::log10(lo) * 4) / 4);
    a.hi = std::pow(10.0, std::ceil(std::log10(hi) * 4) / 4);
    if (a.hi <= a.lo) a.hi = a.lo * 10;
  } else {
    const double span = hi > lo ? hi - lo : std::max(1.0, std::fabs(hi));
    a.lo = lo - pad * span;
    a.hi = hi + pad * span;
  }
  return a;
}

std::string sourceLine(const json& doc) {
  const json& ck = doc.contains("checkpoint") ? doc["checkpoint"] : json::object();
  std::string s = "checkpoint sha256 " + prefix(ck.value("sha256", json())) + "…";
  if (doc.contains("tokens")) s += " · tokens sha256 " + prefix(doc["tokens"].value("sha256", json())) + "…";
  s += " · omn-audit " + doc["provenance"].value("version", "?") + " (" + doc["provenance"].value("git_revision", "?") + ")";
  return s;
}

// --- profile -------------------------------------------------------------------------------------

Figure layerMeans(const json& p, bool log) {
  const json& layers = p["layers"];
  const int n = static_cast<int>(layers.size());
  double lo = INFINITY, hi = -INFINITY, lo_pos = INFINITY;
  for (const auto& l : layers)
    for (const char* r : {"q", "k"}) {
      lo = std::min(lo, l[r]["min"].get<double>());
      hi = std::max(hi, l[r]["max"].get<double>());
      for (const char* k : {"min", "mean"})
        if (l[r][k].get<double>() > 0) lo_pos = std::min(lo_pos, l[r][k].get<double>());
    }
  Axis x{-0.5, n - 0.5, false};
  Axis y = log ? rangeOf(lo_pos, hi, true) : rangeOf(std::min(lo, 0.0), hi, false);
  Chart c(std::string("Q/K gain per layer: mean and min–max band") + (log ? " (log scale)" : ""), "layer",
          "effective gain (×, unit initialisation = 1)", x, y);
  c.yTicks();
  std::vector<std::pair<double, std::string>> xt;
  for (int i = 0; i < n; i += std::max(1, n / 14)) xt.emplace_back(i, std::to_string(i));
  c.xTicks(xt);
  // the first two layers, visibly apart
  if (n > 2) {
    c.svg.rect(c.X(-0.5), 44, c.X(1.5) - c.X(-0.5), kH - kTop - kBottom, "fill:#fff3cd;opacity:0.7");
    c.svg.text(c.X(0.5), 58, "layers 0–1", "font-size:11px;fill:#8a6d3b", "middle");
  }
  const char* colour[2] = {kColours[0], kColours[1]};
  for (int r = 0; r < 2; ++r) {
    const char* role = r == 0 ? "q" : "k";
    std::vector<std::pair<double, double>> band, mean;
    for (int i = 0; i < n; ++i) band.emplace_back(c.X(i), c.Y(layers[i][role]["max"].get<double>()));
    for (int i = n - 1; i >= 0; --i) band.emplace_back(c.X(i), c.Y(layers[i][role]["min"].get<double>()));
    c.svg.polygon(band, std::string("fill:") + colour[r] + ";opacity:0.15;stroke:none", "band");
    for (int i = 0; i < n; ++i) mean.emplace_back(c.X(i), c.Y(layers[i][role]["mean"].get<double>()));
    c.svg.polyline(mean, std::string("stroke:") + colour[r] + ";stroke-width:2");
    for (int i = 0; i < n; ++i)
      c.svg.circle(mean[static_cast<std::size_t>(i)].first, mean[static_cast<std::size_t>(i)].second, 3.2,
                   std::string("fill:") + colour[r], std::string("point ") + role,
                   "layer " + std::to_string(i) + " " + role + " mean " + fixed(layers[i][role]["mean"].get<double>(), 3));
  }
  c.legend({{kColours[0], "Q mean"}, {kColours[1], "K mean"}, {"#c8d7ea", "min–max band"}});
  const json& sc = p["steepest_change"]["all"];
  std::string cap = "Per-layer mean of the effective Q and K gains with their min–max band";
  if (!sc["from"].is_null())
    cap += "; steepest change layer " + sc["from"].dump() + "→" + sc["to"].dump() + " (" + fixed(sc["delta"].get<double>(), 3) + ")";
  if (log && lo <= 0) cap += "; log scale: values ≤ 0 are drawn at the axis floor";
  cap += ". " + sourceLine(p);
  c.caption(cap);
  return {log ? "profile-layer-means-log.svg" : "profile-layer-means.svg", "Q/K gain per layer", cap, c.svg.str()};
}

Figure histogram(const json& p) {
  const json& h = p["histogram"];
  const int n = static_cast<int>(h.size());
  double hi = 1;
  for (const auto& b : h) hi = std::max(hi, b["count"].get<double>());
  Axis x{0, static_cast<double>(n), false};
  Axis y = rangeOf(0.8, hi * 1.5, true);
  Chart c("Histogram of all Q/K gains", "effective gain (bin)", "count (log scale)", x, y);
  c.yTicks();
  std::vector<std::pair<double, std::string>> xt;
  for (int j = 0; j < n; ++j) xt.emplace_back(j + 0.5, h[j]["label"].get<std::string>());
  c.xTicks(xt);
  for (int j = 0; j < n; ++j) {
    const double cnt = h[j]["count"].get<double>();
    if (cnt <= 0) continue;
    c.svg.rect(c.X(j + 0.1), c.Y(cnt), c.X(j + 0.9) - c.X(j + 0.1), c.Y(y.lo) - c.Y(cnt), std::string("fill:") + kColours[0], "bar");
    c.svg.text(c.X(j + 0.5), c.Y(cnt) - 4, std::to_string(static_cast<long long>(cnt)), "font-size:10px", "middle");
  }
  // the threshold inside its bin, by linear interpolation between the bin's edges
  const double t = p["options"]["threshold"].get<double>();
  for (int j = 1; j + 1 < n; ++j) {
    const double a = h[j]["lo"].get<double>(), b = h[j]["hi"].get<double>();
    if (t >= a && t <= b) {
      const double px = c.X(j + (t - a) / (b - a));
      c.svg.line(px, kTop, px, kH - kBottom, "stroke:#d62728;stroke-width:2;stroke-dasharray:5,3", "threshold");
      c.svg.text(px + 4, kTop + 14, "threshold " + general(t), "font-size:11px;fill:#d62728");
    }
  }
  c.legend({{kColours[0], "gains per bin"}, {"#d62728", "threshold"}});
  const json& s = p["statistics"];
  const std::string cap = "All " + s["count"].dump() + " gains: " + fixed(100 * s["share_above_threshold"].get<double>(), 4) +
                          "% above " + general(t) + ", " + s["count_negative"].dump() + " negative, max " +
                          general(s["max"].get<double>()) + ". " + sourceLine(p);
  c.caption(cap);
  return {"profile-histogram.svg", "Histogram of the gains", cap, c.svg.str()};
}

Figure asymmetry(const json& p) {
  const json& layers = p["layers"];
  const int n = static_cast<int>(layers.size());
  double hi = 0;
  for (const auto& l : layers)
    for (const char* r : {"q", "k"}) hi = std::max(hi, l[r]["rope_pair_asymmetry"]["mean_abs_diff"].get<double>());
  Axis x{-0.5, n - 0.5, false};
  Chart c("RoPE-pair asymmetry of the gains per layer", "layer", "mean |g[i] − g[pair(i)]| (×)", x, rangeOf(0, hi, false));
  c.yTicks();
  std::vector<std::pair<double, std::string>> xt;
  for (int i = 0; i < n; i += std::max(1, n / 14)) xt.emplace_back(i, std::to_string(i));
  c.xTicks(xt);
  for (int r = 0; r < 2; ++r) {
    const char* role = r == 0 ? "q" : "k";
    std::vector<std::pair<double, double>> pts;
    for (int i = 0; i < n; ++i) pts.emplace_back(c.X(i), c.Y(layers[i][role]["rope_pair_asymmetry"]["mean_abs_diff"].get<double>()));
    c.svg.polyline(pts, std::string("stroke:") + kColours[r] + ";stroke-width:2");
    for (const auto& [px, py] : pts) c.svg.circle(px, py, 3, std::string("fill:") + kColours[r], std::string("point ") + role);
  }
  c.legend({{kColours[0], "Q"}, {kColours[1], "K"}});
  const std::string cap = "Mean absolute difference between the gains of each RoPE pair (" + p["gains"]["rope_style"].get<std::string>() +
                          "): a gain that differs within a pair does not commute with the rotation. " + sourceLine(p);
  c.caption(cap);
  return {"profile-rope-asymmetry.svg", "RoPE-pair asymmetry", cap, c.svg.str()};
}

// --- sweep ---------------------------------------------------------------------------------------

double val(const json& v) { return v.is_null() ? std::nan("") : v.get<double>(); }

Figure pplVsConstant(const json& r) {
  const json& ctl = r["control"]["open"]["result"];
  std::vector<std::string> targets = {"q", "k", "qk"};
  double xlo = INFINITY, xhi = -INFINITY, ylo = val(ctl["perplexity_ci"]["low"]), yhi = val(ctl["perplexity_ci"]["high"]);
  for (const auto& c : r["conditions"])
    if (c["op"]["op"] == "constant" && c["op"]["layers"] == "all") {
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
      if (cd["op"]["op"] == "constant" && cd["op"]["layers"] == "all" && cd["op"]["target"] == targets[t] &&
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
  legend.emplace_back("#999", "control (95% CI)");
  c.legend(legend);
  const std::string cap = "Every Q/K gain of all layers replaced by c; whiskers: " +
                          fixed(100 * r["control"]["open"]["result"]["perplexity_ci"]["confidence"].get<double>(), 0) +
                          "% bootstrap CI over sequences; band: the unmodified checkpoint. " + sourceLine(r);
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
    if (c["op"]["layers"] != "all") sel.push_back(&c);
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

std::vector<Figure> profileFigures(const json& p) { return {layerMeans(p, false), layerMeans(p, true), histogram(p), asymmetry(p)}; }

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

std::vector<Figure> figuresFor(const json& doc, const std::string& path) {
  const std::string schema = doc.is_object() ? doc.value("schema", "") : "";
  if (schema == "omn-audit/profile@1") return profileFigures(doc);
  if (schema == "omn-audit/intervention@1") return sweepFigures(doc);
  throw UsageError(path + ": /schema: expected \"omn-audit/profile@1\" or \"omn-audit/intervention@1\", got \"" + schema + "\"");
}

}  // namespace omn::report
