// Documents of an older form, read as today's. A sweep written before 2026-12-07 names two
// --mechanism metrics otherwise (mean_attention_entropy, max_logit); they are read under today's
// names (attention_entropy, max_attention_logit). A profile written before count ranges were an option
// (2026-12-01) holds the audit's two counts under fixed names (count_in_1_2, count_above_32); they
// are the ranges [1,2] and (32,inf), read as statistics/counts so that a baseline from then still
// gates, compares and renders like a new one; a reference's figures pointing at those fields are
// pointed at the counts.
#pragma once
#include <utility>

#include <nlohmann/json.hpp>

#include "omn/documents/document.h"

namespace omn::documents {

// The count fields of profiles written before 2026-12-01 and the range each one is: the one table the
// document reader and the tolerance matcher read them by.
struct LegacyCount {
  const char* field;    // "/statistics/count_in_1_2"
  const char* pointer;  // "/statistics/counts/[1,2]/count"
};
inline constexpr LegacyCount kLegacyCounts[] = {{"/statistics/count_in_1_2", "/statistics/counts/[1,2]/count"},
                                                {"/statistics/count_above_32", "/statistics/counts/(32,inf)/count"}};

// The --mechanism metrics a sweep written before 2026-12-07 names otherwise: (old name, today's).
inline constexpr std::pair<const char*, const char*> kLegacyMetricNames[] = {{"mean_attention_entropy", "attention_entropy"},
                                                                            {"max_logit", "max_attention_logit"}};

// `doc`, already checked as `kind`, in today's form (unchanged when it already is, or the kind has
// no older form).
void upgradeDocument(nlohmann::json& doc, DocumentKind kind);

}  // namespace omn::documents
