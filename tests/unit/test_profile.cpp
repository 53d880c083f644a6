// Profile statistics on small hand-built gain sets whose answers are known by hand.
#include <gtest/gtest.h>

#include <cmath>

#include "omn/audit/profile.h"
#include "omn/documents/profile_document.h"
#include "omn/errors.h"

using omn::audit::GainSet;
using omn::audit::GainVector;
using omn::audit::Role;

namespace {

GainSet makeSet(const std::vector<std::vector<double>>& vectors, std::int64_t head_dim) {
  GainSet g;
  g.preset = "test";
  g.head_dim = head_dim;
  g.n_layers = static_cast<int>(vectors.size() / 2);
  for (std::size_t i = 0; i < vectors.size(); ++i) {
    GainVector v;
    v.layer = static_cast<int>(i / 2);
    v.role = i % 2 ? Role::K : Role::Q;
    v.tensor = "t" + std::to_string(i);
    v.values = vectors[i];
    g.vectors.push_back(v);
  }
  return g;
}

}  // namespace

TEST(Profile, MomentsCountsAndNegatives) {
  const auto g = makeSet({{1, 2, 3, 4}, {-1, 0, 1, 40}}, 4);
  const omn::documents::ProfileDocument p = omn::audit::computeProfile(g, {});
  const auto& s = p.statistics;
  EXPECT_EQ(s.count, 8);
  EXPECT_EQ(s.count_non_finite, 0);
  EXPECT_DOUBLE_EQ(*s.mean, 50.0 / 8);
  double ss = 0;
  for (double x : {1, 2, 3, 4, -1, 0, 1, 40}) ss += (x - 6.25) * (x - 6.25);
  EXPECT_DOUBLE_EQ(*s.std, std::sqrt(ss / 8));  // population, not sample
  EXPECT_EQ(s.min, -1.0);
  EXPECT_EQ(s.max, 40.0);
  EXPECT_EQ(s.count_above_threshold, 4);  // 2, 3, 4, 40 > 1.43
  EXPECT_EQ(s.share_above_threshold, 4.0 / 8);
  EXPECT_EQ(s.count_negative, 1);
  EXPECT_EQ(s.counts.at("[1,2]").count, 3);     // 1, 2, 1 (closed interval): the audit's default ranges
  EXPECT_EQ(s.counts.at("(32,inf)").count, 1);
  ASSERT_EQ(p.negatives.size(), 1u);
  EXPECT_EQ(p.negatives[0].role, "k");
  EXPECT_EQ(p.negatives[0].layer, 0);
  EXPECT_EQ(p.negatives[0].index, 0);
  EXPECT_EQ(p.negatives[0].value, -1.0);
}

// computeProfile's document is the typed one the command writes: the gain-derived members filled,
// the rest (checkpoint, preset, provenance) left to profileCheckpoint, and its JSON form the one
// toJson writes, read back the same.
TEST(Profile, ComputeProfileReturnsTheTypedDocument) {
  auto g = makeSet({{1, 2, 3, 4}, {0.5, 1.5, 2.5, 3.5}, {2, 2, 2, 2}, {1, 1, 1, 1}}, 4);
  g.parametrisation = omn::model::GainParametrisation::OnePlus;
  const omn::documents::ProfileDocument p = omn::audit::computeProfile(g, {});
  EXPECT_EQ(p.gains.preset, "test");
  EXPECT_EQ(p.gains.parametrisation, "one_plus");
  EXPECT_EQ(p.gains.effective, "1 + stored weight");
  EXPECT_EQ(p.gains.layout, "head");
  EXPECT_EQ(p.gains.n_layers, 2);
  EXPECT_EQ(p.gains.vectors, 4);
  EXPECT_EQ(p.gains.head_dim, 4);
  EXPECT_EQ(p.options.threshold, 1.43);
  EXPECT_EQ(p.options.top_k, 10);
  EXPECT_EQ(p.options.count_ranges, (std::vector<std::string>{"[1,2]", "(32,inf)"}));
  EXPECT_EQ(p.statistics.count, 16);
  EXPECT_DOUBLE_EQ(*p.statistics.mean, 30.0 / 16);
  ASSERT_EQ(p.layers.size(), 2u);
  EXPECT_EQ(p.layers[1].layer, 1);
  EXPECT_EQ(p.layers[0].q.tensor, "t0");
  EXPECT_EQ(p.layers[0].k.tensor, "t1");
  EXPECT_EQ(p.layers[0].q.dtype, "F32");
  EXPECT_DOUBLE_EQ(*p.layers[0].mean, 18.0 / 8);
  EXPECT_DOUBLE_EQ(*p.layers[0].q_minus_k, 0.5);
  EXPECT_EQ(p.layers[1].q.rope_pair_asymmetry.pairs, 2);
  ASSERT_TRUE(p.distribution.has_value());
  std::int64_t binned = 0;
  for (const auto& b : p.distribution->bins) binned += b.count;
  EXPECT_EQ(binned, 16);
  EXPECT_EQ(p.distribution->bins.front().lo, 0.5);
  EXPECT_EQ(p.distribution->bins.back().hi, 4.0);
  ASSERT_EQ(p.histogram.size(), 8u);
  EXPECT_FALSE(p.histogram.front().lo.has_value());  // unbounded below
  EXPECT_EQ(p.histogram.front().hi, 0.0);
  EXPECT_EQ(p.histogram[2].label, "[1,2]");
  EXPECT_EQ(p.histogram[2].count, 11);  // 1, 2 of L0 Q; 1.5 of L0 K; all eight of layer 1
  EXPECT_EQ(p.top.size(), 10u);
  EXPECT_EQ(p.top[0].value, 4.0);
  ASSERT_TRUE(p.non_finite.has_value());
  EXPECT_TRUE(p.non_finite->empty());
  EXPECT_FALSE(p.regression.has_value());
  EXPECT_FALSE(p.parameters.has_value());
  EXPECT_EQ(p.steepest_change.all.from, 0);
  EXPECT_EQ(p.steepest_change.all.to, 1);
  // the JSON form holds what the document says, under the schema's names
  const nlohmann::json j = p.toJson();
  EXPECT_EQ(j["statistics"]["count"], 16);
  EXPECT_EQ(j["gains"]["parametrisation"], "one_plus");
  EXPECT_EQ(j["histogram"][0]["lo"], nullptr);
  EXPECT_EQ(j["layers"][0]["q"]["count_non_finite"], 0);
  EXPECT_EQ(omn::documents::ProfileDocument::fromJson(j, "p").toJson(), j);
}

TEST(Profile, HistogramEdgesFollowThePivotRule) {
  // edges at and below 1 belong to the bin on their right; above 1 to the bin on their left
  const auto g = makeSet({{-0.5, 0, 0.999, 1}, {2, 2.001, 32, 32.5}}, 4);
  const auto p = omn::audit::computeProfile(g, {});
  std::vector<std::string> labels;
  std::vector<std::int64_t> counts;
  for (const auto& b : p.histogram) {
    labels.push_back(b.label);
    counts.push_back(b.count);
  }
  EXPECT_EQ(labels, (std::vector<std::string>{"<0", "[0,1)", "[1,2]", "(2,4]", "(4,8]", "(8,16]", "(16,32]", ">32"}));
  EXPECT_EQ(counts, (std::vector<std::int64_t>{1, 2, 2, 1, 0, 0, 1, 1}));
}

TEST(Profile, CustomEdgesAndValidation) {
  omn::audit::ProfileOptions o;
  o.hist_edges = {2, 4};
  EXPECT_EQ(omn::audit::histogramLabels(o), (std::vector<std::string>{"<=2", "(2,4]", ">4"}));
  o.hist_edges = {0.25, 0.5};
  EXPECT_EQ(omn::audit::histogramLabels(o), (std::vector<std::string>{"<0.25", "[0.25,0.5)", ">=0.5"}));
  o.hist_edges = {1, 1};
  EXPECT_THROW(omn::audit::validate(o), omn::UsageError);
  o.hist_edges = {};
  EXPECT_THROW(omn::audit::validate(o), omn::UsageError);
}

TEST(Profile, PerLayerSteepestAndQMinusK) {
  const auto g = makeSet({{25, 25, 25, 25}, {24, 24, 24, 24}, {3, 3, 3, 3}, {2, 2, 2, 2}, {2, 2, 2, 2}, {1, 1, 1, 1}}, 4);
  const auto p = omn::audit::computeProfile(g, {});
  EXPECT_EQ(p.layers[0].q_minus_k, 1.0);
  EXPECT_EQ(p.steepest_change.all.from, 0);
  EXPECT_EQ(p.steepest_change.all.to, 1);
  EXPECT_DOUBLE_EQ(*p.steepest_change.all.delta, 2.5 - 24.5);
}

TEST(Profile, RopePairAsymmetryUsesTheRotationPairing) {
  // head_dim 4: rotate-half pairs (0,2),(1,3); interleaved pairs (0,1),(2,3)
  auto g = makeSet({{1, 2, 4, 8}, {1, 1, 1, 1}}, 4);
  auto p = omn::audit::computeProfile(g, {});
  EXPECT_DOUBLE_EQ(p.layers[0].q.rope_pair_asymmetry.mean_abs_diff, (3.0 + 6.0) / 2);
  EXPECT_DOUBLE_EQ(p.layers[0].q.rope_pair_asymmetry.max_abs_diff, 6.0);
  EXPECT_EQ(p.layers[0].k.rope_pair_asymmetry.max_abs_diff, 0.0);
  g.rope_style = "interleaved";
  p = omn::audit::computeProfile(g, {});
  EXPECT_DOUBLE_EQ(p.layers[0].q.rope_pair_asymmetry.mean_abs_diff, (1.0 + 4.0) / 2);
  // projection layout: pairs within each head_dim chunk
  g = makeSet({{1, 2, 4, 8, 0, 0, 0, 0}, {1, 1, 1, 1, 1, 1, 1, 1}}, 4);
  p = omn::audit::computeProfile(g, {});
  EXPECT_EQ(p.layers[0].q.rope_pair_asymmetry.pairs, 4);
}

TEST(Profile, TopKOrdersByValue) {
  const auto g = makeSet({{1, 9, 3, 7}, {5, 2, 8, 4}}, 4);
  omn::audit::ProfileOptions o;
  o.top_k = 3;
  const auto p = omn::audit::computeProfile(g, o);
  ASSERT_EQ(p.top.size(), 3u);
  EXPECT_EQ(p.top[0].value, 9.0);
  EXPECT_EQ(p.top[1].value, 8.0);
  EXPECT_EQ(p.top[1].role, "k");
  EXPECT_EQ(p.top[1].index, 2);
  EXPECT_EQ(p.top[2].value, 7.0);
}

TEST(Profile, NonFiniteGainsAreCountedApartNeverBinned) {
  // a NaN used to land in the ">32" bin while min/max skipped it; +inf counted as "> 32"
  const double nan = std::nan(""), inf = INFINITY;
  const auto g = makeSet({{1, nan, 3, 4}, {-inf, 2, inf, 40}}, 4);
  const auto p = omn::audit::computeProfile(g, {});
  const auto& s = p.statistics;
  EXPECT_EQ(s.count, 8);             // every gain of the model
  EXPECT_EQ(s.count_non_finite, 3);  // NaN, -inf, +inf
  EXPECT_DOUBLE_EQ(*s.mean, 50.0 / 5);  // of the five finite ones
  EXPECT_EQ(s.min, 1.0);
  EXPECT_EQ(s.max, 40.0);
  EXPECT_EQ(s.counts.at("(32,inf)").count, 1);  // 40 only: +inf is in no range
  EXPECT_EQ(s.count_negative, 0);    // -inf is not a negative gain, it is not a number of the profile
  EXPECT_DOUBLE_EQ(*s.share_above_threshold, 4.0 / 5);
  std::int64_t binned = 0;
  for (const auto& b : p.histogram) binned += b.count;
  EXPECT_EQ(binned, 5);
  EXPECT_EQ(p.histogram.back().count, 1);  // ">32": 40, not the NaN nor +inf
  ASSERT_TRUE(p.non_finite.has_value());
  ASSERT_EQ(p.non_finite->size(), 3u);
  const auto& first = (*p.non_finite)[0];
  EXPECT_EQ(first.layer, 0);
  EXPECT_EQ(first.role, "q");
  EXPECT_EQ(first.index, 1);
  EXPECT_EQ(first.value, "nan");
  EXPECT_EQ((*p.non_finite)[1].value, "-inf");
  EXPECT_EQ((*p.non_finite)[2].value, "inf");
  for (const auto& t : p.top) EXPECT_TRUE(std::isfinite(t.value));
  EXPECT_EQ(p.layers[0].k.count_non_finite, 2);
  EXPECT_EQ(p.layers[0].k.max, 40.0);
  // rotate_half pairs (0,2) and (1,3): (-inf, inf) is left out, (2, 40) counts
  EXPECT_EQ(p.layers[0].k.rope_pair_asymmetry.pairs, 1);
  EXPECT_EQ(p.layers[0].k.rope_pair_asymmetry.max_abs_diff, 38.0);
}

TEST(Profile, AllNonFiniteLayerHasNullStatistics) {
  const double nan = std::nan("");
  const auto g = makeSet({{1, 2}, {1, 2}, {nan, nan}, {nan, nan}}, 2);
  const auto p = omn::audit::computeProfile(g, {});
  EXPECT_FALSE(p.layers[1].q.mean.has_value());
  EXPECT_FALSE(p.layers[1].mean.has_value());
  EXPECT_FALSE(p.layers[1].q_minus_k.has_value());
  EXPECT_FALSE(p.steepest_change.all.from.has_value());  // no finite pair of layer means
  EXPECT_FALSE(p.steepest_change.all.delta.has_value());
  EXPECT_EQ(p.statistics.count_non_finite, 4);
  EXPECT_TRUE(p.toJson()["layers"][1]["q"]["mean"].is_null());  // null in the document, not absent
}

// count_in_1_2 and count_above_32 were OMN-1's figures baked into the names; the ranges are options
// now, each recorded with its ends so the number can be read without the command line.
TEST(Profile, CountRangesAreOptionsRecordedWithTheirEnds) {
  using omn::audit::parseCountRange;
  const auto g = makeSet({{-1, 0, 1, 2}, {2.5, 3, 32, 40}}, 4);
  omn::audit::ProfileOptions o;
  o.count_ranges = {parseCountRange("[1,2)", "f"), parseCountRange("(2, 32]", "f"), parseCountRange("<0", "f"),
                    parseCountRange(">=32", "f"), parseCountRange("[0,0]", "f")};
  const auto p = omn::audit::computeProfile(g, o);
  const auto& c = p.statistics.counts;
  EXPECT_EQ(c.at("[1,2)").count, 1);  // 1; 2 is outside the open end
  EXPECT_EQ(c.at("(2,32]").count, 3);  // 2.5, 3, 32
  EXPECT_EQ(c.at("(-inf,0)").count, 1);
  EXPECT_EQ(c.at("[32,inf)").count, 2);
  EXPECT_EQ(c.at("[0,0]").count, 1);
  EXPECT_FALSE(c.at("(-inf,0)").lo.has_value());  // unbounded ends are null, not a JSON-less infinity
  const nlohmann::json j = p.toJson();
  EXPECT_EQ(j["statistics"]["counts"]["(-inf,0)"]["lo"], nullptr);
  EXPECT_EQ(j["statistics"]["counts"]["(2,32]"],
            nlohmann::json({{"lo", 2.0}, {"hi", 32.0}, {"lo_closed", false}, {"hi_closed", true}, {"count", 3}}));
  EXPECT_EQ(j["options"]["count_ranges"], nlohmann::json({"[1,2)", "(2,32]", "(-inf,0)", "[32,inf)", "[0,0]"}));  // as given
  EXPECT_FALSE(j["statistics"].contains("count_in_1_2"));
}

TEST(Profile, CountRangeTextIsCheckedAndNamesTheFlag) {
  using omn::audit::parseCountRange;
  EXPECT_EQ(parseCountRange("(32,inf)", "f").label(), "(32,inf)");
  EXPECT_EQ(parseCountRange("> 32", "f").label(), "(32,inf)");
  EXPECT_EQ(parseCountRange("<=1e-3", "f").label(), "(-inf,0.001]");
  EXPECT_EQ(parseCountRange("[0.1,0.30000000000000004]", "f").label(), "[0.1,0.30000000000000004]");  // round-trips
  EXPECT_EQ(parseCountRange("[-0,1]", "f").label(), "[0,1]");  // one range, one key
  for (const char* bad : {"", "[1,2", "1,2]", "[1;2]", "[1,2,3]", "[a,2]", "[nan,2]", ">nan", ">=", "<", "[2,1]", "(1,1]",
                          "[-inf,0)", "(0,inf]", "(inf,inf)", "[1e400,inf)", "(1e-400,1)"}) {
    try {
      parseCountRange(bad, "--count-range");
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const omn::UsageError& e) {
      EXPECT_EQ(std::string(e.what()).rfind("--count-range", 0), 0u) << e.what();
    }
  }
  omn::audit::ProfileOptions twice;
  twice.count_ranges = {parseCountRange("[1,2]", "f"), parseCountRange("[1, 2]", "f")};
  EXPECT_THROW(omn::audit::validate(twice), omn::UsageError);
  omn::audit::ProfileOptions many;
  many.count_ranges.assign(65, {});
  for (int i = 0; i < 65; ++i) many.count_ranges[i] = {double(i), double(i + 1), true, false};
  EXPECT_THROW(omn::audit::validate(many), omn::UsageError);  // each is a pass and a key: bounded
}
