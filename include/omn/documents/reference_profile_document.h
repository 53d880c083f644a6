// A reference of published figures (omn-audit/reference-profile@1, docs/schema/reference-profile.schema.json;
// docs/profile.md "Regression check"), typed: each figure a JSON pointer into a profile, the value as
// published and its decimals. What a regression gate checks a profile against besides an earlier
// profile. Read once at the edge (fromJson, after the schema and the older forms). No libtorch.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace omn::documents {

struct ReferenceFigure {
  std::optional<std::string> label;  // absent: the pointer names it
  std::string pointer;               // where in a profile document ("/statistics/mean")
  double value = 0;                  // as published
  std::int64_t decimals = 0;         // the published precision: a match is |actual - value| <= 0.5 * 10^-decimals
};

struct ReferenceOptions {
  std::optional<double> threshold;  // the --threshold the figures were computed with
};

struct ReferenceProfileDocument {
  std::optional<std::string> description, checkpoint_sha256;
  std::optional<ReferenceOptions> options;
  std::vector<ReferenceFigure> figures;

  // `doc` as checked and upgraded by documents::acceptDocument; FormatError naming `label` and the
  // JSON pointer of a member that does not convert.
  static ReferenceProfileDocument fromJson(const nlohmann::json& doc, const std::string& label);
  nlohmann::json toJson() const;
};

}  // namespace omn::documents
