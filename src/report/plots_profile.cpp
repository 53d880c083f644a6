// The figures of a profile (omn-audit/profile@1) — layer means with their min–max band, the
// histogram with the threshold, RoPE-pair asymmetry — and the choice of figures by schema.
#include "omn/report/plots.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "omn/errors.h"
#include "omn/output/table.h"
#include "chart.h"

namespace omn::report {
using output::fixed;
using output::general;


using nlohmann::json;

namespace {

using namespace chart;  // NOLINT

// --- profile -------------------------------------------------------------------------------------

struct Role {
  const char* key;
  const char* name;
  const char* colour;
  const char* shape;
  const char* dash;
};
constexpr Role kRoles[] = {{"q", "Q", "#1f77b4", "circle", ""}, {"k", "K", "#d62728", "square", "6,3"}};

std::vector<std::pair<double, std::string>> layerTicks(int n) {
  std::vector<std::pair<double, std::string>> xt;
  for (int i = 0; i < n; i += std::max(1, n / 14)) xt.emplace_back(i, std::to_string(i));
  return xt;
}

Figure layerMeans(const json& p, bool log) {
  const json& layers = p["layers"];
  const int n = static_cast<int>(layers.size());
  // a layer whose gains are all NaN/inf has null statistics: it is left out of the lines
  auto finite = [&](int i, const char* role) { return layers[i][role]["mean"].is_number() && layers[i][role]["min"].is_number() && layers[i][role]["max"].is_number(); };
  double lo = INFINITY, hi = -INFINITY, lo_pos = INFINITY;
  for (const auto& l : layers)
    for (const char* r : {"q", "k"}) {
      if (!l[r]["min"].is_number() || !l[r]["max"].is_number() || !l[r]["mean"].is_number()) continue;
      lo = std::min(lo, l[r]["min"].get<double>());
      hi = std::max(hi, l[r]["max"].get<double>());
      for (const char* k : {"min", "mean"})
        if (l[r][k].get<double>() > 0) lo_pos = std::min(lo_pos, l[r][k].get<double>());
    }
  if (!std::isfinite(hi)) lo = 0, hi = 1, lo_pos = 1;
  if (!std::isfinite(lo_pos)) lo_pos = std::min(1.0, hi);
  Axis x{-0.5, n - 0.5, false};
  // linear: the gains' own range with 1 (the unit initialisation) in it, not from 0, where gains near
  // 1 would lie flat
  Axis y = log ? rangeOf(lo_pos, hi, true) : rangeOf(std::min(lo, 1.0), std::max(hi, 1.0), false);
  Chart c(std::string("Q/K gain per layer: mean and min–max band") + (log ? " (log scale)" : ""), "layer",
          "effective gain (×, unit initialisation = 1)", x, y);
  c.yTicks();
  c.xTicks(layerTicks(n));
  // OMN-1's first two layers, where the audit reports its early regime (means near 25), visibly
  // apart; on any other model no layer is singled out by name
  if (n > 2 && p["preset"]["name"] == "omn-1") {
    c.svg.rect(c.X(-0.5), kTop, c.X(1.5) - c.X(-0.5), c.bottom() - kTop, "fill:#fff3cd;opacity:0.7", "layers-0-1");
    c.svg.text(c.X(-0.5) + 4, c.bottom() - 6, "layers 0–1 (the audit's early regime)", "font-size:10px;fill:#8a6d3b", "start", 0,
               "annotation");
  }
  std::vector<Key> keys;
  for (const Role& role : kRoles) {
    std::vector<std::pair<double, double>> band;
    for (int i = 0; i < n; ++i)
      if (finite(i, role.key)) band.emplace_back(c.X(i), c.Y(layers[i][role.key]["max"].get<double>()));
    for (int i = n - 1; i >= 0; --i)
      if (finite(i, role.key)) band.emplace_back(c.X(i), c.Y(layers[i][role.key]["min"].get<double>()));
    c.beginSeries(std::string(role.name) + " min–max");
    c.svg.polygon(band, std::string("fill:") + role.colour + ";opacity:0.13;stroke:" + role.colour + ";stroke-opacity:0.35", "band");
    c.endSeries();
  }
  for (const Role& role : kRoles) {
    // K is drawn dashed with squares over Q's solid line and circles, half a marker to the right:
    // where the means agree both stay visible
    const double dx = role.key[0] == 'k' ? 3 : 0;
    std::vector<std::pair<double, double>> mean;
    for (int i = 0; i < n; ++i)
      if (finite(i, role.key)) {
        const json& s = layers[i][role.key];
        mean.emplace_back(c.X(i) + dx, c.Y(s["mean"].get<double>()));
        c.data(std::string(role.name) + " mean", i, s["mean"].get<double>(), s["min"].get<double>(), s["max"].get<double>());
      }
    c.beginSeries(std::string(role.name) + " mean");
    c.svg.polyline(mean, std::string("stroke:") + role.colour + ";stroke-width:2" + (*role.dash ? std::string(";stroke-dasharray:") + role.dash : ""));
    for (int i = 0, k = 0; i < n; ++i) {
      if (!finite(i, role.key)) continue;
      const auto& pt = mean[static_cast<std::size_t>(k++)];
      c.marker(role.shape, pt.first, pt.second, 3.4, role.colour,
               "layer " + std::to_string(i) + " " + role.key + " mean " + fixed(layers[i][role.key]["mean"].get<double>(), 3));
    }
    c.endSeries();
    keys.push_back({Key::Mark::line, role.colour, std::string(role.name) + " mean", "", role.dash, role.shape});
  }
  for (const Role& role : kRoles) keys.push_back({Key::Mark::band, role.colour, std::string(role.name) + " min–max"});
  c.legend(keys);
  const json& sc = p["steepest_change"]["all"];
  std::string cap = "Per-layer mean of the effective Q and K gains with their min–max bands";
  if (sc["from"].is_number() && sc["delta"].is_number())
    cap += "; steepest change layer " + sc["from"].dump() + "→" + sc["to"].dump() + " (" + fixed(sc["delta"].get<double>(), 3) + ")";
  if (log && lo <= 0) cap += "; log scale: values ≤ 0 are drawn at the axis floor";
  cap += ". " + sourceLine(p);
  c.caption(cap);
  return c.figure(log ? "profile-layer-means-log.svg" : "profile-layer-means.svg", "Q/K gain per layer", cap);
}

// The histogram of the gains in the data's own bins (/distribution, equal width over [min, max]) on
// a linear gain axis, the --threshold line where it falls inside them.
Figure distribution(const json& p) {
  const json& bins = p["distribution"]["bins"];
  const std::size_t n = bins.size();
  if (n == 0) return {};
  double top = 1;
  for (const auto& b : bins) top = std::max(top, b["count"].get<double>());
  const double lo = bins.front()["lo"].get<double>(), hi = bins.back()["hi"].get<double>();
  const double pad = hi > lo ? (hi - lo) * 0.02 : 0.5;
  Chart c("Histogram of all Q/K gains", "effective gain", "count (log scale)", Axis{lo - pad, hi + pad, false},
          rangeOf(0.8, top * 1.6, true));
  c.yTicks();
  c.xTicksAuto();
  c.beginSeries("gains per bin");
  for (const auto& b : bins) {
    const double cnt = b["count"].get<double>(), a = b["lo"].get<double>(), e = b["hi"].get<double>();
    c.data("gains per bin", a, cnt, a, e, "[" + general(a) + ", " + general(e) + ")");
    if (cnt <= 0) continue;
    const double x0 = c.X(a), x1 = std::max(c.X(e), x0 + 1.0);
    c.svg.rect(x0 + 0.5, c.Y(cnt), x1 - x0 - 1.0, c.Y(0.8) - c.Y(cnt), "fill:#1f77b4", "bar");
  }
  c.endSeries();
  const double t = p["options"]["threshold"].get<double>();
  const bool drawn = drawsThreshold(p), inside = drawn && t >= lo && t <= hi;
  if (inside) {
    c.beginSeries("threshold");
    c.svg.line(c.X(t), kTop, c.X(t), c.bottom(), "stroke:#d62728;stroke-width:2;stroke-dasharray:5,3", "threshold");
    c.endSeries();
  }
  std::vector<Key> keys = {{Key::Mark::box, "#1f77b4", "gains per bin"}};
  if (inside) keys.push_back({Key::Mark::line, "#d62728", "--threshold " + general(t), "threshold", "5,3"});
  c.legend(keys);
  const json& s = p["statistics"];
  const bool any_finite = s["share_above_threshold"].is_number() && s["max"].is_number();
  const std::string cap = "All " + s["count"].dump() + " gains in " + std::to_string(n) + " equal bins over [" + fixed(lo, 3) + ", " +
                          fixed(hi, 3) + "] (Rice's rule: bins from the data, not from --hist-edges); " +
                          (!any_finite ? std::string("none finite")
                           : drawn ? fixed(100 * s["share_above_threshold"].get<double>(), 4) + "% above " + general(t) +
                                         (inside ? "" : " (outside the gains' range: no line)") + ", " + s["count_negative"].dump() + " negative"
                                   : s["count_negative"].dump() + " negative") +
                          ". " + sourceLine(p);
  c.caption(cap);
  return c.figure("profile-histogram.svg", "Histogram of the gains", cap);
}

// A profile written before /distribution: the configured --hist-edges bins.
Figure histogram(const json& p) {
  if (p.contains("distribution") && !p["distribution"]["bins"].empty()) return distribution(p);  // none finite: the configured bins
  const json& h = p["histogram"];
  const int n = static_cast<int>(h.size());
  double hi = 1;
  for (const auto& b : h) hi = std::max(hi, b["count"].get<double>());
  Axis x{0, static_cast<double>(n), false};
  Axis y = rangeOf(0.8, hi * 1.6, true);
  Chart c("Histogram of all Q/K gains", "effective gain (bin)", "count (log scale)", x, y);
  c.yTicks();
  std::vector<std::pair<double, std::string>> xt;
  for (int j = 0; j < n; ++j) xt.emplace_back(j + 0.5, h[j]["label"].get<std::string>());
  c.xTicks(xt);
  c.beginSeries("gains per bin");
  for (int j = 0; j < n; ++j) {
    const double cnt = h[j]["count"].get<double>();
    c.data("gains per bin", j, cnt, NAN, NAN, h[j]["label"].get<std::string>());
    if (cnt <= 0) continue;
    c.svg.rect(c.X(j + 0.1), c.Y(cnt), c.X(j + 0.9) - c.X(j + 0.1), c.Y(y.lo) - c.Y(cnt), "fill:#1f77b4", "bar");
    c.svg.text(c.X(j + 0.5), c.Y(cnt) - 4, std::to_string(static_cast<long long>(cnt)), "font-size:10px;paint-order:stroke;stroke:#fafafa;stroke-width:3px", "middle", 0, "bar-count");
  }
  c.endSeries();
  // the threshold inside its bin, by linear interpolation between the bin's edges; named in the
  // legend (a dashed line, as drawn), so no label in the plot competes with the bar counts
  const double t = p["options"]["threshold"].get<double>();
  const bool drawn = drawsThreshold(p);
  c.beginSeries("threshold");
  for (int j = 1; drawn && j + 1 < n; ++j) {
    const double a = h[j]["lo"].get<double>(), b = h[j]["hi"].get<double>();
    if (t >= a && t <= b && b > a) {
      const double px = c.X(j + (t - a) / (b - a));
      c.svg.line(px, kTop, px, c.bottom(), "stroke:#d62728;stroke-width:2;stroke-dasharray:5,3", "threshold");
      break;
    }
  }
  c.endSeries();
  std::vector<Key> keys = {{Key::Mark::box, "#1f77b4", "gains per bin"}};
  if (drawn) keys.push_back({Key::Mark::line, "#d62728", "threshold " + general(t), "threshold", "5,3"});
  c.legend(keys);
  const json& s = p["statistics"];
  const bool any_finite = s["share_above_threshold"].is_number() && s["max"].is_number();
  const std::string cap = "All " + s["count"].dump() + " gains: " +
                          (any_finite ? (drawn ? fixed(100 * s["share_above_threshold"].get<double>(), 4) + "% above " + general(t) + ", " : "") +
                                            s["count_negative"].dump() + " negative, max " + general(s["max"].get<double>())
                                      : std::string("none finite")) +
                          ". " + sourceLine(p);
  c.caption(cap);
  return c.figure("profile-histogram.svg", "Histogram of the gains", cap);
}

Figure asymmetry(const json& p) {
  const json& layers = p["layers"];
  const int n = static_cast<int>(layers.size());
  double hi = 0;
  for (const auto& l : layers)
    for (const char* r : {"q", "k"})
      if (l[r]["rope_pair_asymmetry"]["mean_abs_diff"].is_number()) hi = std::max(hi, l[r]["rope_pair_asymmetry"]["mean_abs_diff"].get<double>());
  Axis x{-0.5, n - 0.5, false};
  Chart c("RoPE-pair asymmetry of the gains per layer", "layer", "mean |g[i] − g[pair(i)]| (×)", x, rangeOf(0, hi, false));
  c.yTicks();
  c.xTicks(layerTicks(n));
  std::vector<Key> keys;
  for (const Role& role : kRoles) {
    std::vector<std::pair<double, double>> pts;
    for (int i = 0; i < n; ++i)
      if (layers[i][role.key]["rope_pair_asymmetry"]["mean_abs_diff"].is_number()) {
        const double v = layers[i][role.key]["rope_pair_asymmetry"]["mean_abs_diff"].get<double>();
        pts.emplace_back(c.X(i), c.Y(v));
        c.data(role.name, i, v);
      }
    c.beginSeries(role.name);
    c.svg.polyline(pts, std::string("stroke:") + role.colour + ";stroke-width:2" + (*role.dash ? std::string(";stroke-dasharray:") + role.dash : ""));
    for (const auto& [px, py] : pts) c.marker(role.shape, px, py, 3.2, role.colour);
    c.endSeries();
    keys.push_back({Key::Mark::line, role.colour, role.name, "", role.dash, role.shape});
  }
  c.legend(keys);
  const std::string cap = "Mean absolute difference between the gains of each RoPE pair (" + p["gains"]["rope_style"].get<std::string>() +
                          "): a gain that differs within a pair does not commute with the rotation. " + sourceLine(p);
  c.caption(cap);
  return c.figure("profile-rope-asymmetry.svg", "RoPE-pair asymmetry", cap);
}

}  // namespace

std::vector<Figure> profileFigures(const json& p) { return {layerMeans(p, false), layerMeans(p, true), histogram(p), asymmetry(p)}; }

std::vector<Figure> figuresFor(const json& doc, const std::string& path, const std::vector<std::string>& runs) {
  const std::string schema = doc.is_object() ? doc.value("schema", "") : "";
  if (!runs.empty() && schema != "omn-audit/study@1") throw UsageError("--runs: only for a study document; " + path + " is \"" + schema + "\"");
  if (schema == "omn-audit/profile@1") return profileFigures(doc);
  if (schema == "omn-audit/intervention@1") return sweepFigures(doc);
  if (schema == "omn-audit/study@1") return studyFigures(doc, runs);
  if (schema == "omn-audit/track@1") return trackFigures(doc);
  if (schema == "omn-audit/train@1") throw UsageError(path + ": a training run's record: its figures need its log too (plot the run directory or its train.json)");
  throw UsageError(path + ": /schema: expected omn-audit/profile@1, intervention@1, study@1, track@1 or train@1, got \"" + schema + "\"");
}

}  // namespace omn::report
