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

Figure layerMeans(const json& p, bool log) {
  const json& layers = p["layers"];
  const int n = static_cast<int>(layers.size());
  // a layer whose gains are all NaN/inf has null statistics: it is left out of the lines
  auto finite = [&](int i, const char* role) { return layers[i][role]["mean"].is_number() && layers[i][role]["min"].is_number(); };
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
    for (int i = 0; i < n; ++i)
      if (finite(i, role)) band.emplace_back(c.X(i), c.Y(layers[i][role]["max"].get<double>()));
    for (int i = n - 1; i >= 0; --i)
      if (finite(i, role)) band.emplace_back(c.X(i), c.Y(layers[i][role]["min"].get<double>()));
    c.svg.polygon(band, std::string("fill:") + colour[r] + ";opacity:0.15;stroke:none", "band");
    for (int i = 0; i < n; ++i)
      if (finite(i, role)) mean.emplace_back(c.X(i), c.Y(layers[i][role]["mean"].get<double>()));
    c.svg.polyline(mean, std::string("stroke:") + colour[r] + ";stroke-width:2");
    for (int i = 0, k = 0; i < n; ++i) {
      if (!finite(i, role)) continue;
      const auto& pt = mean[static_cast<std::size_t>(k++)];
      c.svg.circle(pt.first, pt.second, 3.2, std::string("fill:") + colour[r], std::string("point ") + role,
                   "layer " + std::to_string(i) + " " + role + " mean " + fixed(layers[i][role]["mean"].get<double>(), 3));
    }
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
  const bool any_finite = s["share_above_threshold"].is_number() && s["max"].is_number();
  const std::string cap = "All " + s["count"].dump() + " gains: " +
                          (any_finite ? fixed(100 * s["share_above_threshold"].get<double>(), 4) + "% above " + general(t) + ", " +
                                            s["count_negative"].dump() + " negative, max " + general(s["max"].get<double>())
                                      : std::string("none finite")) +
                          ". " + sourceLine(p);
  c.caption(cap);
  return {"profile-histogram.svg", "Histogram of the gains", cap, c.svg.str()};
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
  std::vector<std::pair<double, std::string>> xt;
  for (int i = 0; i < n; i += std::max(1, n / 14)) xt.emplace_back(i, std::to_string(i));
  c.xTicks(xt);
  for (int r = 0; r < 2; ++r) {
    const char* role = r == 0 ? "q" : "k";
    std::vector<std::pair<double, double>> pts;
    for (int i = 0; i < n; ++i)
      if (layers[i][role]["rope_pair_asymmetry"]["mean_abs_diff"].is_number())
        pts.emplace_back(c.X(i), c.Y(layers[i][role]["rope_pair_asymmetry"]["mean_abs_diff"].get<double>()));
    c.svg.polyline(pts, std::string("stroke:") + kColours[r] + ";stroke-width:2");
    for (const auto& [px, py] : pts) c.svg.circle(px, py, 3, std::string("fill:") + kColours[r], std::string("point ") + role);
  }
  c.legend({{kColours[0], "Q"}, {kColours[1], "K"}});
  const std::string cap = "Mean absolute difference between the gains of each RoPE pair (" + p["gains"]["rope_style"].get<std::string>() +
                          "): a gain that differs within a pair does not commute with the rotation. " + sourceLine(p);
  c.caption(cap);
  return {"profile-rope-asymmetry.svg", "RoPE-pair asymmetry", cap, c.svg.str()};
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
  throw UsageError(path + ": /schema: expected omn-audit/profile@1, intervention@1, study@1 or track@1, got \"" + schema + "\"");
}

}  // namespace omn::report
