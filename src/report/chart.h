// Internal to the plots: one chart layout (plot area, axes, a legend at the right, a caption below)
// shared by every figure. A chart also keeps the data it draws, so each figure comes with a tidy CSV
// of exactly what is on it, and marks what the browser test checks: series and their legend entries
// (data-series), tick labels (tick-x, tick-y), colour bars (colour-bar).
#pragma once
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "omn/documents/profile_document.h"
#include "omn/documents/provenance.h"
#include "omn/output/table.h"
#include "omn/report/plots.h"
#include "omn/report/svg.h"

namespace omn::report::chart {
using output::general;

constexpr double kW = 760, kH = 440, kLeft = 78, kRight = 190, kTop = 44, kBottom = 96;
constexpr double kPlotH = kH - kTop - kBottom;

// Colour i of n, all distinct: the Tableau 10 up to ten series, evenly spaced hues (two
// lightnesses, alternating) beyond. Never repeats within one figure.
std::string colour(std::size_t i, std::size_t n);
// Line dash i of a set of series: solid, dashed, dotted, dash-dot, in turn ("" = solid). With the
// colour it tells neighbouring series apart in print and for colour-blind readers.
std::string dash(std::size_t i);
// Layer `layer` of `n_layers`: the same colour in every figure that draws layers (a run's, a track's):
// up to ten layers one categorical colour each, more by depth on viridis (short of its faint end).
std::string layerColour(std::size_t layer, std::size_t n_layers);
std::string viridis(double t);  // t in [0, 1]
// The profile's --threshold is OMN-1's audit figure (1.43) unless given: drawn and counted only for
// OMN-1's preset or a threshold someone chose.
bool drawsThreshold(const documents::ProfileDocument& profile);
// Labels for tick values: the fewest significant digits that keep them distinct and exact to 1e-9
// ("0.15", never "0.15000000000000002").
// `uniform`: one number of decimals for all (a linear axis); otherwise each value on its own (log).
std::vector<std::string> tickLabels(const std::vector<double>& ticks, bool uniform = true);
// The axis range covering [lo, hi]: padded by `pad` of the span (linear) or of the ratio (log).
Axis rangeOf(double lo, double hi, bool log, double pad = 0.05);
// At most `max` bytes of `s`, cut at a UTF-8 character boundary, "…" appended when cut.
std::string cut(const std::string& s, std::size_t max);
// Log when the data are positive and span at least `ratio` (an order of magnitude by default).
bool wantsLog(double lo, double hi, double ratio = 10);

// A legend entry: what it looks like and which series (data-series) it names.
struct Key {
  enum class Mark { box, line, band, point } mark = Mark::box;
  std::string colour = {};
  std::string label = {};
  std::string series = {};  // "" = the label
  std::string dash = {};    // a line's stroke-dasharray
  std::string shape = "";  // a point's marker (see Chart::marker), drawn on the line when set
};

class Chart {
 public:
  // `plot_h`: the plot area's height (a heatmap sizes it to its rows); the canvas follows.
  // `left`: the left margin (wider for long row labels).
  Chart(const std::string& title, const std::string& xlabel, const std::string& ylabel, Axis x, Axis y, double plot_h = kPlotH,
        double left = kLeft);
  double X(double v) const { return x_.map(v, left_, right()); }
  double Y(double v) const { return y_.map(v, bottom(), kTop); }
  double left() const { return left_; }
  double right() const { return kW - kRight; }
  double bottom() const { return kTop + plot_h_; }
  const Axis& xAxis() const { return x_; }
  const Axis& yAxis() const { return y_; }

  void yTicks(int approx = 6);
  void xTicks(const std::vector<std::pair<double, std::string>>& ticks, bool rotate = false);
  void xTicksAuto(int approx = 6);  // numeric ticks of the x axis, labelled like yTicks
  // Row labels at the left of the plot area (a heatmap's y axis).
  void yLabels(const std::vector<std::pair<double, std::string>>& labels);

  // A series: everything drawn between begin and end is one <g class="series" data-series=…>.
  void beginSeries(const std::string& series);
  void endSeries();
  // Markers: "circle", "square", "triangle", "diamond"; `tip` becomes the SVG <title>.
  void marker(const std::string& shape, double px, double py, double r, const std::string& colour, const std::string& tip = "",
              const std::string& cls = "point");
  static std::string shape(std::size_t i);  // circle, square, triangle, diamond, in turn

  // Legend entries in the right column; then optionally a colour bar under them. Either may make
  // the canvas taller; nothing overlaps the caption.
  void legend(const std::vector<Key>& keys);
  // A vertical colour bar from `lo` to `hi` (bottom to top) with numeric ticks; `fill(t)` gives the
  // colour at t ∈ [0, 1].
  template <class Fill>
  void colourBar(double lo, double hi, const std::string& label, Fill fill) {
    if (!(hi > lo)) hi = lo + 1;
    const double x = kW - kRight + 14, top = legend_bottom_ + 22, h = std::max(110.0, std::min(200.0, plot_h_ - 30));
    svg.text(x, top - 8, label, "font-size:10.5px", "start", 0, "legend-text");
    svg.begin("colour-bar");
    for (int i = 0; i < 48; ++i) svg.rect(x, top + h * (1 - (i + 1) / 48.0), 14, h / 48.0 + 0.4, "fill:" + fill((i + 0.5) / 48.0));
    svg.rect(x, top, 14, h, "fill:none;stroke:#444;stroke-width:0.6");
    svg.end();
    Axis a{lo, hi, false};
    const auto t = a.ticks(5);
    const auto labels = tickLabels(t);
    for (std::size_t i = 0; i < t.size(); ++i) {
      const double py = top + h * (1 - (t[i] - lo) / (hi - lo));
      svg.line(x + 14, py, x + 18, py, "stroke:#444");
      svg.text(x + 21, py + 3.5, labels[i], "font-size:10px", "start", 0, "tick-bar");
    }
    legend_bottom_ = top + h + 8;
  }
  void caption(const std::string& text);

  // The data behind the figure, one row per drawn value: series, x (or its label), y and its interval.
  void data(const std::string& series, double x, double y, double low = NAN, double high = NAN, const std::string& x_label = "");
  Figure figure(const std::string& name, const std::string& title, const std::string& caption);

  Svg svg;

 private:
  Axis x_, y_;
  double plot_h_, left_;
  double legend_bottom_;
  std::vector<std::string> rows_;
};

inline std::string prefix(const std::optional<std::string>& v) { return v ? v->substr(0, 12) : std::string("n/a"); }
inline double val(const std::optional<double>& v) { return v ? *v : std::nan(""); }

// The build and the machine that computed a figure's numbers, as its document records them: "omn-audit
// 0.1.0 (62d8d4fa373c) · AMD EPYC (avx512_bf16)" -- the widest of amx_bf16, avx512_bf16, avx512f, avx2
// it has (what the machine offers; the bf16 product kernel a pass chose is in its document) -- or "CPU
// not recorded" (documents written before the host was). A merged document records its first shard's.
inline std::string buildLine(const documents::Provenance& provenance) {
  std::string cpu = "CPU not recorded";
  if (provenance.host && provenance.host->cpu) {
    const auto& ext = provenance.host->cpu_vector_extensions;
    cpu = *provenance.host->cpu;
    for (const char* widest : {"amx_bf16", "avx512_bf16", "avx512f", "avx2"})
      if (std::find(ext.begin(), ext.end(), widest) != ext.end()) {
        cpu += std::string(" (") + widest + ")";
        break;
      }
  }
  return "omn-audit " + provenance.version + " (" + provenance.git_revision + ") · " + cpu;
}

// Where a figure's numbers came from: the checkpoint's digest, the token set's (a document that
// has one), the build and the CPU.
inline std::string sourceLine(const std::optional<std::string>& checkpoint_sha256, const std::string* tokens_sha256,
                              const documents::Provenance& provenance) {
  std::string s = "checkpoint sha256 " + prefix(checkpoint_sha256) + "…";
  if (tokens_sha256) s += " · tokens sha256 " + tokens_sha256->substr(0, 12) + "…";
  return s + " · " + buildLine(provenance);
}

}  // namespace omn::report::chart
