// The regression check: published figures at their precision, earlier profiles, tolerance rules.
// The gate reads typed documents: a profile, a baseline (profile or reference) and a tolerance, each
// read once at the edge; a malformed one is refused there, naming the place.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <optional>

#include "omn/audit/profile_run.h"
#include "omn/audit/regression.h"
#include "omn/documents/document.h"
#include "omn/documents/reference_profile_document.h"
#include "omn/documents/tolerance_document.h"
#include "omn/errors.h"
#include "omn/io/json_document.h"

using nlohmann::json;
using omn::audit::Baseline;
using omn::documents::ProfileDocument;
using omn::documents::ToleranceDocument;

namespace {

ProfileDocument profileOf(const std::string& file) {
  omn::audit::ProfileRequest r;
  r.checkpoint = std::string(OMN_FIXTURES) + "/" + file;
  return omn::audit::profileCheckpoint(r);
}

json referenceJson() {
  std::ifstream in(std::string(OMN_SOURCE_DIR) + "/configs/omn-1-reference-profile.json");
  return json::parse(in);
}

Baseline reference() { return omn::audit::readBaseline(referenceJson(), "ref"); }

// A tolerance document as --tolerance reads it: checked against its schema, then typed.
std::optional<ToleranceDocument> tolerance(const json& t, const std::string& label = "t") {
  omn::documents::checkDocument(t, "tolerance " + label, {omn::documents::DocumentKind::tolerance});
  return ToleranceDocument::fromJson(t, "tolerance " + label);
}

const std::optional<ToleranceDocument> kNone;

}  // namespace

TEST(Regression, CalibratedMiniMatchesEveryPublishedFigure) {
  const auto rep = omn::audit::checkRegression(profileOf("omn1-mini.pt"), reference(), kNone, "ref");
  EXPECT_EQ(rep.baseline_kind, "reference");
  EXPECT_EQ(rep.checks.size(), 17u);
  for (const auto& c : rep.checks) EXPECT_TRUE(c.ok()) << c.label << ": " << c.actual << " vs " << c.baseline.value_or(NAN);
  const auto v = omn::audit::regressionVerdict(rep, "ref", "");
  EXPECT_EQ(v.verdict, "pass");
  EXPECT_EQ(v.exit_code, 0);
  EXPECT_EQ(v.checked, 17);
  EXPECT_FALSE(v.tolerance.has_value());
  EXPECT_TRUE(v.drifts.empty());
}

TEST(Regression, PerturbedLayerDrifts) {
  const auto rep = omn::audit::checkRegression(profileOf("omn1-mini-perturbed.pt"), reference(), kNone, "ref");
  EXPECT_GT(rep.drifted(), 0u);
  bool mean_drifted = false;
  for (const auto& c : rep.checks) mean_drifted |= c.pointer == "/statistics/mean" && !c.ok();
  EXPECT_TRUE(mean_drifted);
  // the verdict a document carries: every drifted check, with its actual value
  const auto v = omn::audit::regressionVerdict(rep, "ref", "t.json");
  EXPECT_EQ(v.verdict, "drift");
  EXPECT_EQ(v.exit_code, 3);
  EXPECT_EQ(v.tolerance, "t.json");
  EXPECT_EQ(v.baseline_kind, "reference");
  ASSERT_EQ(v.drifts.size(), rep.drifted());
  EXPECT_EQ(v.drifted, static_cast<std::int64_t>(rep.drifted()));
  for (const auto& d : v.drifts) EXPECT_TRUE(d.actual.has_value()) << d.pointer;
}

TEST(Regression, ProfileBaselineIsExactAndToleranceRulesApply) {
  const ProfileDocument a = profileOf("omn1-mini.pt");
  EXPECT_EQ(omn::audit::checkRegression(a, a, kNone, "a").drifted(), 0u);
  ProfileDocument b = a;
  b.layers[3].q.mean = *b.layers[3].q.mean + 0.004;
  EXPECT_EQ(omn::audit::checkRegression(b, a, kNone, "a").drifted(), 1u);
  const auto tol = tolerance({{"schema", "omn-audit/tolerance@1"},
                              {"default", {{"abs", 0.0}}},
                              {"rules", {{{"pointer", "/layers/*/q/mean"}, {"abs", 0.005}}}}});
  EXPECT_EQ(omn::audit::checkRegression(b, a, tol, "a").drifted(), 0u);
  const auto rel = tolerance({{"schema", "omn-audit/tolerance@1"}, {"default", {{"rel", 0.01}}}});
  EXPECT_EQ(omn::audit::checkRegression(b, a, rel, "a").drifted(), 0u);
}

// docs/profile.md's example: a tolerance file widens a published figure's rounding, never narrows it
// (it once replaced it: an abs 0 default made every rounded figure drift on the very checkpoint).
TEST(Regression, AToleranceFileAgainstAReferenceKeepsThePublishedRounding) {
  const auto tol = tolerance({{"schema", "omn-audit/tolerance@1"},
                              {"default", {{"abs", 0.0}, {"rel", 1e-9}}},
                              {"rules", {{{"pointer", "/layers/*/q/mean"}, {"abs", 0.01}}, {{"pointer", "/statistics/counts/*/count"}, {"abs", 0}}}}});
  EXPECT_EQ(omn::audit::checkRegression(profileOf("omn1-mini.pt"), reference(), tol, "ref").drifted(), 0u);
  EXPECT_GT(omn::audit::checkRegression(profileOf("omn1-mini-perturbed.pt"), reference(), tol, "ref").drifted(), 0u);
  // and it still widens: layer 0's Q mean 25.032 published, a rule of abs 1 accepts 25.5
  ProfileDocument moved = profileOf("omn1-mini.pt");
  moved.layers[0].q.mean = 25.5;
  EXPECT_EQ(omn::audit::checkRegression(moved, reference(), tol, "ref").drifted(), 1u);
  const auto wide = tolerance({{"schema", "omn-audit/tolerance@1"}, {"rules", {{{"pointer", "/layers/*/q/mean"}, {"abs", 1.0}}}}});
  EXPECT_EQ(omn::audit::checkRegression(moved, reference(), wide, "ref").drifted(), 0u);
}

TEST(Regression, MalformedInputsNameThePlace) {
  const ProfileDocument a = profileOf("omn1-mini.pt");
  try {
    omn::audit::readBaseline(json{{"schema", "x"}}, "baseline b.json");
    FAIL();
  } catch (const omn::FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("b.json: /schema"), std::string::npos) << e.what();
  }
  try {
    tolerance(json{{"schema", "omn-audit/tolerance@1"}, {"rules", {{{"pointer", "/x"}, {"abs", "big"}}}}}, "t.json");
    FAIL();
  } catch (const omn::FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("t.json: /rules/0/abs"), std::string::npos) << e.what();
  }
  ProfileDocument other = a;
  other.options.threshold = 2.0;
  EXPECT_THROW(omn::audit::checkRegression(a, other, kNone, "a"), omn::UsageError);
}

TEST(Regression, MissingStatisticIsDrift) {
  const ProfileDocument a = profileOf("omn1-mini.pt");
  ProfileDocument b = a;
  b.layers.erase(b.layers.begin() + 27);
  const auto rep = omn::audit::checkRegression(b, a, kNone, "a");
  EXPECT_EQ(rep.drifted(), 10u);  // layer 27: Q and K, five moments each
  const auto drifts = rep.drifts();
  ASSERT_EQ(drifts.size(), 10u);
  EXPECT_EQ(drifts[0].pointer, "/layers/27/q/count");
  EXPECT_FALSE(drifts[0].actual.has_value());  // null in the document: missing, not zero
}

TEST(Regression, AGateThatChecksNothingFails) {
  const ProfileDocument a = profileOf("omn1-mini.pt");
  // a bare schema, a reference without figures: refused by the schema as they are read, naming the pointer
  for (const json& b : {json{{"schema", "omn-audit/profile@1"}}, json{{"schema", "omn-audit/reference-profile@1"}, {"figures", json::array()}}}) {
    try {
      omn::audit::readBaseline(b, "baseline b.json");
      FAIL() << b.dump();
    } catch (const omn::FormatError& e) {
      EXPECT_NE(std::string(e.what()).find("b.json: /"), std::string::npos) << e.what();
    }
  }
  ProfileDocument no_layers = a;
  no_layers.layers.clear();
  EXPECT_THROW(omn::audit::readBaseline(no_layers.toJson(), "baseline b.json"), omn::FormatError);  // the schema wants a layer
}

TEST(Regression, PointerPatternsMatchBySegmentInLinearTime) {
  using omn::audit::pointerMatches;
  EXPECT_TRUE(pointerMatches("/layers/*/q/mean", "/layers/12/q/mean"));
  EXPECT_FALSE(pointerMatches("/layers/*/q/mean", "/layers/12/k/mean"));
  EXPECT_FALSE(pointerMatches("/layers/*", "/layers/1/q"));  // '*' stays inside one segment
  EXPECT_TRUE(pointerMatches("/statistics/counts/*/count", "/statistics/counts/(32,inf)/count"));
  EXPECT_TRUE(pointerMatches("/*/*", "/statistics/mean"));
  EXPECT_TRUE(pointerMatches("/a*b*c", "/aXbYc"));
  EXPECT_FALSE(pointerMatches("/a*b*c", "/aXbY"));
  EXPECT_TRUE(pointerMatches("/x", "/x"));
  EXPECT_FALSE(pointerMatches("/x", "/x/"));
  // 40 stars against a long near-miss: a backtracking regex took exponential time here
  const std::string stars = "/" + std::string(40, '*') + "x";
  EXPECT_FALSE(pointerMatches(stars, "/" + std::string(5000, 'a')));
  EXPECT_TRUE(pointerMatches(stars, "/" + std::string(5000, 'a') + "x"));
}

TEST(Regression, NonFiniteGainsAreDriftFromAnyBaselineWithoutThem) {
  // the statistics leave NaN gains out, so the gate must not: a reference has no such count
  ProfileDocument p = profileOf("omn1-mini.pt");
  p.statistics.count_non_finite = 3;
  const auto rep = omn::audit::checkRegression(p, reference(), kNone, "ref");
  EXPECT_EQ(rep.drifted(), 1u);
  EXPECT_EQ(rep.checks.back().pointer, "/statistics/count_non_finite");
  // a profile baseline counts them like any statistic; an old one (without the field) too
  ProfileDocument base = profileOf("omn1-mini.pt");
  EXPECT_EQ(omn::audit::checkRegression(p, base, kNone, "b").drifted(), 1u);
  base.statistics.count_non_finite.reset();
  EXPECT_EQ(omn::audit::checkRegression(p, base, kNone, "b").drifted(), 1u);
  EXPECT_EQ(omn::audit::checkRegression(base, base, kNone, "b").drifted(), 0u);
}

// A baseline that counts a range this profile does not is a usage error naming the flag (checked
// before the checkpoint is hashed); extra ranges in the profile are fine.
TEST(Regression, CountRangesOfTheBaselineMustBeCounted) {
  const ProfileDocument a = profileOf("omn1-mini.pt");
  omn::audit::ProfileOptions only12;
  only12.count_ranges = {omn::audit::parseCountRange("[1,2]", "f")};
  for (const Baseline& baseline : {Baseline(a), reference()}) {
    try {
      omn::audit::checkComparable(baseline, omn::audit::optionsRecord(only12), "b.json");
      FAIL();
    } catch (const omn::UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("b.json: /statistics/counts/(32,inf)/count"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("--count-range '(32,inf)'"), std::string::npos) << e.what();
    }
  }
  omn::audit::ProfileOptions more;
  more.count_ranges.push_back(omn::audit::parseCountRange("<0", "f"));
  EXPECT_NO_THROW(omn::audit::checkComparable(a, omn::audit::optionsRecord(more), "b.json"));
  EXPECT_NO_THROW(omn::audit::checkComparable(reference(), omn::audit::optionsRecord(more), "b.json"));
  omn::audit::ProfileOptions thr;
  thr.threshold = 2;
  try {
    omn::audit::checkComparable(reference(), omn::audit::optionsRecord(thr), "b.json");
    FAIL();
  } catch (const omn::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("b.json: /options/threshold: the reference's figures use threshold 1.43, this profile 2.0: "
                                         "pass --threshold 1.43"),
              std::string::npos)
        << e.what();
  }
  // the gate finds each count at its pointer
  bool found = false;
  for (const auto& c : omn::audit::checkRegression(a, a, kNone, "a").checks)
    found |= c.pointer == "/statistics/counts/(32,inf)/count" && c.ok() && c.baseline == 59;
  EXPECT_TRUE(found);
}

// A profile written before the ranges were options (count_in_1_2, count_above_32, no
// options/count_ranges) still gates: read as the ranges [1,2] and (32,inf).
TEST(Regression, AProfileFromBeforeCountRangesStillGates) {
  const ProfileDocument now = profileOf("omn1-mini.pt");
  json old = now.toJson();
  old["statistics"]["count_in_1_2"] = old["statistics"]["counts"]["[1,2]"]["count"];
  old["statistics"]["count_above_32"] = old["statistics"]["counts"]["(32,inf)"]["count"];
  old["statistics"].erase("counts");
  old["options"].erase("count_ranges");
  const std::string path = testing::TempDir() + "old-profile.json";
  std::ofstream(path) << old.dump();
  const json read = omn::documents::readDocument(path, "baseline", {omn::documents::DocumentKind::profile}).json;
  std::remove(path.c_str());
  EXPECT_EQ(read["statistics"]["counts"], now.toJson()["statistics"]["counts"]);
  EXPECT_EQ(read["options"]["count_ranges"], now.toJson()["options"]["count_ranges"]);
  EXPECT_FALSE(read["statistics"].contains("count_in_1_2"));
  const Baseline baseline = omn::audit::readBaseline(read, "baseline old");
  const auto rep = omn::audit::checkRegression(now, baseline, kNone, "old");
  EXPECT_EQ(rep.drifted(), 0u);
  EXPECT_EQ(rep.checks.size(), omn::audit::comparableStatistics(now).size());
}

// The gate's statistics are the document's numbers at their pointers: each one comparableStatistics
// names is where toJson writes it, so a reference's figure (a JSON pointer) finds the same number.
TEST(Regression, EveryComparableStatisticIsTheDocumentsNumberAtItsPointer) {
  for (const char* file : {"omn1-mini.pt", "interop/qwen3.safetensors"}) {
    const ProfileDocument p = profileOf(file);
    const auto numbers = p.numbers();
    const json doc = p.toJson();
    const auto stats = omn::audit::comparableStatistics(p);
    EXPECT_GT(stats.size(), 10u * static_cast<std::size_t>(p.gains.n_layers)) << file;
    for (const auto& [ptr, v] : stats) {
      if (!v) {  // none there: the document's null
        EXPECT_TRUE(doc.at(json::json_pointer(ptr)).is_null()) << file << " " << ptr;
        continue;
      }
      ASSERT_TRUE(numbers.count(ptr)) << file << " " << ptr;
      EXPECT_EQ(numbers.at(ptr), *v) << file << " " << ptr;
      EXPECT_EQ(doc.at(json::json_pointer(ptr)).get<double>(), *v) << file << " " << ptr;
    }
    EXPECT_EQ(numbers.at("/gains/n_layers"), static_cast<double>(p.gains.n_layers));
    EXPECT_EQ(numbers.count("/preset/name"), 0u);  // a string is no number
  }
}

// Review of the count ranges: an older reference, older tolerance rules, baseline keys no run writes,
// documents that hold neither or both layouts.
TEST(Regression, OlderReferencesAndToleranceRulesKeepTheirMeaning) {
  const ProfileDocument now = profileOf("omn1-mini.pt");
  json ref = referenceJson();
  for (auto& f : ref["figures"]) {  // the reference as shipped before 2026-12-01
    if (f["pointer"] == "/statistics/counts/[1,2]/count") f["pointer"] = "/statistics/count_in_1_2";
    if (f["pointer"] == "/statistics/counts/(32,inf)/count") f["pointer"] = "/statistics/count_above_32";
  }
  const Baseline old_ref = omn::audit::readBaseline(ref, "old ref");
  const auto rep = omn::audit::checkRegression(now, old_ref, kNone, "old ref");
  EXPECT_EQ(rep.checks.size(), 17u);
  EXPECT_EQ(rep.drifted(), 0u);  // it said "missing ... DRIFT" twice

  // a rule for the old fields still holds the counts to it: abs 0 on count_*, a loose default
  const auto old_rule = tolerance({{"schema", "omn-audit/tolerance@1"}, {"default", {{"rel", 0.2}}},
                                   {"rules", {{{"pointer", "/statistics/count_*"}, {"abs", 0}}}}});
  ProfileDocument moved = now;
  moved.statistics.counts.at("[1,2]").count = 5234;
  EXPECT_EQ(omn::audit::checkRegression(moved, now, old_rule, "a").drifted(), 1u);
  const auto loose = tolerance({{"schema", "omn-audit/tolerance@1"}, {"default", {{"rel", 0.2}}}});
  EXPECT_EQ(omn::audit::checkRegression(moved, now, loose, "a").drifted(), 0u);

  const auto rules = tolerance({{"schema", "omn-audit/tolerance@1"},
                                {"rules", {{{"pointer", "/statistics/count_above_32"}, {"abs", 0}}, {{"pointer", "/statistics/cout_*"}, {"abs", 0}}}}});
  EXPECT_EQ(omn::audit::unmatchedRules(now, rules), std::vector<std::string>({"/rules/1 \"/statistics/cout_*\""}));
  EXPECT_TRUE(omn::audit::unmatchedRules(now, kNone).empty());
}

TEST(Regression, ABaselineRangeMustBeWrittenAsAProfileWritesIt) {
  json ref = referenceJson();
  ref["figures"][8]["pointer"] = "/statistics/counts/>32/count";
  try {
    omn::audit::checkComparable(omn::audit::readBaseline(ref, "r"), omn::audit::optionsRecord({}), "r.json");
    FAIL();
  } catch (const omn::FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("r.json: /statistics/counts/>32/count: the count range '>32' is written '(32,inf)'"),
              std::string::npos) << e.what();
  }
  ref["figures"][8]["pointer"] = "/statistics/counts/(inf,inf)/count";
  EXPECT_THROW(omn::audit::checkComparable(omn::audit::readBaseline(ref, "r"), omn::audit::optionsRecord({}), "r.json"), omn::FormatError);
}

TEST(Regression, AProfileHoldsCountsOrBothOldFieldsNeverNeitherOrAMix) {
  const json now = profileOf("omn1-mini.pt").toJson();
  json neither = now;
  neither["statistics"].erase("counts");
  EXPECT_THROW(omn::documents::checkDocument(neither, "p", {omn::documents::DocumentKind::profile}), omn::FormatError);
  json mixed = now;
  mixed["statistics"]["count_in_1_2"] = 999;
  EXPECT_THROW(omn::documents::checkDocument(mixed, "p", {omn::documents::DocumentKind::profile}), omn::FormatError);
  json half = neither;
  half["statistics"]["count_in_1_2"] = 5233;
  EXPECT_THROW(omn::documents::checkDocument(half, "p", {omn::documents::DocumentKind::profile}), omn::FormatError);
  half["statistics"]["count_above_32"] = 59;
  EXPECT_NO_THROW(omn::documents::checkDocument(half, "p", {omn::documents::DocumentKind::profile}));
}

// Another architecture is exit 2 naming both shapes, not a list of DRIFT rows (issue 28): a
// 28-layer profile against a 4-layer one, and a 4-layer one against OMN-1's reference (whose
// figures name layer 27).
TEST(Regression, AnotherArchitectureIsAUsageErrorNotDrift) {
  const ProfileDocument a = profileOf("omn1-mini.pt");  // 28 layers
  ProfileDocument shallow = a;
  shallow.gains.n_layers = 4;
  shallow.layers.resize(4);
  try {
    omn::audit::checkRegression(shallow, a, kNone, "b.json");
    FAIL();
  } catch (const omn::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("b.json: another architecture: the baseline has 28 layers"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("(this checkpoint: 4 layers"), std::string::npos) << e.what();
  }
  try {
    omn::audit::checkRegression(shallow, reference(), kNone, "ref.json");
    FAIL();
  } catch (const omn::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("ref.json: another architecture: its figure /layers/27/"), std::string::npos) << e.what();
  }
  ProfileDocument wide = a;
  wide.gains.head_dim = a.gains.head_dim * 2;
  EXPECT_THROW(omn::audit::checkRegression(wide, a, kNone, "b.json"), omn::UsageError);
  // the same shape is compared as before
  EXPECT_NO_THROW(omn::audit::checkRegression(a, a, kNone, "b.json"));
  EXPECT_NO_THROW(omn::audit::checkRegression(a, reference(), kNone, "ref.json"));
}

// The reference and the tolerance as structs: the published reference reads back member for member.
TEST(Regression, TheReferenceAndAToleranceReadBackAsTheirStructs) {
  const json ref = referenceJson();
  const auto r = omn::documents::ReferenceProfileDocument::fromJson(ref, "ref");
  EXPECT_EQ(r.toJson(), ref);
  ASSERT_EQ(r.figures.size(), 17u);
  EXPECT_EQ(r.figures[0].pointer, "/statistics/count");
  EXPECT_EQ(r.figures[0].decimals, 0);
  EXPECT_EQ(r.options->threshold, 1.43);
  json unlabelled = ref;
  unlabelled["figures"][0].erase("label");
  unlabelled.erase("description");
  EXPECT_EQ(omn::documents::ReferenceProfileDocument::fromJson(unlabelled, "ref").toJson(), unlabelled);
  const json t = {{"schema", "omn-audit/tolerance@1"}, {"default", {{"rel", 1e-9}}},
                  {"rules", {{{"pointer", "/layers/*/q/mean"}, {"abs", 0.01}}, {{"pointer", "/x"}, {"abs", 0}, {"rel", 0.5}}}}};
  const auto tol = tolerance(t);
  EXPECT_EQ(tol->toJson(), t);
  EXPECT_FALSE(tol->fallback->abs.has_value());
  EXPECT_EQ((*tol->rules)[1].rel, 0.5);
  const json bare = {{"schema", "omn-audit/tolerance@1"}};
  EXPECT_EQ(tolerance(bare)->toJson(), bare);
}

// A statistic the baseline has none of (null: no finite gain there) is checked, not skipped: the
// profile must have none there either. A baseline edited to null a statistic drifts (it was passed
// over: 304 checked of 305), and a null in both matches.
TEST(Regression, ANullBaselineStatisticMatchesOnlyANull) {
  ProfileDocument now = profileOf("omn1-mini.pt");
  json edited = now.toJson();
  edited["statistics"]["std"] = nullptr;
  edited["layers"][1]["k"]["max"] = nullptr;
  const auto rep = omn::audit::checkRegression(now, omn::audit::readBaseline(edited, "baseline b"), kNone, "b");
  EXPECT_EQ(rep.checks.size(), omn::audit::comparableStatistics(now).size());
  ASSERT_EQ(rep.drifted(), 2u);
  const auto drifts = rep.drifts();
  EXPECT_EQ(drifts[0].pointer, "/statistics/std");
  EXPECT_FALSE(drifts[0].baseline.has_value());
  EXPECT_EQ(drifts[0].actual, now.statistics.std);
  EXPECT_EQ(drifts[1].pointer, "/layers/1/k/max");
  EXPECT_EQ(json(drifts[0])["baseline"], nullptr);  // as the document writes it
  // a profile with none there either: the check holds
  now.statistics.std.reset();
  now.layers[1].k.max.reset();
  EXPECT_EQ(omn::audit::checkRegression(now, omn::audit::readBaseline(edited, "baseline b"), kNone, "b").drifted(), 0u);
  // and a baseline with a number where the profile has none drifts, as before
  const auto missing = omn::audit::checkRegression(now, omn::audit::readBaseline(profileOf("omn1-mini.pt").toJson(), "baseline b"), kNone, "b");
  EXPECT_EQ(missing.drifted(), 2u);
}
