#include "omn/report/svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "omn/io/terminal_text.h"

namespace omn::report {

std::string xmlEscape(const std::string& text) {
  // XML 1.0 has no way to carry ESC, BEL or invalid UTF-8, not even as references: they are written
  // as visible escapes first ("\x1b"), as on a terminal; line breaks stay line breaks
  std::string s;
  for (std::size_t at = 0; at <= text.size();) {
    const std::size_t end = std::min(text.find('\n', at), text.size());
    s += io::terminalSafe(text.substr(at, end - at));
    if (end < text.size()) s += '\n';
    at = end + 1;
  }
  std::string o;
  for (char c : s) {
    switch (c) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      case '\'': o += "&apos;"; break;
      default: o += c;
    }
  }
  return o;
}

std::string num(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.2f", v);
  std::string s = b;
  if (s == "-0.00") s = "0.00";
  return s;
}

Svg::Svg(double width, double height, const std::string& title) : w_(width), h_(height), title_(title) {}

namespace {
std::string attrs(const std::string& style, const std::string& cls) {
  std::string a;
  if (!cls.empty()) a += " class=\"" + xmlEscape(cls) + "\"";
  if (!style.empty()) a += " style=\"" + xmlEscape(style) + "\"";
  return a;
}
std::string points(const std::vector<std::pair<double, double>>& pts) {
  std::string s;
  for (const auto& [x, y] : pts) s += (s.empty() ? "" : " ") + num(x) + "," + num(y);
  return s;
}
}  // namespace

void Svg::rect(double x, double y, double w, double h, const std::string& style, const std::string& cls) {
  body_ << "<rect x=\"" << num(x) << "\" y=\"" << num(y) << "\" width=\"" << num(w) << "\" height=\"" << num(h) << "\""
        << attrs(style, cls) << "/>\n";
}

void Svg::line(double x1, double y1, double x2, double y2, const std::string& style, const std::string& cls) {
  body_ << "<line x1=\"" << num(x1) << "\" y1=\"" << num(y1) << "\" x2=\"" << num(x2) << "\" y2=\"" << num(y2) << "\""
        << attrs(style, cls) << "/>\n";
}

void Svg::polyline(const std::vector<std::pair<double, double>>& pts, const std::string& style, const std::string& cls) {
  body_ << "<polyline points=\"" << points(pts) << "\"" << attrs(style + ";fill:none", cls) << "/>\n";
}

void Svg::polygon(const std::vector<std::pair<double, double>>& pts, const std::string& style, const std::string& cls) {
  body_ << "<polygon points=\"" << points(pts) << "\"" << attrs(style, cls) << "/>\n";
}

void Svg::circle(double x, double y, double r, const std::string& style, const std::string& cls, const std::string& tip) {
  body_ << "<circle cx=\"" << num(x) << "\" cy=\"" << num(y) << "\" r=\"" << num(r) << "\"" << attrs(style, cls);
  if (tip.empty()) body_ << "/>\n";
  else body_ << "><title>" << xmlEscape(tip) << "</title></circle>\n";
}

void Svg::text(double x, double y, const std::string& s, const std::string& style, const std::string& anchor, double rotate,
               const std::string& cls) {
  body_ << "<text x=\"" << num(x) << "\" y=\"" << num(y) << "\" text-anchor=\"" << anchor << "\"";
  if (!cls.empty()) body_ << " class=\"" << xmlEscape(cls) << "\"";
  if (rotate != 0) body_ << " transform=\"rotate(" << num(rotate) << " " << num(x) << " " << num(y) << ")\"";
  if (!style.empty()) body_ << " style=\"" << xmlEscape(style) << "\"";
  body_ << ">" << xmlEscape(s) << "</text>\n";
}

void Svg::begin(const std::string& cls, const std::string& series) {
  body_ << "<g class=\"" << xmlEscape(cls) << "\"";
  if (!series.empty()) body_ << " data-series=\"" << xmlEscape(series) << "\"";
  body_ << ">\n";
}

void Svg::end() { body_ << "</g>\n"; }

void Svg::tooltip(const std::string& text) { body_ << "<title>" << xmlEscape(text) << "</title>\n"; }

std::string Svg::str() const {
  std::ostringstream o;
  o << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << num(w_) << "\" height=\"" << num(h_) << "\" viewBox=\"0 0 "
    << num(w_) << " " << num(h_) << "\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\" font-size=\"12\">\n"
    << "<title>" << xmlEscape(title_) << "</title>\n"
    << "<rect x=\"0\" y=\"0\" width=\"" << num(w_) << "\" height=\"" << num(h_) << "\" style=\"fill:#ffffff\"/>\n"
    << body_.str() << "</svg>\n";
  return o.str();
}

double Axis::map(double v, double px_lo, double px_hi) const {
  double a = lo, b = hi, x = v;
  if (log) {
    a = std::log10(lo);
    b = std::log10(hi);
    x = std::log10(std::max(v, lo));
  }
  if (b == a) return (px_lo + px_hi) / 2;
  return px_lo + (x - a) / (b - a) * (px_hi - px_lo);
}

// Linear ticks at 1, 2, 2.5 or 5 × 10^k: the largest step that still gives at least four marks
// (three when the span is degenerate), about `approx` of them.
std::vector<double> Axis::ticks(int approx) const {
  // degenerate axes (from hostile documents: infinities, zero or negative log bounds, spans that
  // overflow) get no ticks rather than a loop that never ends
  if (!std::isfinite(lo) || !std::isfinite(hi) || (log && !(lo > 0 && hi > 0))) return {};
  if (log) {
    std::vector<double> t;
    const double decades = std::log10(hi) - std::log10(lo);
    // over many decades one mark per decade; over a few, 1-2-5 in each
    const std::vector<double> marks = decades > 4 ? std::vector<double>{1} : std::vector<double>{1, 2, 5};
    for (double p = std::floor(std::log10(lo)); p <= std::ceil(std::log10(hi)); ++p)
      for (double m : marks) {
        const double v = m * std::pow(10.0, p);
        if (v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9)) t.push_back(v);
      }
    if (t.size() >= 4) return t;
    // within about a decade 1-2-5 leaves the axis nearly bare: plain "nice" values instead (still
    // placed on the log scale)
    t.clear();
    for (double v : Axis{lo, hi, false}.ticks(approx))
      if (v > 0) t.push_back(v);
    return t;
  }
  const double span = hi - lo;
  if (!(span > 0) || !std::isfinite(span)) return {lo};
  const double raw = span / std::max(1, approx);
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double steps[] = {0.5 * mag, mag, 2 * mag, 2.5 * mag, 5 * mag, 10 * mag};
  std::vector<double> best;
  for (double step : steps) {
    std::vector<double> t;
    // by index, not by accumulation: exact multiples, and bounded (a step below the span's
    // resolution would otherwise never advance)
    const double first = std::ceil(lo / step - 1e-9);
    for (int k = 0; k < 200; ++k) {
      const double v = (first + k) * step;
      if (v > hi + 1e-9 * step) break;
      t.push_back(std::fabs(v) < 1e-12 * step ? 0 : v);
    }
    if (t.size() >= 4 || best.empty()) best = std::move(t);  // the coarsest step with four or more
    if (best.size() >= 4 && step >= raw) break;
  }
  return best;
}

}  // namespace omn::report
