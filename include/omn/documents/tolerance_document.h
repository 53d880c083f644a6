// How far a regression gate lets a statistic drift from its baseline (omn-audit/tolerance@1,
// docs/schema/tolerance.schema.json; docs/profile.md "Tolerances"), typed: a default allowance and
// rules by pointer pattern, the first match applying. Read once at the edge (fromJson, after the
// schema). No libtorch.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace omn::documents {

// The deviation allowed: max(abs, rel * |baseline|); an absent member allows nothing.
struct Allowance {
  std::optional<double> abs, rel;
};

struct ToleranceRule : Allowance {
  std::string pointer;  // a pattern: '*' matches within one segment ("/layers/*/q/mean")
};

struct ToleranceDocument {
  std::optional<Allowance> fallback;  // the document's "default": what no rule matches
  std::optional<std::vector<ToleranceRule>> rules;

  // `doc` as checked by documents::acceptDocument; FormatError naming `label` and the JSON pointer
  // of a member that does not convert.
  static ToleranceDocument fromJson(const nlohmann::json& doc, const std::string& label);
  nlohmann::json toJson() const;
};

}  // namespace omn::documents
