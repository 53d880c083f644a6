// The regression check: published figures at their precision, earlier profiles, tolerance rules.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "omn/audit/profile_run.h"
#include "omn/audit/regression.h"
#include "omn/errors.h"
#include "omn/documents/document.h"
#include "omn/io/json_document.h"

using nlohmann::json;

namespace {

json profileOf(const std::string& file) {
  omn::audit::ProfileRequest r;
  r.checkpoint = std::string(OMN_FIXTURES) + "/" + file;
  return omn::audit::profileCheckpoint(r);
}

json reference() {
  std::ifstream in(std::string(OMN_SOURCE_DIR) + "/configs/omn-1-reference-profile.json");
  return json::parse(in);
}

}  // namespace

TEST(Regression, CalibratedMiniMatchesEveryPublishedFigure) {
  const auto rep = omn::audit::checkRegression(profileOf("omn1-mini.pt"), reference(), nullptr, "ref", "");
  EXPECT_EQ(rep.baseline_kind, "reference");
  EXPECT_EQ(rep.checks.size(), 17u);
  for (const auto& c : rep.checks) EXPECT_TRUE(c.ok()) << c.label << ": " << c.actual << " vs " << c.baseline;
}

TEST(Regression, PerturbedLayerDrifts) {
  const auto rep = omn::audit::checkRegression(profileOf("omn1-mini-perturbed.pt"), reference(), nullptr, "ref", "");
  EXPECT_GT(rep.drifted(), 0u);
  bool mean_drifted = false;
  for (const auto& c : rep.checks) mean_drifted |= c.pointer == "/statistics/mean" && !c.ok();
  EXPECT_TRUE(mean_drifted);
}

TEST(Regression, ProfileBaselineIsExactAndToleranceRulesApply) {
  const json a = profileOf("omn1-mini.pt");
  EXPECT_EQ(omn::audit::checkRegression(a, a, nullptr, "a", "").drifted(), 0u);
  json b = a;
  b["layers"][3]["q"]["mean"] = b["layers"][3]["q"]["mean"].get<double>() + 0.004;
  EXPECT_EQ(omn::audit::checkRegression(b, a, nullptr, "a", "").drifted(), 1u);
  const json tol = {{"schema", "omn-audit/tolerance@1"},
                    {"default", {{"abs", 0.0}}},
                    {"rules", {{{"pointer", "/layers/*/q/mean"}, {"abs", 0.005}}}}};
  EXPECT_EQ(omn::audit::checkRegression(b, a, tol, "a", "t").drifted(), 0u);
  const json rel = {{"schema", "omn-audit/tolerance@1"}, {"default", {{"rel", 0.01}}}};
  EXPECT_EQ(omn::audit::checkRegression(b, a, rel, "a", "t").drifted(), 0u);
}

// docs/profile.md's example: a tolerance file widens a published figure's rounding, never narrows it
// (it once replaced it: an abs 0 default made every rounded figure drift on the very checkpoint).
TEST(Regression, AToleranceFileAgainstAReferenceKeepsThePublishedRounding) {
  const json tol = {{"schema", "omn-audit/tolerance@1"},
                    {"default", {{"abs", 0.0}, {"rel", 1e-9}}},
                    {"rules", {{{"pointer", "/layers/*/q/mean"}, {"abs", 0.01}}, {{"pointer", "/statistics/counts/*/count"}, {"abs", 0}}}}};
  EXPECT_EQ(omn::audit::checkRegression(profileOf("omn1-mini.pt"), reference(), tol, "ref", "t").drifted(), 0u);
  EXPECT_GT(omn::audit::checkRegression(profileOf("omn1-mini-perturbed.pt"), reference(), tol, "ref", "t").drifted(), 0u);
  // and it still widens: layer 0's Q mean 25.032 published, a rule of abs 1 accepts 25.5
  json moved = profileOf("omn1-mini.pt");
  moved["layers"][0]["q"]["mean"] = 25.5;
  EXPECT_EQ(omn::audit::checkRegression(moved, reference(), tol, "ref", "t").drifted(), 1u);
  const json wide = {{"schema", "omn-audit/tolerance@1"}, {"rules", {{{"pointer", "/layers/*/q/mean"}, {"abs", 1.0}}}}};
  EXPECT_EQ(omn::audit::checkRegression(moved, reference(), wide, "ref", "t").drifted(), 0u);
}

TEST(Regression, MalformedInputsNameThePlace) {
  const json a = profileOf("omn1-mini.pt");
  try {
    omn::audit::checkRegression(a, json{{"schema", "x"}}, nullptr, "b.json", "");
    FAIL();
  } catch (const omn::FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("b.json: /schema"), std::string::npos) << e.what();
  }
  try {
    omn::audit::checkRegression(a, a, json{{"schema", "omn-audit/tolerance@1"}, {"rules", {{{"pointer", "/x"}, {"abs", "big"}}}}},
                                "a", "t.json");
    FAIL();
  } catch (const omn::FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("t.json: /rules/0/abs"), std::string::npos) << e.what();
  }
  json other = a;
  other["options"]["threshold"] = 2.0;
  EXPECT_THROW(omn::audit::checkRegression(a, other, nullptr, "a", ""), omn::UsageError);
}

TEST(Regression, MissingStatisticIsDrift) {
  const json a = profileOf("omn1-mini.pt");
  json b = a;
  b["layers"].erase(27);
  const auto rep = omn::audit::checkRegression(b, a, nullptr, "a", "");
  EXPECT_EQ(rep.drifted(), 10u);  // layer 27: Q and K, five moments each
}

TEST(Regression, AGateThatChecksNothingFails) {
  const json a = profileOf("omn1-mini.pt");
  // a bare schema, a profile without its layers: refused by the schema, naming the pointer
  for (const json& b : {json{{"schema", "omn-audit/profile@1"}}, json{{"schema", "omn-audit/reference-profile@1"}, {"figures", json::array()}}}) {
    try {
      omn::audit::checkRegression(a, b, nullptr, "b.json", "");
      FAIL() << b.dump();
    } catch (const omn::FormatError& e) {
      EXPECT_NE(std::string(e.what()).find("b.json: /"), std::string::npos) << e.what();
    }
  }
  json no_layers = a;
  no_layers["layers"] = json::array();
  EXPECT_THROW(omn::audit::checkRegression(a, no_layers, nullptr, "b.json", ""), omn::FormatError);
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
  json p = profileOf("omn1-mini.pt");
  p["statistics"]["count_non_finite"] = 3;
  const auto rep = omn::audit::checkRegression(p, reference(), nullptr, "ref", "");
  EXPECT_EQ(rep.drifted(), 1u);
  EXPECT_EQ(rep.checks.back().pointer, "/statistics/count_non_finite");
  // a profile baseline counts them like any statistic; an old one (without the field) too
  json base = profileOf("omn1-mini.pt");
  EXPECT_EQ(omn::audit::checkRegression(p, base, nullptr, "b", "").drifted(), 1u);
  base["statistics"].erase("count_non_finite");
  EXPECT_EQ(omn::audit::checkRegression(p, base, nullptr, "b", "").drifted(), 1u);
  EXPECT_EQ(omn::audit::checkRegression(base, base, nullptr, "b", "").drifted(), 0u);
}

// A baseline that counts a range this profile does not is a usage error naming the flag (checked
// before the checkpoint is hashed); extra ranges in the profile are fine.
TEST(Regression, CountRangesOfTheBaselineMustBeCounted) {
  const json a = profileOf("omn1-mini.pt");
  omn::audit::ProfileOptions only12;
  only12.count_ranges = {omn::audit::parseCountRange("[1,2]", "f")};
  for (const json& baseline : {a, reference()}) {
    try {
      omn::audit::checkComparable(baseline, omn::audit::optionsJson(only12), "b.json");
      FAIL();
    } catch (const omn::UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("b.json: /statistics/counts/(32,inf)/count"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("--count-range '(32,inf)'"), std::string::npos) << e.what();
    }
  }
  omn::audit::ProfileOptions more;
  more.count_ranges.push_back(omn::audit::parseCountRange("<0", "f"));
  EXPECT_NO_THROW(omn::audit::checkComparable(a, omn::audit::optionsJson(more), "b.json"));
  EXPECT_NO_THROW(omn::audit::checkComparable(reference(), omn::audit::optionsJson(more), "b.json"));
  omn::audit::ProfileOptions thr;
  thr.threshold = 2;
  EXPECT_THROW(omn::audit::checkComparable(reference(), omn::audit::optionsJson(thr), "b.json"), omn::UsageError);
  // the gate finds each count at its pointer
  bool found = false;
  for (const auto& c : omn::audit::checkRegression(a, a, nullptr, "a", "").checks)
    found |= c.pointer == "/statistics/counts/(32,inf)/count" && c.ok() && c.baseline == 59;
  EXPECT_TRUE(found);
}

// A profile written before the ranges were options (count_in_1_2, count_above_32, no
// options/count_ranges) still gates: read as the ranges [1,2] and (32,inf).
TEST(Regression, AProfileFromBeforeCountRangesStillGates) {
  const json now = profileOf("omn1-mini.pt");
  json old = now;
  old["statistics"]["count_in_1_2"] = now["statistics"]["counts"]["[1,2]"]["count"];
  old["statistics"]["count_above_32"] = now["statistics"]["counts"]["(32,inf)"]["count"];
  old["statistics"].erase("counts");
  old["options"].erase("count_ranges");
  const std::string path = testing::TempDir() + "old-profile.json";
  std::ofstream(path) << old.dump();
  const json read = omn::documents::readDocument(path, "baseline", {omn::documents::DocumentKind::profile}).json;
  std::remove(path.c_str());
  EXPECT_EQ(read["statistics"]["counts"], now["statistics"]["counts"]);
  EXPECT_EQ(read["options"]["count_ranges"], now["options"]["count_ranges"]);
  EXPECT_FALSE(read["statistics"].contains("count_in_1_2"));
  const auto rep = omn::audit::checkRegression(now, read, nullptr, "old", "");
  EXPECT_EQ(rep.drifted(), 0u);
  EXPECT_EQ(rep.checks.size(), omn::audit::comparableStatistics(now).size());
}

// Review of the count ranges: an older reference, older tolerance rules, baseline keys no run writes,
// documents that hold neither or both layouts.
TEST(Regression, OlderReferencesAndToleranceRulesKeepTheirMeaning) {
  const json now = profileOf("omn1-mini.pt");
  json ref = reference();
  for (auto& f : ref["figures"]) {  // the reference as shipped before 2026-12-01
    if (f["pointer"] == "/statistics/counts/[1,2]/count") f["pointer"] = "/statistics/count_in_1_2";
    if (f["pointer"] == "/statistics/counts/(32,inf)/count") f["pointer"] = "/statistics/count_above_32";
  }
  omn::documents::acceptDocument(ref, "old ref", {omn::documents::DocumentKind::reference_profile});
  const auto rep = omn::audit::checkRegression(now, ref, nullptr, "old ref", "");
  EXPECT_EQ(rep.checks.size(), 17u);
  EXPECT_EQ(rep.drifted(), 0u);  // it said "missing ... DRIFT" twice

  // a rule for the old fields still holds the counts to it: abs 0 on count_*, a loose default
  const json old_rule = {{"schema", "omn-audit/tolerance@1"}, {"default", {{"rel", 0.2}}},
                         {"rules", {{{"pointer", "/statistics/count_*"}, {"abs", 0}}}}};
  json moved = now;
  moved["statistics"]["counts"]["[1,2]"]["count"] = 5234;
  EXPECT_EQ(omn::audit::checkRegression(moved, now, old_rule, "a", "t").drifted(), 1u);
  const json loose = {{"schema", "omn-audit/tolerance@1"}, {"default", {{"rel", 0.2}}}};
  EXPECT_EQ(omn::audit::checkRegression(moved, now, loose, "a", "t").drifted(), 0u);

  const json rules = {{"schema", "omn-audit/tolerance@1"},
                      {"rules", {{{"pointer", "/statistics/count_above_32"}, {"abs", 0}}, {{"pointer", "/statistics/cout_*"}, {"abs", 0}}}}};
  EXPECT_EQ(omn::audit::unmatchedRules(now, rules, "t"), std::vector<std::string>({"/rules/1 \"/statistics/cout_*\""}));
  EXPECT_TRUE(omn::audit::unmatchedRules(now, nullptr, "").empty());
}

TEST(Regression, ABaselineRangeMustBeWrittenAsAProfileWritesIt) {
  json ref = reference();
  ref["figures"][8]["pointer"] = "/statistics/counts/>32/count";
  try {
    omn::audit::checkComparable(ref, omn::audit::optionsJson({}), "r.json");
    FAIL();
  } catch (const omn::FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("r.json: /statistics/counts/>32/count: the count range '>32' is written '(32,inf)'"),
              std::string::npos) << e.what();
  }
  ref["figures"][8]["pointer"] = "/statistics/counts/(inf,inf)/count";
  EXPECT_THROW(omn::audit::checkComparable(ref, omn::audit::optionsJson({}), "r.json"), omn::FormatError);
}

TEST(Regression, AProfileHoldsCountsOrBothOldFieldsNeverNeitherOrAMix) {
  const json now = profileOf("omn1-mini.pt");
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
  const json a = profileOf("omn1-mini.pt");  // 28 layers
  json shallow = a;
  shallow["gains"]["n_layers"] = 4;
  shallow["layers"] = json::array({a["layers"][0], a["layers"][1], a["layers"][2], a["layers"][3]});
  try {
    omn::audit::checkRegression(shallow, a, nullptr, "b.json", "");
    FAIL();
  } catch (const omn::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("b.json: another architecture: the baseline has 28 layers"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("(this checkpoint: 4 layers"), std::string::npos) << e.what();
  }
  try {
    omn::audit::checkRegression(shallow, reference(), nullptr, "ref.json", "");
    FAIL();
  } catch (const omn::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("ref.json: another architecture: its figure /layers/27/"), std::string::npos) << e.what();
  }
  json wide = a;
  wide["gains"]["head_dim"] = a["gains"]["head_dim"].get<int>() * 2;
  EXPECT_THROW(omn::audit::checkRegression(wide, a, nullptr, "b.json", ""), omn::UsageError);
  // the same shape is compared as before; a profile that does not record its shape too
  EXPECT_NO_THROW(omn::audit::checkRegression(a, a, nullptr, "b.json", ""));
  EXPECT_NO_THROW(omn::audit::checkRegression(a, reference(), nullptr, "ref.json", ""));
  json unrecorded = shallow;
  unrecorded["gains"].erase("n_layers");
  EXPECT_NO_THROW(omn::audit::checkRegression(unrecorded, a, nullptr, "b.json", ""));
}
