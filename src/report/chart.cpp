// The chart layout every figure shares: palette, tick labels, axis ranges, legend and colour bar in
// the right column, the caption, and the tidy CSV of the drawn data.
#include "chart.h"

#include <cstdio>
#include <cstdlib>

#include "omn/audit/profile.h"

namespace omn::report::chart {

namespace {
const char* kTableau10[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e",
                            "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#7f7f7f"};

std::string hsl(double h, double s, double l) {  // h in degrees, s and l in [0, 1] → "#rrggbb"
  const double c = (1 - std::fabs(2 * l - 1)) * s, hp = std::fmod(h, 360.0) / 60.0;
  const double x = c * (1 - std::fabs(std::fmod(hp, 2.0) - 1));
  double r = 0, g = 0, b = 0;
  if (hp < 1) r = c, g = x;
  else if (hp < 2) r = x, g = c;
  else if (hp < 3) g = c, b = x;
  else if (hp < 4) g = x, b = c;
  else if (hp < 5) r = x, b = c;
  else r = c, b = x;
  const double m = l - c / 2;
  char out[8];
  std::snprintf(out, sizeof out, "#%02x%02x%02x", static_cast<int>(std::lround((r + m) * 255)), static_cast<int>(std::lround((g + m) * 255)),
                static_cast<int>(std::lround((b + m) * 255)));
  return out;
}

std::string csvNumber(double v) {
  if (!std::isfinite(v)) return "";
  char b[32];
  std::snprintf(b, sizeof b, "%.17g", v);
  return b;
}

}  // namespace

std::string cut(const std::string& s, std::size_t max) {
  if (s.size() <= max) return s;
  std::size_t n = max;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;  // not inside a character
  return s.substr(0, n) + "…";
}

std::string colour(std::size_t i, std::size_t n) {
  if (n <= 10) return kTableau10[i % 10];
  return hsl(360.0 * static_cast<double>(i) / static_cast<double>(n), 0.75, i % 2 == 0 ? 0.38 : 0.56);
}

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

std::string layerColour(std::size_t layer, std::size_t n_layers) {
  static const char* const kLayerColours[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                              "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
  if (n_layers <= 10) return kLayerColours[layer % 10];
  return viridis(0.85 * static_cast<double>(layer) / static_cast<double>(n_layers - 1));
}

bool drawsThreshold(const documents::ProfileDocument& profile) {
  return profile.preset.name == "omn-1" || profile.options.threshold != audit::ProfileOptions{}.threshold;
}

std::string dash(std::size_t i) {
  static const char* d[] = {"", "6,3", "2,2", "8,3,2,3"};
  return d[i % 4];
}

std::vector<std::string> tickLabels(const std::vector<double>& t, bool uniform) {
  if (!uniform && t.size() > 1) {  // a log axis: each value on its own ("0.05 … 1 … 100")
    std::vector<std::string> out;
    for (double v : t) out.push_back(tickLabels({v}, true)[0]);
    return out;
  }
  // every value in one printf format at one precision: exact to 1e-9 and neighbours distinct, or empty
  auto attempt = [&](const char* format, int precision) {
    std::vector<std::string> out;
    for (double v : t) {
      char b[48];
      std::snprintf(b, sizeof b, format, precision, v);
      if (std::fabs(std::strtod(b, nullptr) - v) > 1e-9 * std::fabs(v)) return std::vector<std::string>{};
      out.emplace_back(std::string(b) == "-0" ? "0" : b);
    }
    for (std::size_t i = 1; i < out.size(); ++i)
      if (out[i] == out[i - 1]) return std::vector<std::string>{};
    return out;
  };
  // positional with one number of decimals for the whole axis ("0.00 0.05 0.10", never "2e+02"),
  // where every value is between 1e-4 and 1e7; else the fewest significant digits
  bool positional = true;
  for (double v : t) positional = positional && (v == 0 || (std::fabs(v) >= 1e-4 && std::fabs(v) < 1e7));
  for (int decimals = 0; positional && decimals <= 8; ++decimals)
    if (auto out = attempt("%.*f", decimals); !out.empty()) return out;
  for (int digits = 1; digits <= 17; ++digits)
    if (auto out = attempt("%.*g", digits); !out.empty()) return out;
  std::vector<std::string> out;
  for (double v : t) out.push_back(general(v));
  return out;
}

Axis rangeOf(double lo, double hi, bool log, double pad) {
  Axis a;
  a.log = log;
  if (log) {
    lo = std::max(lo, std::numeric_limits<double>::min());
    hi = std::max(hi, lo);
    const double decades = std::log10(hi / lo);
    if (decades >= 1) {  // whole quarter decades
      a.lo = std::pow(10.0, std::floor(std::log10(lo) * 4) / 4);
      a.hi = std::pow(10.0, std::ceil(std::log10(hi) * 4) / 4);
    } else {  // within a decade: fitted to the data, so nothing is squeezed into a strip
      const double f = std::pow(10.0, std::max(decades, 0.02) * pad * 2);
      a.lo = lo / f;
      a.hi = hi * f;
    }
    if (a.hi <= a.lo) a.hi = a.lo * 10;
  } else {
    // a span below the values' own resolution is a constant: ticks there would repeat one value
    const double span = hi - lo > 1e-9 * std::max(std::fabs(lo), std::fabs(hi)) ? hi - lo : std::max(1.0, std::fabs(hi)) * 0.2;
    a.lo = lo - pad * span;
    a.hi = hi + pad * span;
  }
  return a;
}

bool wantsLog(double lo, double hi, double ratio) { return lo > 0 && std::isfinite(hi) && hi / lo >= ratio; }

Chart::Chart(const std::string& title, const std::string& xlabel, const std::string& ylabel, Axis x, Axis y, double plot_h, double left)
    : svg(kW, kTop + plot_h + kBottom, title), x_(x), y_(y), plot_h_(plot_h), left_(left), legend_bottom_(kTop) {
  svg.text(kW / 2, 22, title, "font-size:15px;font-weight:bold", "middle", 0, "title");
  svg.rect(left_, kTop, right() - left_, plot_h, "fill:#fafafa;stroke:#444;stroke-width:1", "plot-area");
  svg.text((left_ + right()) / 2, bottom() + 38, xlabel, "font-size:12px", "middle", 0, "axis-label");
  if (!ylabel.empty()) svg.text(16, kTop + plot_h / 2, ylabel, "font-size:12px", "middle", -90, "axis-label");
  rows_.push_back("series,x,x_label,y,y_low,y_high");
}

void Chart::yTicks(int approx) {
  const auto t = y_.ticks(approx);
  const auto labels = tickLabels(t, !y_.log);
  for (std::size_t i = 0; i < t.size(); ++i) {
    const double py = Y(t[i]);
    svg.line(left_, py, right(), py, "stroke:#ddd;stroke-width:1");
    svg.text(left_ - 6, py + 4, labels[i], "font-size:11px", "end", 0, "tick-y");
  }
}

void Chart::xTicks(const std::vector<std::pair<double, std::string>>& ticks, bool rotate) {
  for (const auto& [v, label] : ticks) {
    const double px = X(v);
    svg.line(px, bottom(), px, bottom() + 5, "stroke:#444");
    if (rotate) svg.text(px + 3, bottom() + 14, label, "font-size:10px", "end", -40, "tick-x");
    else svg.text(px, bottom() + 18, label, "font-size:11px", "middle", 0, "tick-x");
  }
}

void Chart::xTicksAuto(int approx) {
  const auto t = x_.ticks(approx);
  const auto labels = tickLabels(t, !x_.log);
  std::vector<std::pair<double, std::string>> xt;
  for (std::size_t i = 0; i < t.size(); ++i) xt.emplace_back(t[i], labels[i]);
  xTicks(xt);
}

void Chart::yLabels(const std::vector<std::pair<double, std::string>>& labels) {
  for (const auto& [v, label] : labels) svg.text(left_ - 6, Y(v) + 4, label, "font-size:10px", "end", 0, "row-label");
}

void Chart::beginSeries(const std::string& series) { svg.begin("series", series); }
void Chart::endSeries() { svg.end(); }

std::string Chart::shape(std::size_t i) {
  static const char* s[] = {"circle", "square", "triangle", "diamond"};
  return s[i % 4];
}

void Chart::marker(const std::string& shape, double px, double py, double r, const std::string& colour, const std::string& tip,
                   const std::string& cls) {
  const std::string style = "fill:" + colour + ";stroke:#fff;stroke-width:0.6";
  if (shape == "circle") return svg.circle(px, py, r, style, cls, tip);
  svg.begin(cls);
  if (!tip.empty()) svg.tooltip(tip);
  if (shape == "square") svg.rect(px - r * 0.9, py - r * 0.9, r * 1.8, r * 1.8, style);
  else if (shape == "triangle") svg.polygon({{px, py - r * 1.2}, {px + r * 1.1, py + r * 0.8}, {px - r * 1.1, py + r * 0.8}}, style);
  else svg.polygon({{px, py - r * 1.25}, {px + r * 1.05, py}, {px, py + r * 1.25}, {px - r * 1.05, py}}, style);
  svg.end();
}

void Chart::legend(const std::vector<Key>& keys) {
  // one row per entry, 16 px apart; a long list runs below the plot area and the canvas grows
  double y = legend_bottom_ + 8;
  const double x = kW - kRight + 12;
  for (const auto& k : keys) {
    svg.begin("legend-entry", k.series.empty() ? k.label : k.series);
    switch (k.mark) {
      case Key::Mark::box: svg.rect(x, y, 14, 10, "fill:" + k.colour); break;
      case Key::Mark::band: svg.rect(x, y - 1, 22, 12, "fill:" + k.colour + ";opacity:0.3"); break;
      case Key::Mark::line:
        svg.line(x, y + 5, x + 22, y + 5, "stroke:" + k.colour + ";stroke-width:2" + (k.dash.empty() ? "" : ";stroke-dasharray:" + k.dash));
        break;
      case Key::Mark::point: break;
    }
    if (!k.shape.empty()) marker(k.shape, x + 11, y + 5, 3.5, k.colour, "", "legend-marker");
    // labels longer than the column are cut (the CSV and the tooltips carry them whole)
    const std::string label = cut(k.label, 23);
    svg.text(x + 28, y + 9, label, "font-size:10.5px", "start", 0, "legend-text");
    svg.end();
    y += 16;
  }
  legend_bottom_ = y;
}

void Chart::caption(const std::string& text) {
  // wrapped at ~120 characters; it starts under the x-axis label, or under the legend if that is longer
  double y = std::max(bottom() + 60, legend_bottom_ + 16);
  std::string rest = text;
  while (!rest.empty()) {
    std::size_t cut = rest.size() <= 120 ? rest.size() : rest.rfind(' ', 120);
    if (cut == std::string::npos || cut == 0) cut = std::min<std::size_t>(120, rest.size());
    svg.text(12, y, rest.substr(0, cut), "font-size:10.5px;fill:#333", "start", 0, "caption");
    rest = rest.substr(std::min(rest.size(), cut + 1));
    y += 14;
  }
  svg.setHeight(std::max(svg.height(), y + 4));
}

void Chart::data(const std::string& series, double x, double y, double low, double high, const std::string& x_label) {
  rows_.push_back(output::csvField(series) + "," + csvNumber(x) + "," + output::csvField(x_label) + "," + csvNumber(y) + "," + csvNumber(low) + "," +
                  csvNumber(high));
}

Figure Chart::figure(const std::string& name, const std::string& title, const std::string& caption) {
  std::string csv;
  for (const auto& r : rows_) csv += r + "\n";
  return {name, title, caption, svg.str(), csv};
}

}  // namespace omn::report::chart
