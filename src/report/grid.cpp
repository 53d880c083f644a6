#include "grid.h"

#include <regex>
#include <sstream>

#include "omn/io/terminal_text.h"
#include "omn/output/table.h"
#include "omn/report/svg.h"

namespace omn::report {

std::string f(const std::optional<double>& v, int decimals) { return v ? output::fixed(*v, decimals) : "NaN"; }
std::string f(double v, int decimals) { return output::fixed(v, decimals); }

bool numericCell(const std::string& c) {
  // (alternations, not character classes: "−" and "×" are several bytes in UTF-8)
  static const std::string n = R"((-|\+|−)?[0-9][0-9,]*(\.[0-9]+)?(e[-+]?[0-9]+)?( ?(%|×))?)";
  static const std::regex number("^(" + n + "|\\[" + n + ", " + n + "\\])$");
  return c == "NaN" || c == "—" || (c.size() <= 80 && std::regex_match(c, number));  // (bounded: std::regex recurses)
}

std::string markdownText(const std::string& text) { return io::terminalSafe(text); }

std::string markdownCell(const std::string& text) {
  std::string out;
  for (char c : io::terminalSafe(text)) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

std::string Grid::html() const {
  std::ostringstream o;
  o << "<table><thead><tr>";
  for (const auto& h : head) o << "<th>" << xmlEscape(h) << "</th>";
  o << "</tr></thead><tbody>\n";
  for (const auto& r : rows) {
    o << "<tr>";
    for (const auto& c : r) o << (numericCell(c) ? "<td class=\"num\">" : "<td>") << xmlEscape(c) << "</td>";
    o << "</tr>\n";
  }
  o << "</tbody></table>\n";
  return o.str();
}

std::string Grid::markdown() const {
  std::ostringstream o;
  o << "|";
  for (const auto& h : head) o << " " << markdownCell(h) << " |";
  o << "\n|";
  for (std::size_t i = 0; i < head.size(); ++i) o << "---|";
  o << "\n";
  for (const auto& r : rows) {
    o << "|";
    for (const auto& c : r) o << " " << markdownCell(c) << " |";
    o << "\n";
  }
  return o.str();
}

}  // namespace omn::report
