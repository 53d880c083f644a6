// Plain aligned text tables for the terminal.
#pragma once
#include <ostream>
#include <string>
#include <vector>

namespace omn::output {

class Table {
 public:
  explicit Table(std::vector<std::string> header) : header_(std::move(header)) {}
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  void print(std::ostream& os, const std::string& indent = "  ") const;  // numbers right-aligned

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

std::string fixed(double v, int decimals);  // "3.460332"; "nan"/"inf" spelled out
std::string general(double v);              // shortest round-trip form

}  // namespace omn::output

namespace omn::output {
std::string significant(double v, int digits);  // "%.*g": differences and tolerances in tables
// "95% CI" for a confidence of 0.95: the level a result records, never a hard-coded 95
std::string ciLabel(double confidence);
// A CSV field (RFC 4180): quoted, with quotes doubled, only where it holds a comma, quote or line break.
std::string csvField(const std::string& s);
// A count held in a double (a product of list sizes that may overflow an integer) as a whole number.
std::string wholeNumber(double v);
}  // namespace omn::output
