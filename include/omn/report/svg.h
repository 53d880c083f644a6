// A small SVG writer: shapes, text (XML-escaped), and numbers printed with fixed precision so that
// the same JSON always gives the same bytes. No timestamps, no randomness.
#pragma once
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace omn::report {

std::string xmlEscape(const std::string& s);
std::string num(double v);  // fixed 2 decimals, "-0.00" normalised to "0.00"

class Svg {
 public:
  Svg(double width, double height, const std::string& title);
  void rect(double x, double y, double w, double h, const std::string& style, const std::string& cls = "");
  void line(double x1, double y1, double x2, double y2, const std::string& style, const std::string& cls = "");
  void polyline(const std::vector<std::pair<double, double>>& pts, const std::string& style, const std::string& cls = "");
  void polygon(const std::vector<std::pair<double, double>>& pts, const std::string& style, const std::string& cls = "");
  void circle(double x, double y, double r, const std::string& style, const std::string& cls = "", const std::string& tip = "");
  void text(double x, double y, const std::string& s, const std::string& style = "", const std::string& anchor = "start",
            double rotate = 0, const std::string& cls = "");
  // A group: <g class="cls" data-series="series">; what is drawn until end() belongs to it.
  void begin(const std::string& cls, const std::string& series = "");
  void end();
  void tooltip(const std::string& text);  // <title>: the enclosing group's tooltip
  void setHeight(double h) { h_ = h; }
  double height() const { return h_; }
  std::string str() const;  // the whole document

 private:
  double w_, h_;
  std::string title_;
  std::ostringstream body_;
};

// Axes: a plot area inside the canvas mapping data to pixels, linear or log10 on y.
struct Axis {
  double lo = 0, hi = 1;
  bool log = false;
  double map(double v, double px_lo, double px_hi) const;  // data → pixel
  std::vector<double> ticks(int approx) const;             // "nice" tick values
};

}  // namespace omn::report
