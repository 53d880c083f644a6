// Internal to the report: a table as rows of cells, rendered to HTML or Markdown, and the cell
// text helpers every section of the report shares.
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace omn::report {

// A number with `decimals` digits after the point; "NaN" for none (a non-finite value, null in a document).
std::string f(const std::optional<double>& v, int decimals);
std::string f(double v, int decimals);

// A cell that holds a number — an estimate, a count, an interval "[a, b]", "+2.3%", "1.06×", "NaN"
// or "—" in a numeric column — is right-aligned with figures of equal width, so magnitudes line up
// down a column. Versions ("0.1.0"), digests, dates and prose stay left.
bool numericCell(const std::string& c);

// Text from a document in a Markdown file, which is read with cat as often as in a renderer: one
// line (a newline could forge a line such as "No warnings: ..."), control characters and invalid
// UTF-8 as visible escapes (io/terminal_text.h); in a table cell '|' is escaped too.
std::string markdownText(const std::string& text);
std::string markdownCell(const std::string& text);

struct Grid {
  std::vector<std::string> head;
  std::vector<std::vector<std::string>> rows;
  std::string html() const;
  std::string markdown() const;
};

}  // namespace omn::report
