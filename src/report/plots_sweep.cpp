// The figures of a sweep result (omn-audit/intervention@1): perplexity against the constant, the
// paired ratio per condition, the layer-selective heatmap, the mechanism statistics per layer.
#include <algorithm>
#include <map>

#include "chart.h"
#include "omn/report/plots.h"
#include "omn/output/table.h"

namespace omn::report {
using output::fixed;
using output::general;
using output::significant;
using output::ciLabel;
using documents::InterventionDocument;
using documents::Scores;
using documents::SweepCondition;


namespace {

using namespace chart;  // NOLINT

// --- sweep ---------------------------------------------------------------------------------------

// The three targets keep one colour, marker and name in every sweep figure.
struct Target {
  const char* key;  // the op's target
  const char* name;
  const char* colour;
  const char* shape;
};
constexpr Target kTargets[] = {{"q", "Q only", "#1f77b4", "circle"}, {"k", "K only", "#d62728", "square"}, {"qk", "Q and K", "#2ca02c", "triangle"}};
const Target kOther = {"", "other (composite)", "#7f7f7f", "diamond"};

const Target& targetOf(const SweepCondition& cd) {
  for (const auto& k : kTargets)
    if (cd.op.target == k.key) return k;
  return kOther;
}

std::string confidenceLabel(const InterventionDocument& r) { return ciLabel(r.control.open.result.perplexity_ci.confidence); }

bool allLayerConstant(const SweepCondition& cd) {
  return cd.op.name == "constant" && cd.op.all_layers && !cd.op.picks_coordinates && cd.op.value && *cd.op.value > 0;
}

std::string rowLabel(const SweepCondition& cd) { return cd.id + "  " + cd.label; }

std::string sweepSource(const InterventionDocument& r) { return sourceLine(r.checkpoint.sha256, &r.tokens.sha256, r.provenance); }

// A condition's perplexity with the interval its comparison with the control rests on: the
// paired bootstrap CI of the ratio to the control (the same sequences, resampled together), placed
// on the control's perplexity. The unpaired CIs of two conditions overlap where the paired one
// excludes 1 (a 64-row sweep: every whisker over the control's band, every ratio resolved), so the
// unpaired ones are not drawn.
struct PairedPoint {
  double ppl, low, high;
};
PairedPoint pairedPoint(const Scores& ctl, const SweepCondition& cd) {
  const double base = val(ctl.perplexity);
  const documents::Interval& q = cd.vs_control.ppl_ratio;
  return {val(cd.result.perplexity), base * val(q.low), base * val(q.high)};
}

Figure pplVsConstant(const InterventionDocument& r) {
  const Scores& ctl = r.control.open.result;
  std::vector<double> constants;
  double ylo = val(ctl.perplexity), yhi = ylo;
  for (const auto& c : r.conditions)
    if (allLayerConstant(c)) {
      constants.push_back(*c.op.value);
      const PairedPoint p = pairedPoint(ctl, c);
      for (double v : {p.ppl, p.low, p.high})
        if (std::isfinite(v)) ylo = std::min(ylo, v), yhi = std::max(yhi, v);
    }
  if (constants.empty() || !std::isfinite(ylo) || !std::isfinite(yhi)) return {};
  std::sort(constants.begin(), constants.end());
  constants.erase(std::unique(constants.begin(), constants.end()), constants.end());
  const bool logy = wantsLog(ylo, yhi, 3);
  const Axis x{constants.front() / 1.25, constants.back() * 1.25, true};
  Chart c("Perplexity when every gain is replaced by a constant", "constant c (log scale)",
          std::string("perplexity") + (logy ? " (log scale)" : ""), x, rangeOf(ylo, yhi, logy));
  c.yTicks();
  // a tick at every constant measured, and only there: every point has its value under it
  const auto labels = tickLabels(constants, false);
  std::vector<std::pair<double, std::string>> xt;
  for (std::size_t i = 0; i < constants.size(); ++i) xt.emplace_back(constants[i], labels[i]);
  c.xTicks(xt);
  // the control: the line every paired interval is measured against
  const std::string ci = confidenceLabel(r);
  c.beginSeries("control");
  c.svg.line(c.left(), c.Y(val(ctl.perplexity)), c.right(), c.Y(val(ctl.perplexity)), "stroke:#555;stroke-width:1.5;stroke-dasharray:6,3",
             "control-line");
  c.endSeries();
  c.data("control", NAN, val(ctl.perplexity), val(ctl.perplexity_ci.low), val(ctl.perplexity_ci.high), "unmodified");
  std::vector<Key> keys;
  std::size_t resolved = 0, drawn = 0;
  for (std::size_t t = 0; t < 3; ++t) {
    const Target& tg = kTargets[t];
    std::vector<const SweepCondition*> conds;
    for (const auto& cd : r.conditions)
      if (allLayerConstant(cd) && cd.op.target == tg.key) conds.push_back(&cd);
    std::sort(conds.begin(), conds.end(), [](const SweepCondition* a, const SweepCondition* b) { return *a->op.value < *b->op.value; });
    if (conds.empty()) continue;
    const double dx = (static_cast<double>(t) - 1.0) * 9;  // dodged: Q left, QK right of the constant
    std::vector<std::pair<double, double>> pts;
    c.beginSeries(tg.name);
    for (const SweepCondition* cd : conds) {
      const double v = *cd->op.value;
      const double px = c.X(v) + dx;
      const PairedPoint p = pairedPoint(ctl, *cd);
      c.data(tg.name, v, p.ppl, p.low, p.high, cd->label);
      if (!std::isfinite(p.ppl)) continue;
      ++drawn;
      if (std::isfinite(p.low) && std::isfinite(p.high)) {
        c.svg.line(px, c.Y(p.low), px, c.Y(p.high), "stroke:" + std::string(tg.colour) + ";stroke-width:1.5", "whisker");
        const double base = val(ctl.perplexity);
        resolved += p.low > base || p.high < base;
      }
      pts.emplace_back(px, c.Y(p.ppl));
    }
    c.svg.polyline(pts, "stroke:" + std::string(tg.colour) + ";stroke-width:1.3;opacity:0.8");
    std::size_t k = 0;
    for (const SweepCondition* cd : conds) {
      const double ppl = val(cd->result.perplexity);
      if (!std::isfinite(ppl)) continue;
      c.marker(tg.shape, pts[k].first, pts[k].second, 4.2, tg.colour, cd->label + ": perplexity " + fixed(ppl, 3));
      ++k;
    }
    c.endSeries();
    keys.push_back({Key::Mark::line, tg.colour, tg.name, "", "", tg.shape});
  }
  keys.push_back({Key::Mark::line, "#555", "control", "", "6,3"});
  c.legend(keys);
  const std::string cap =
      "Every Q/K gain of all layers replaced by c (Q, K and both side by side at each c); whiskers: the paired bootstrap " + ci +
      " of the ratio to the control on the same sequences, placed on the control's perplexity (" + fixed(val(ctl.perplexity), 3) +
      ", dashed); " + std::to_string(resolved) + " of " + std::to_string(drawn) +
      " whiskers exclude it. The control's own " + ci + " over sequences, [" + fixed(val(ctl.perplexity_ci.low), 3) + ", " +
      fixed(val(ctl.perplexity_ci.high), 3) + "], is the uncertainty of the model's perplexity, not of the comparison, and is "
      "not drawn. " + sweepSource(r);
  c.caption(cap);
  return c.figure("sweep-ppl-vs-constant.svg", "Perplexity against the constant", cap);
}

// A forest plot: one row per condition (its label and its change at the left), the paired change
// in perplexity with its CI; colour = the gains it touched (Q, K, both), as in the other figures.
Figure ratios(const InterventionDocument& r) {
  const std::vector<SweepCondition>& cs = r.conditions;
  const std::size_t n = cs.size();
  if (n == 0) return {};
  double lo = 1, hi = 1;
  for (const auto& c : cs)
    for (const auto& x : {c.vs_control.ppl_ratio.estimate, c.vs_control.ppl_ratio.low, c.vs_control.ppl_ratio.high}) {
      const double v = val(x);
      if (std::isfinite(v) && v > 0) lo = std::min(lo, v), hi = std::max(hi, v);
    }
  // within a factor of two: the change in percent on a linear axis, where 1-4 % are readable;
  // beyond it (OMN-1's ×53) the ratio on a log axis
  const bool percent = hi <= 2 && lo >= 0.5;
  auto fx = [&](double ratio) { return percent ? (ratio - 1) * 100 : ratio; };
  const Axis x = percent ? rangeOf(fx(lo), fx(hi), false, 0.08) : rangeOf(lo, hi, true);
  const double row = 18, plot_h = row * static_cast<double>(n) + 8;
  const std::string ci = confidenceLabel(r);
  Chart c("Change in perplexity against the control, per condition",
          percent ? "perplexity change against the control (%, paired " + ci + ")" : "perplexity ratio to the control (log scale, paired " + ci + ")",
          "", x, Axis{-0.6, static_cast<double>(n) - 0.4, false}, plot_h, 250);
  c.xTicksAuto(6);
  for (double t : x.ticks(6)) c.svg.line(c.X(t), kTop, c.X(t), c.bottom(), "stroke:#e4e4e4;stroke-width:1");
  c.svg.line(c.X(fx(1)), kTop, c.X(fx(1)), c.bottom(), "stroke:#555;stroke-width:1.5;stroke-dasharray:6,3", "unity");
  std::vector<const Target*> used;
  std::string previous_op;
  for (std::size_t i = 0; i < n; ++i) {
    const SweepCondition& cd = cs[i];
    const double yv = static_cast<double>(n - 1 - i);
    const std::string& op = cd.op.name;
    if (i > 0 && op != previous_op)  // a rule between groups of one op
      c.svg.line(8, c.Y(yv + 0.5), c.right(), c.Y(yv + 0.5), "stroke:#cfcfcf;stroke-width:1");
    previous_op = op;
    const Target& tg = targetOf(cd);
    if (std::find(used.begin(), used.end(), &tg) == used.end()) used.push_back(&tg);
    const documents::Interval& q = cd.vs_control.ppl_ratio;
    const double e = val(q.estimate);
    const std::string label = rowLabel(cd);
    c.svg.text(8, c.Y(yv) + 4, cut(label, 30), "font-size:10.5px", "start", 0, "row-label");
    const std::string change = !std::isfinite(e) ? "NaN"
                               : percent         ? (e >= 1 ? "+" : "") + fixed(fx(e), std::fabs(fx(e)) < 10 ? 2 : 1) + "%"
                                                 : "×" + significant(e, 3);
    c.svg.text(c.left() - 6, c.Y(yv) + 4, change, "font-size:10.5px;font-weight:bold;fill:" + std::string(tg.colour), "end", 0, "value");
    // the CSV row as drawn: the series (colour), the row's label, the value and its CI (in % or as
    // the ratio, as the axis says)
    c.data(tg.name, NAN, fx(e), fx(val(q.low)), fx(val(q.high)), label);
    if (!std::isfinite(e)) continue;
    c.beginSeries(tg.name);
    if (std::isfinite(val(q.low)) && std::isfinite(val(q.high)))
      c.svg.line(c.X(fx(*q.low)), c.Y(yv), c.X(fx(*q.high)), c.Y(yv), "stroke:" + std::string(tg.colour) + ";stroke-width:1.8", "whisker");
    c.marker(tg.shape, c.X(fx(e)), c.Y(yv), 4.2, tg.colour, label + ": ratio " + fixed(e, 4));
    c.endSeries();
  }
  std::vector<Key> keys;
  for (const Target* t : used) keys.push_back({Key::Mark::point, t->colour, t->name, "", "", t->shape});
  keys.push_back({Key::Mark::line, "#555", "control (no change)", "unity", "6,3"});
  c.legend(keys);
  const std::string cap = std::string(percent ? "Change in perplexity (%)" : "Perplexity ratio") +
                          " of each condition against the control on the same sequences, with the paired bootstrap " + ci +
                          " (the same resampled sequences for both); rules separate the ops. " + sweepSource(r);
  c.caption(cap);
  return c.figure("sweep-ratio.svg", "Change against the control", cap);
}

// --kl: each condition's KL divergence from the control's next-token distributions (nats per token,
// one row per condition as in the forest plot), and how often the two agree on the top token.
// A condition's KL per token and top-1 agreement against the control (NaN: not measured).
double klPerToken(const SweepCondition& cd) { return cd.vs_control.divergence ? val(cd.vs_control.divergence->kl_per_token) : NAN; }
double top1Agreement(const SweepCondition& cd) { return cd.vs_control.divergence ? val(cd.vs_control.divergence->top1_agreement) : NAN; }

Figure divergence(const InterventionDocument& r) {
  if (!r.kl.value_or(false)) return {};
  std::vector<std::pair<const SweepCondition*, double>> rows;  // a condition and its KL per token
  double lo = INFINITY, hi = -INFINITY;
  for (const auto& cd : r.conditions) {
    const double kl = klPerToken(cd);
    rows.emplace_back(&cd, kl);
    if (std::isfinite(kl) && kl > 0) lo = std::min(lo, kl), hi = std::max(hi, kl);
  }
  if (rows.empty() || !std::isfinite(hi)) return {};
  const bool logx = wantsLog(lo, hi);
  const Axis x = logx ? rangeOf(lo, hi, true) : rangeOf(0, hi, false, 0.08);
  const double n = static_cast<double>(rows.size());
  Chart c("KL divergence from the control, per condition",
          std::string("KL(control ‖ condition), nats per token") + (logx ? " (log scale)" : ""), "", x, Axis{-0.6, n - 0.4, false},
          18 * n + 8, 250);
  if (logx) {  // the plot is narrow (the labels take the left): one tick a decade, and 3× where that leaves fewer than two
    std::vector<std::pair<double, std::string>> xt;
    for (const double m : {1.0, 3.0}) {
      for (double e = std::floor(std::log10(x.lo)); e <= std::ceil(std::log10(x.hi)); ++e)
        if (const double v = m * std::pow(10.0, e); v >= x.lo && v <= x.hi) xt.emplace_back(v, tickLabels({v})[0]);
      if (xt.size() >= 2) break;
    }
    std::sort(xt.begin(), xt.end());
    c.xTicks(xt);
  } else {
    c.xTicksAuto(5);
  }
  std::vector<const Target*> used;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const SweepCondition& cd = *rows[i].first;
    const double kl = rows[i].second, yv = n - 1 - static_cast<double>(i);
    const Target& tg = targetOf(cd);
    if (std::find(used.begin(), used.end(), &tg) == used.end()) used.push_back(&tg);
    const std::string label = rowLabel(cd);
    const double top1 = top1Agreement(cd);
    c.svg.text(8, c.Y(yv) + 4, cut(label, 30), "font-size:10.5px", "start", 0, "row-label");
    c.svg.text(c.left() - 6, c.Y(yv) + 4, std::isfinite(top1) ? "top-1 " + fixed(top1, 3) : "—", "font-size:10px;fill:#555", "end", 0, "value");
    c.data(tg.name, NAN, kl, NAN, NAN, label);
    if (!std::isfinite(kl) || (logx && kl <= 0)) continue;
    c.beginSeries(tg.name);
    c.marker(tg.shape, c.X(kl), c.Y(yv), 4.2, tg.colour, label + ": KL " + significant(kl, 3));
    c.endSeries();
  }
  std::vector<Key> keys;
  for (const Target* t : used) keys.push_back({Key::Mark::point, t->colour, t->name, "", "", t->shape});
  c.legend(keys);
  const std::string cap = "KL divergence of each condition's next-token distribution from the control's, per scored token (a point "
                          "estimate: the document carries no interval for it); at the left, the share of tokens where the two agree "
                          "on the most likely next token. " + sweepSource(r);
  c.caption(cap);
  return c.figure("sweep-kl.svg", "KL divergence from the control", cap);
}

// ΔNLL per token on a diverging scale: red worse, blue better, white no change.
std::string diverging(double t) {  // t ∈ [0, 1], 0.5 = no change
  const double s = std::clamp(std::fabs(t - 0.5) * 2, 0.0, 1.0);
  const int shade = static_cast<int>(std::lround(255 - 200 * s));
  char b[8];
  if (t >= 0.5) std::snprintf(b, sizeof b, "#ff%02x%02x", shade, shade);
  else std::snprintf(b, sizeof b, "#%02x%02xff", shade, shade);
  return b;
}

Figure heatmap(const InterventionDocument& r) {
  std::vector<const SweepCondition*> sel;
  for (const auto& c : r.conditions)
    if (c.op.has_layers && !c.op.all_layers) sel.push_back(&c);  // a composite has no one layer set
  if (sel.empty()) return {};
  // the layers: the model's count when the document gives a sane one, else as many as were touched
  // (a hostile n_layers must not cost millions of cells)
  int L = 0;
  for (const SweepCondition* c : sel)
    for (const std::string& n : c->touched) {
      const auto p = n.find_first_of("0123456789");
      if (p != std::string::npos) L = std::max<long>(L, std::min(std::strtol(n.c_str() + p, nullptr, 10), 4095L) + 1);
    }
  const std::optional<std::int64_t> nl = r.model.nLayers();
  if (nl && *nl > L && *nl <= 4096) L = static_cast<int>(*nl);
  if (L == 0) return {};
  double amax = 1e-12;
  for (const SweepCondition* c : sel) {
    const double d = val(c->vs_control.delta_nll_per_token.estimate);
    if (std::isfinite(d)) amax = std::max(amax, std::fabs(d));
  }
  const double rows = static_cast<double>(sel.size());
  const double cell_h = 22, plot_h = cell_h * rows;
  std::size_t widest = 0;  // row labels whole (they were cut at 28 characters)
  for (const SweepCondition* c : sel) widest = std::max(widest, c->id.size() + 2 + c->label.size());
  const double left = std::min(480.0, 24.0 + 6.2 * static_cast<double>(std::min<std::size_t>(widest, 72)));
  Chart c("ΔNLL per token of layer-selective conditions", "layer", "", Axis{-0.5, L - 0.5, false}, Axis{0, rows, false}, plot_h, left);
  const double cell_w = (c.right() - c.left()) / L;
  for (std::size_t k = 0; k < sel.size(); ++k) {
    const SweepCondition& cd = *sel[k];
    const documents::Interval& dn = cd.vs_control.delta_nll_per_token;
    const double d = val(dn.estimate);
    const double y0 = kTop + cell_h * static_cast<double>(k);
    const std::string label = rowLabel(cd);
    c.svg.text(c.left() - 6, y0 + cell_h * 0.68, cut(label, 72), "font-size:10px", "end", 0, "row-label");
    for (int l = 0; l < L; ++l) c.svg.rect(c.left() + cell_w * l, y0, cell_w, cell_h - 1, "fill:#eeeeee;stroke:#fff", "untouched");
    for (const std::string& n : cd.touched) {
      // the layer index is the number in the tensor name
      const auto p = n.find_first_of("0123456789");
      if (p == std::string::npos) continue;
      const long l = std::strtol(n.c_str() + p, nullptr, 10);
      if (l < 0 || l >= L) continue;
      const std::string fill = std::isfinite(d) ? diverging(0.5 + 0.5 * d / amax) : "#000000";
      c.svg.rect(c.left() + cell_w * static_cast<double>(l), y0, cell_w, cell_h - 1, "fill:" + fill + ";stroke:#fff", "cell");
      c.data(label, static_cast<double>(l), d, val(dn.low), val(dn.high), n);
    }
    // over the cells: the condition's one paired ΔNLL with its CI, written once on the row: the cells share it
    c.svg.text(c.left() + 6, y0 + cell_h * 0.68,
               "ΔNLL " + (std::isfinite(d) ? (d >= 0 ? "+" : "") + fixed(d, 4) : std::string("NaN")) + " [" + fixed(val(dn.low), 4) +
                   ", " + fixed(val(dn.high), 4) + "]",
               "font-size:10px;fill:#111", "start", 0, "row-value");
  }
  std::vector<std::pair<double, std::string>> xt;
  for (int i = 0; i < L; i += std::max(1, L / 14)) xt.emplace_back(i, std::to_string(i));
  c.xTicks(xt);
  c.legend({{Key::Mark::box, "#eeeeee", "layer not touched"}, {Key::Mark::box, "#000000", "non-finite"}});
  c.colourBar(-amax, amax, "ΔNLL per token (nats)", diverging);
  const std::string cap = "Each row a condition touching only some layers (cells: the layers it touched, all in one colour: the "
                          "condition's one paired ΔNLL per token against the control, written with its CI on the row; red: worse, "
                          "blue: better). A cell says which layers the condition changed, not an effect of that layer alone. " +
                          sweepSource(r);
  c.caption(cap);
  return c.figure("sweep-heatmap.svg", "Layer-selective conditions", cap);
}

std::string general3(double v) {  // three significant digits, for a value inside a cell
  char b[32];
  std::snprintf(b, sizeof b, "%.3g", v);
  return b;
}

// The mechanism grid's ticks, legend, colour bar and caption.
Figure mechanismFigure(Chart& c, const InterventionDocument& r, const documents::LayerMetric& metric, int L, double amax, bool numbers) {
  const bool ratio = metric.ratio;
  const char* title = metric.sweep_title;
  const char* unit = metric.unit;
  std::vector<std::pair<double, std::string>> xt;
  for (int i = 0; i < L; i += std::max(1, L / 14)) xt.emplace_back(i, std::to_string(i));
  c.xTicks(xt);
  std::vector<Key> keys = {{Key::Mark::box, "#f4f4f4", "control (its values)"}, {Key::Mark::box, "#000000", "non-finite"}};
  if (ratio) keys.push_back({Key::Mark::box, "#bbbbbb", "no ratio (≤ 0)"});
  c.legend(keys);
  c.colourBar(-amax, amax, ratio ? std::string("log2(condition / control)") : std::string("condition − control (") + unit + ")", diverging);
  const std::string cap = std::string(title) + ": each row a condition (ids as in the results table), each column a layer; the cell "
                          "holds the condition's value" + (numbers ? "" : " (hover for it)") + ", coloured by its change from the "
                          "control's in that layer (" + (ratio ? "log2 ratio" : std::string("difference in ") + unit) +
                          "; red higher, blue lower). " + metric.over + "; the document carries no interval for them. " +
                          sweepSource(r);
  c.caption(cap);
  return c.figure(metric.sweep_figure, title, cap);
}


// A mechanism statistic per layer as a grid, a row per condition (the control first) and a column
// per layer: each cell holds the condition's value, coloured by its change from the control in that
// layer (log2 ratio for `ratio` statistics such as the largest logit, the difference otherwise), so
// 16 conditions read as 16 labelled rows, not 16 tangled lines in near colours. The statistics are
// the document's summaries over the scored sequences (the row's `over`: a mean, or the largest), with no
// interval; the caption says which.
Figure mechanism(const InterventionDocument& r, const documents::LayerMetric& metric) {
  const documents::MechanismTable& ctl = r.control.open.mechanism;
  if (!ctl || ctl->empty()) return {};
  const bool ratio = metric.ratio;
  const char* title = metric.sweep_title;
  const int L = static_cast<int>(std::min<std::size_t>(ctl->size(), 4096));
  std::vector<const SweepCondition*> conds;
  for (const auto& cd : r.conditions)
    if (cd.mechanism && static_cast<int>(cd.mechanism->size()) == L) conds.push_back(&cd);
  auto value = [&](const std::vector<documents::MechanismLayer>& m, int l) { return m[static_cast<std::size_t>(l)].metrics.*metric.value; };
  auto change = [&](const std::vector<documents::MechanismLayer>& m, int l) {
    const double v = value(m, l), b = value(*ctl, l);
    if (!std::isfinite(v) || !std::isfinite(b)) return std::nan("");
    return ratio ? (v > 0 && b > 0 ? std::log2(v / b) : std::nan("")) : v - b;
  };
  double amax = 1e-12;
  for (const SweepCondition* cd : conds)
    for (int l = 0; l < L; ++l)
      if (std::isfinite(change(*cd->mechanism, l))) amax = std::max(amax, std::fabs(change(*cd->mechanism, l)));
  std::vector<std::string> labels = {"control"};
  std::size_t widest = 7;
  for (const SweepCondition* cd : conds) {
    labels.push_back(rowLabel(*cd));
    widest = std::max(widest, labels.back().size());
  }
  const double rows = static_cast<double>(labels.size());
  const double cell_h = 20, plot_h = cell_h * rows;
  const double left = std::min(480.0, 24.0 + 6.2 * static_cast<double>(std::min<std::size_t>(widest, 72)));
  Chart c(title, "layer", "", Axis{-0.5, L - 0.5, false}, Axis{0, rows, false}, plot_h, left);
  const double cell_w = (c.right() - c.left()) / L;
  const bool numbers = cell_w >= 34;  // the value in the cell where it fits
  for (std::size_t k = 0; k < labels.size(); ++k) {
    const std::vector<documents::MechanismLayer>& m = k == 0 ? *ctl : *conds[k - 1]->mechanism;
    const double y0 = kTop + cell_h * static_cast<double>(k);
    c.svg.text(c.left() - 6, y0 + cell_h * 0.68, cut(labels[k], 72), std::string("font-size:10px") + (k == 0 ? ";font-weight:bold" : ""),
               "end", 0, "row-label");
    for (int l = 0; l < L; ++l) {  // rows labelled at the left (direct labels), not legend series
      const double v = value(m, l);
      const double d = k == 0 ? 0.0 : change(m, l);
      // no change to colour: a value that is not finite (black), or a ratio of a value <= 0 (grey)
      const bool finite = std::isfinite(v) && std::isfinite(value(*ctl, l));
      const std::string fill = k == 0 ? "#f4f4f4" : std::isfinite(d) ? diverging(0.5 + 0.5 * d / amax) : finite ? "#bbbbbb" : "#000000";
      c.svg.rect(c.left() + cell_w * l, y0, cell_w, cell_h - 1, "fill:" + fill + ";stroke:#fff", k == 0 ? "control-cell" : "cell");
      if (numbers && std::isfinite(v))
        c.svg.text(c.left() + cell_w * (l + 0.5), y0 + cell_h * 0.68, general3(v), "font-size:9px;fill:#222", "middle", 0, "cell-value");
      c.data(labels[k], l, v, NAN, NAN, k == 0 ? "control" : "change " + (std::isfinite(d) ? fixed(d, 4) : std::string("NaN")));
    }
  }
  return mechanismFigure(c, r, metric, L, amax, numbers);
}

}  // namespace

std::vector<Figure> sweepFigures(const InterventionDocument& r) {
  std::vector<Figure> figs = {pplVsConstant(r), ratios(r), divergence(r), heatmap(r)};
  std::vector<const documents::LayerMetric*> mechanisms;  // the rows with a figure, in their sweep_place
  for (const documents::LayerMetric& m : documents::kLayerMetrics)
    if (m.sweep_figure) mechanisms.push_back(&m);
  std::stable_sort(mechanisms.begin(), mechanisms.end(), [](const auto* a, const auto* b) { return a->sweep_place < b->sweep_place; });
  for (const documents::LayerMetric* m : mechanisms) figs.push_back(mechanism(r, *m));
  std::vector<Figure> out;
  for (Figure& f : figs)
    if (!f.name.empty()) out.push_back(std::move(f));
  return out;
}

}  // namespace omn::report
