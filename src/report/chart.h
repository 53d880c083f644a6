// Internal to the plots: one chart layout (plot area, axes, legend at the right, caption below)
// shared by every figure, and the caption's source line.
#pragma once
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "omn/report/svg.h"
#include "omn/output/table.h"

namespace omn::report::chart {
using output::general;


using nlohmann::json;

constexpr double kW = 760, kH = 440, kLeft = 78, kRight = 170, kTop = 44, kBottom = 96;
inline const char* kColours[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf", "#7f7f7f"};

inline std::string prefix(const json& v) { return v.is_string() ? v.get<std::string>().substr(0, 12) : std::string("n/a"); }

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

inline Axis rangeOf(double lo, double hi, bool log, double pad = 0.05) {
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

inline std::string sourceLine(const json& doc) {
  const json& ck = doc.contains("checkpoint") ? doc["checkpoint"] : json::object();
  std::string s = "checkpoint sha256 " + prefix(ck.value("sha256", json())) + "…";
  if (doc.contains("tokens")) s += " · tokens sha256 " + prefix(doc["tokens"].value("sha256", json())) + "…";
  s += " · omn-audit " + doc["provenance"].value("version", "?") + " (" + doc["provenance"].value("git_revision", "?") + ")";
  return s;
}

inline double val(const json& v) { return v.is_null() ? std::nan("") : v.get<double>(); }

}  // namespace omn::report::chart
