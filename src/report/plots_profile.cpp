// The figures of a profile (omn-audit/profile@1) — layer means with their min–max band, the
// histogram with the threshold, RoPE-pair asymmetry.
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


using documents::ProfileDocument;
using documents::GainVector;

namespace {

using namespace chart;  // NOLINT

// --- profile -------------------------------------------------------------------------------------

std::string profileSource(const ProfileDocument& p) { return sourceLine(p.checkpoint.sha256, nullptr, p.provenance); }

struct Role {
  char key;
  const char* name;
  const char* colour;
  const char* shape;
  const char* dash;
};
constexpr Role kRoles[] = {{'q', "Q", "#1f77b4", "circle", ""}, {'k', "K", "#d62728", "square", "6,3"}};

std::vector<std::pair<double, std::string>> layerTicks(int n) {
  std::vector<std::pair<double, std::string>> xt;
  for (int i = 0; i < n; i += std::max(1, n / 14)) xt.emplace_back(i, std::to_string(i));
  return xt;
}

// a layer whose gains are all NaN/inf has null statistics: it is left out of the lines
bool described(const GainVector& v) { return v.mean && v.min && v.max; }

Figure layerMeans(const ProfileDocument& p, bool log) {
  const auto& layers = p.layers;
  const int n = static_cast<int>(layers.size());
  auto finite = [&](int i, char role) { return described(layers[static_cast<std::size_t>(i)].role(role)); };
  auto stat = [&](int i, char role) -> const GainVector& { return layers[static_cast<std::size_t>(i)].role(role); };
  double lo = INFINITY, hi = -INFINITY, lo_pos = INFINITY;
  for (const auto& l : layers)
    for (const char r : {'q', 'k'}) {
      const GainVector& v = l.role(r);
      if (!described(v)) continue;
      lo = std::min(lo, *v.min);
      hi = std::max(hi, *v.max);
      for (const double x : {*v.min, *v.mean})
        if (x > 0) lo_pos = std::min(lo_pos, x);
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
  if (n > 2 && p.preset.name == "omn-1") {
    c.svg.rect(c.X(-0.5), kTop, c.X(1.5) - c.X(-0.5), c.bottom() - kTop, "fill:#fff3cd;opacity:0.7", "layers-0-1");
    c.svg.text(c.X(-0.5) + 4, c.bottom() - 6, "layers 0–1 (the audit's early regime)", "font-size:10px;fill:#8a6d3b", "start", 0,
               "annotation");
  }
  std::vector<Key> keys;
  for (const Role& role : kRoles) {
    std::vector<std::pair<double, double>> band;
    for (int i = 0; i < n; ++i)
      if (finite(i, role.key)) band.emplace_back(c.X(i), c.Y(*stat(i, role.key).max));
    for (int i = n - 1; i >= 0; --i)
      if (finite(i, role.key)) band.emplace_back(c.X(i), c.Y(*stat(i, role.key).min));
    c.beginSeries(std::string(role.name) + " min–max");
    c.svg.polygon(band, std::string("fill:") + role.colour + ";opacity:0.13;stroke:" + role.colour + ";stroke-opacity:0.35", "band");
    c.endSeries();
  }
  for (const Role& role : kRoles) {
    // K is drawn dashed with squares over Q's solid line and circles, half a marker to the right:
    // where the means agree both stay visible
    const double dx = role.key == 'k' ? 3 : 0;
    std::vector<std::pair<double, double>> mean;
    for (int i = 0; i < n; ++i)
      if (finite(i, role.key)) {
        const GainVector& s = stat(i, role.key);
        mean.emplace_back(c.X(i) + dx, c.Y(*s.mean));
        c.data(std::string(role.name) + " mean", i, *s.mean, *s.min, *s.max);
      }
    c.beginSeries(std::string(role.name) + " mean");
    c.svg.polyline(mean, std::string("stroke:") + role.colour + ";stroke-width:2" + (*role.dash ? std::string(";stroke-dasharray:") + role.dash : ""));
    for (int i = 0, k = 0; i < n; ++i) {
      if (!finite(i, role.key)) continue;
      const auto& pt = mean[static_cast<std::size_t>(k++)];
      c.marker(role.shape, pt.first, pt.second, 3.4, role.colour,
               "layer " + std::to_string(i) + " " + role.key + " mean " + fixed(*stat(i, role.key).mean, 3));
    }
    c.endSeries();
    keys.push_back({Key::Mark::line, role.colour, std::string(role.name) + " mean", "", role.dash, role.shape});
  }
  for (const Role& role : kRoles) keys.push_back({Key::Mark::band, role.colour, std::string(role.name) + " min–max"});
  c.legend(keys);
  const documents::Change& sc = p.steepest_change.all;
  std::string cap = "Per-layer mean of the effective Q and K gains with their min–max bands";
  if (sc.from && sc.delta)
    cap += "; steepest change layer " + std::to_string(*sc.from) + "→" + (sc.to ? std::to_string(*sc.to) : "null") + " (" + fixed(*sc.delta, 3) + ")";
  if (log && lo <= 0) cap += "; log scale: values ≤ 0 are drawn at the axis floor";
  cap += ". " + profileSource(p);
  c.caption(cap);
  return c.figure(log ? "profile-layer-means-log.svg" : "profile-layer-means.svg", "Q/K gain per layer", cap);
}

// The histogram of the gains in the data's own bins (/distribution, equal width over [min, max]) on
// a linear gain axis, the --threshold line where it falls inside them.
Figure distribution(const ProfileDocument& p) {
  const auto& bins = p.distribution->bins;
  const std::size_t n = bins.size();
  if (n == 0) return {};
  double top = 1;
  for (const auto& b : bins) top = std::max(top, static_cast<double>(b.count));
  const double lo = bins.front().lo, hi = bins.back().hi;
  const double pad = hi > lo ? (hi - lo) * 0.02 : 0.5;
  Chart c("Histogram of all Q/K gains", "effective gain", "count (log scale)", Axis{lo - pad, hi + pad, false},
          rangeOf(0.8, top * 1.6, true));
  c.yTicks();
  c.xTicksAuto();
  c.beginSeries("gains per bin");
  for (const auto& b : bins) {
    const double cnt = static_cast<double>(b.count), a = b.lo, e = b.hi;
    c.data("gains per bin", a, cnt, a, e, "[" + general(a) + ", " + general(e) + ")");
    if (cnt <= 0) continue;
    const double x0 = c.X(a), x1 = std::max(c.X(e), x0 + 1.0);
    c.svg.rect(x0 + 0.5, c.Y(cnt), x1 - x0 - 1.0, c.Y(0.8) - c.Y(cnt), "fill:#1f77b4", "bar");
  }
  c.endSeries();
  const double t = p.options.threshold;
  const bool drawn = drawsThreshold(p), inside = drawn && t >= lo && t <= hi;
  if (inside) {
    c.beginSeries("threshold");
    c.svg.line(c.X(t), kTop, c.X(t), c.bottom(), "stroke:#d62728;stroke-width:2;stroke-dasharray:5,3", "threshold");
    c.endSeries();
  }
  std::vector<Key> keys = {{Key::Mark::box, "#1f77b4", "gains per bin"}};
  if (inside) keys.push_back({Key::Mark::line, "#d62728", "--threshold " + general(t), "threshold", "5,3"});
  c.legend(keys);
  const documents::ProfileStatistics& s = p.statistics;
  const bool any_finite = s.share_above_threshold && s.max;
  const std::string cap = "All " + std::to_string(s.count) + " gains in " + std::to_string(n) + " equal bins over [" + fixed(lo, 3) + ", " +
                          fixed(hi, 3) + "] (Rice's rule: bins from the data, not from --hist-edges); " +
                          (!any_finite ? std::string("none finite")
                           : drawn ? fixed(100 * *s.share_above_threshold, 4) + "% above " + general(t) +
                                         (inside ? "" : " (outside the gains' range: no line)") + ", " + std::to_string(s.count_negative) + " negative"
                                   : std::to_string(s.count_negative) + " negative") +
                          ". " + profileSource(p);
  c.caption(cap);
  return c.figure("profile-histogram.svg", "Histogram of the gains", cap);
}

// A profile written before /distribution: the configured --hist-edges bins.
Figure histogram(const ProfileDocument& p) {
  if (p.distribution && !p.distribution->bins.empty()) return distribution(p);  // none finite: the configured bins
  const auto& h = p.histogram;
  const int n = static_cast<int>(h.size());
  auto bin = [&](int j) -> const documents::HistogramBin& { return h[static_cast<std::size_t>(j)]; };
  double hi = 1;
  for (const auto& b : h) hi = std::max(hi, static_cast<double>(b.count));
  Axis x{0, static_cast<double>(n), false};
  Axis y = rangeOf(0.8, hi * 1.6, true);
  Chart c("Histogram of all Q/K gains", "effective gain (bin)", "count (log scale)", x, y);
  c.yTicks();
  std::vector<std::pair<double, std::string>> xt;
  for (int j = 0; j < n; ++j) xt.emplace_back(j + 0.5, bin(j).label);
  c.xTicks(xt);
  c.beginSeries("gains per bin");
  for (int j = 0; j < n; ++j) {
    const double cnt = static_cast<double>(bin(j).count);
    c.data("gains per bin", j, cnt, NAN, NAN, bin(j).label);
    if (cnt <= 0) continue;
    c.svg.rect(c.X(j + 0.1), c.Y(cnt), c.X(j + 0.9) - c.X(j + 0.1), c.Y(y.lo) - c.Y(cnt), "fill:#1f77b4", "bar");
    c.svg.text(c.X(j + 0.5), c.Y(cnt) - 4, std::to_string(static_cast<long long>(cnt)), "font-size:10px;paint-order:stroke;stroke:#fafafa;stroke-width:3px", "middle", 0, "bar-count");
  }
  c.endSeries();
  // the threshold inside its bin, by linear interpolation between the bin's edges; named in the
  // legend (a dashed line, as drawn), so no label in the plot competes with the bar counts. A bin
  // without both edges (unbounded: the schema lets lo or hi be null) holds no line.
  const double t = p.options.threshold;
  const bool drawn = drawsThreshold(p);
  c.beginSeries("threshold");
  for (int j = 1; drawn && j + 1 < n; ++j) {
    if (!bin(j).lo || !bin(j).hi) continue;
    const double a = *bin(j).lo, b = *bin(j).hi;
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
  const documents::ProfileStatistics& s = p.statistics;
  const bool any_finite = s.share_above_threshold && s.max;
  const std::string cap = "All " + std::to_string(s.count) + " gains: " +
                          (any_finite ? (drawn ? fixed(100 * *s.share_above_threshold, 4) + "% above " + general(t) + ", " : "") +
                                            std::to_string(s.count_negative) + " negative, max " + general(*s.max)
                                      : std::string("none finite")) +
                          ". " + profileSource(p);
  c.caption(cap);
  return c.figure("profile-histogram.svg", "Histogram of the gains", cap);
}

Figure asymmetry(const ProfileDocument& p) {
  const auto& layers = p.layers;
  const int n = static_cast<int>(layers.size());
  double hi = 0;
  for (const auto& l : layers)
    for (const char r : {'q', 'k'}) hi = std::max(hi, l.role(r).rope_pair_asymmetry.mean_abs_diff);
  Axis x{-0.5, n - 0.5, false};
  Chart c("RoPE-pair asymmetry of the gains per layer", "layer", "mean |g[i] − g[pair(i)]| (×)", x, rangeOf(0, hi, false));
  c.yTicks();
  c.xTicks(layerTicks(n));
  std::vector<Key> keys;
  for (const Role& role : kRoles) {
    std::vector<std::pair<double, double>> pts;
    for (int i = 0; i < n; ++i) {
      const double v = layers[static_cast<std::size_t>(i)].role(role.key).rope_pair_asymmetry.mean_abs_diff;
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
  const std::string cap = "Mean absolute difference between the gains of each RoPE pair (" + p.gains.rope_style +
                          "): a gain that differs within a pair does not commute with the rotation. " + profileSource(p);
  c.caption(cap);
  return c.figure("profile-rope-asymmetry.svg", "RoPE-pair asymmetry", cap);
}

}  // namespace

std::vector<Figure> profileFigures(const ProfileDocument& p) { return {layerMeans(p, false), layerMeans(p, true), histogram(p), asymmetry(p)}; }

}  // namespace omn::report
