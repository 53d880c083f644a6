#include "omn/report/svg.h"

#include <cmath>
#include <cstdio>

namespace omn::report {

std::string xmlEscape(const std::string& s) {
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

void Svg::text(double x, double y, const std::string& s, const std::string& style, const std::string& anchor, double rotate) {
  body_ << "<text x=\"" << num(x) << "\" y=\"" << num(y) << "\" text-anchor=\"" << anchor << "\"";
  if (rotate != 0) body_ << " transform=\"rotate(" << num(rotate) << " " << num(x) << " " << num(y) << ")\"";
  if (!style.empty()) body_ << " style=\"" << xmlEscape(style) << "\"";
  body_ << ">" << xmlEscape(s) << "</text>\n";
}

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

std::vector<double> Axis::ticks(int approx) const {
  std::vector<double> t;
  if (log) {
    for (double p = std::floor(std::log10(lo)); p <= std::ceil(std::log10(hi)); ++p) {
      const double v = std::pow(10.0, p);
      for (double m : {1.0, 2.0, 5.0})
        if (m * v >= lo * (1 - 1e-9) && m * v <= hi * (1 + 1e-9)) t.push_back(m * v);
    }
    if (t.size() >= 3) return t;
    // less than a decade: 1-2-5 marks leave the axis nearly bare; plain "nice" values instead
    // (still placed on the log scale)
    Axis linear{lo, hi, false};
    t.clear();
    for (double v : linear.ticks(approx))
      if (v > 0) t.push_back(v);
    return t;
  }
  const double span = hi - lo;
  if (span <= 0) return {lo};
  const double raw = span / std::max(1, approx);
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * mag >= raw) {
      step = m * mag;
      break;
    }
  for (double v = std::ceil(lo / step) * step; v <= hi + 1e-9 * step; v += step) t.push_back(std::fabs(v) < 1e-12 * step ? 0 : v);
  return t;
}

}  // namespace omn::report
