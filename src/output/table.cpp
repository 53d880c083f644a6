#include "omn/output/table.h"

#include "omn/io/terminal_text.h"

#include <algorithm>
#include <cmath>
#include <cctype>
#include <cstdio>
#include <cstdlib>

namespace omn::output {

namespace {
bool numeric(const std::string& s) {
  return !s.empty() && (std::isdigit(static_cast<unsigned char>(s[0])) || ((s[0] == '-' || s[0] == '+') && s.size() > 1));
}
}  // namespace

void Table::print(std::ostream& os, const std::string& indent) const {
  // cells may hold text from files (tensor names, paths, labels): escaped for the terminal
  std::vector<std::vector<std::string>> rows;
  for (const auto& r : rows_) {
    rows.emplace_back();
    for (const auto& cell : r) rows.back().push_back(io::terminalSafe(cell, 200));
  }
  std::vector<std::size_t> w(header_.size(), 0);
  for (std::size_t c = 0; c < header_.size(); ++c) w[c] = header_[c].size();
  for (const auto& r : rows)
    for (std::size_t c = 0; c < r.size() && c < w.size(); ++c) w[c] = std::max(w[c], r[c].size());
  auto line = [&](const std::vector<std::string>& r) {
    os << indent;
    for (std::size_t c = 0; c < w.size(); ++c) {
      const std::string cell = c < r.size() ? r[c] : "";
      const std::string pad(w[c] - cell.size(), ' ');
      os << (c ? "  " : "") << (numeric(cell) ? pad + cell : cell + (c + 1 < w.size() ? pad : ""));
    }
    os << "\n";
  };
  line(header_);
  std::vector<std::string> rule;
  for (auto x : w) rule.emplace_back(x, '-');
  line(rule);
  for (const auto& r : rows) line(r);
}

std::string fixed(double v, int decimals) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char b[64];
  std::snprintf(b, sizeof b, "%.*f", decimals, v);
  return b;
}

std::string csvField(const std::string& text) {
  // control characters and invalid UTF-8 as visible escapes ("\x1b"): a CSV is also read with cat
  const std::string s = io::terminalSafe(text);
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

std::string wholeNumber(double v) {
  char b[64];
  std::snprintf(b, sizeof b, "%.0f", v);
  return b;
}

std::string ciLabel(double confidence) { return significant(100 * confidence, 4) + "% CI"; }

std::string general(double v) {
  char b[64];
  for (int p = 6; p <= 17; ++p) {
    std::snprintf(b, sizeof b, "%.*g", p, v);
    if (std::strtod(b, nullptr) == v) break;
  }
  return b;
}

}  // namespace omn::output

namespace omn::output {
std::string significant(double v, int digits) {
  char b[64];
  std::snprintf(b, sizeof b, "%.*g", digits, v);
  return b;
}
}  // namespace omn::output
