// The new manifest forms (coordinate subsets, composite conditions) and `intervene --plan`'s
// equivalences: conditions equal to the control or to each other by construction.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "omn/errors.h"
#include "omn/intervene/manifest.h"
#include "omn/intervene/plan.h"

using nlohmann::json;
using omn::intervene::parseManifest;

namespace {

json withConditions(const char* file, const json& conditions) {
  std::ifstream in(std::string(OMN_SOURCE_DIR) + "/configs/manifests/" + file);
  json j = json::parse(in);
  if (!conditions.is_null()) j["conditions"] = conditions;
  j["tokens"]["sha256"] = std::string(64, '0');
  return j;
}

omn::intervene::Manifest parse(const json& conditions) {
  return parseManifest(withConditions("tiny-demo.json", conditions), "m.json", "", true);
}

std::string refusal(const json& conditions) {
  try {
    parse(conditions);
  } catch (const omn::UsageError& e) {
    return e.what();
  }
  return "";
}

// "c3=c1" per equivalence, "c4=control"
std::string pairs(const omn::intervene::Manifest& m, int n_layers) {
  std::string s;
  for (const auto& e : omn::intervene::equivalences(m.conditions, n_layers)) s += e.id + "=" + e.same + " ";
  return s;
}

}  // namespace

TEST(InterveneCoordinates, ParseDescribeAndLabel) {
  const auto m = parse(json::parse(R"([{"op": "constant", "values": [1], "coordinates": "negative"},
                                       {"op": "vector_mean", "coordinates": {"top_k": 3}, "targets": "q"},
                                       {"op": "permute", "seeds": [5], "coordinates": [6, 0, 2]}])"));
  ASSERT_EQ(m.conditions.size(), 3u);
  EXPECT_EQ(m.conditions[0].label, "constant 1 qk all coords negative");
  EXPECT_EQ(m.conditions[0].describe()["coordinates"], "negative");
  EXPECT_EQ(m.conditions[1].label, "vector_mean q all coords top-3 |g|");
  EXPECT_EQ(m.conditions[1].describe()["coordinates"], json({{"top_k", 3}}));
  EXPECT_EQ(m.conditions[2].describe()["coordinates"], json::parse("[0, 2, 6]"));  // ascending
  EXPECT_EQ(m.conditions[2].describe()["seed"], 5);
  EXPECT_FALSE(parse(json::parse(R"([{"op": "scale", "values": [2]}])")).conditions[0].describe().contains("coordinates"));
  EXPECT_NE(refusal(json::parse(R"([{"op": "constant", "values": [1], "coordinates": [1, 1]}])")).find("/conditions/0/coordinates: a coordinate is listed twice"),
            std::string::npos);
  EXPECT_NE(refusal(json::parse(R"([{"op": "constant", "values": [1], "coordinates": {"top_k": 0}}])")).find("/conditions/0/coordinates/top_k"),
            std::string::npos);
  EXPECT_NE(refusal(json::parse(R"([{"op": "constant", "values": [1], "coordinates": "positive"}])")).find("/conditions/0/coordinates: expected"),
            std::string::npos);
  // compensate is the logit-preserving control only on whole vectors
  EXPECT_NE(refusal(json::parse(R"([{"op": "compensate", "values": [2], "coordinates": "negative"}])"))
                .find("/conditions/0/coordinates: compensate scales whole vectors"),
            std::string::npos);
}

TEST(InterveneComposite, StepsInOrderOneValueEach) {
  const auto m = parse(json::parse(R"([{"steps": [{"op": "sign_fix", "modes": "abs"}, {"op": "rescale_pattern", "values": [1], "targets": "q"}]},
                                       {"name": "named", "steps": [{"op": "swap_qk", "layers": "0-1"}]}])"));
  ASSERT_EQ(m.conditions.size(), 2u);
  EXPECT_EQ(m.conditions[0].label, "sign_fix abs qk all; rescale_pattern 1 q all");
  ASSERT_EQ(m.conditions[0].steps.size(), 2u);
  EXPECT_EQ(m.conditions[0].steps[1].pointer, "/conditions/0/steps/1");
  const json d = m.conditions[0].describe();
  EXPECT_EQ(d["op"], "composite");
  EXPECT_EQ(d["steps"][1]["op"], "rescale_pattern");
  EXPECT_EQ(m.conditions[1].label, "named");
  EXPECT_EQ(m.conditions[1].describe()["op"], "swap_qk");  // one step is recorded as the step
  EXPECT_NE(refusal(json::parse(R"([{"steps": [{"op": "scale", "values": [1, 2]}]}])")).find("/conditions/0/steps/0: a step is one op"),
            std::string::npos);
  EXPECT_NE(refusal(json::parse(R"([{"steps": []}])")).find("/conditions/0/steps: expected a non-empty array"), std::string::npos);
  EXPECT_NE(refusal(json::parse(R"([{"steps": [{"op": "scale", "values": 1, "name": "x"}]}])")).find("/conditions/0/steps/0/name: unknown key"),
            std::string::npos);
}

TEST(IntervenePlan, UniformScalesAreOneLogitFactor) {
  const auto m = parse(json::parse(R"([
      {"op": "scale", "values": [2, 0.5], "targets": ["q", "k", "qk"], "layers": "0-1"},
      {"op": "scale", "values": [4], "targets": ["q"], "layers": [1, 0]},
      {"op": "scale", "values": [-1, 1], "targets": ["qk"]},
      {"op": "compensate", "values": [3]},
      {"op": "noise", "values": [0, 0.1], "seeds": [1]},
      {"op": "scale", "values": [2], "targets": ["q"], "coordinates": "negative"},
      {"name": "again", "op": "swap_qk", "layers": "0-1"},
      {"op": "swap_qk", "layers": ["0-1"]}])"));
  // c0 q2, c1 k2, c2 qk2, c3 q.5, c4 k.5, c5 qk.5, c6 q4 (= qk2), c7 qk-1, c8 qk1, c9 compensate,
  // c10 noise 0, c11 noise .1, c12 a subset (not uniform), c13 swap 0-1, c14 the same op spelled again
  EXPECT_EQ(pairs(m, 2), "c1=c0 c4=c3 c6=c2 c7=control c8=control c9=control c10=control c14=c13 ");
  const auto eqs = omn::intervene::equivalences(m.conditions, 2);
  EXPECT_TRUE(eqs[5].sanity);  // compensate is a check, not waste
  EXPECT_FALSE(eqs[4].sanity);
  // on more layers "0-1" is not every layer: scale 2 q 0-1 and scale 2 q all differ
  EXPECT_EQ(pairs(parse(json::parse(R"([{"op": "scale", "values": [2], "targets": "q", "layers": "0-1"},
                                        {"op": "scale", "values": [2], "targets": "k"}])")), 28), "");
}

// The shipped reproduction manifest spends no pass on a duplicate: its one equivalence is the
// compensate sanity control.
TEST(IntervenePlan, ReproductionManifestHasNoDuplicates) {
  const auto m = parseManifest(withConditions("omn1-reproduction.json", json()), "r.json", "", true);
  const auto eqs = omn::intervene::equivalences(m.conditions, 28);
  ASSERT_EQ(eqs.size(), 1u) << pairs(m, 28);
  EXPECT_TRUE(eqs[0].sanity);
  std::ostringstream os;
  omn::intervene::PlanFacts f;
  f.n_layers = 28;
  f.rows = 200;
  f.seq_len = 2048;
  f.first_layers.assign(m.conditions.size(), 0);
  omn::intervene::printPlan(os, m, m.conditions, f);
  EXPECT_EQ(os.str().find("estimate: "), std::string::npos) << os.str();  // no pass timed: no estimate
  EXPECT_NE(os.str().find("plan: " + std::to_string(m.conditions.size()) + " conditions and the control twice"), std::string::npos) << os.str();
  EXPECT_NE(os.str().find("check: "), std::string::npos);
  EXPECT_EQ(os.str().find("warning: "), std::string::npos) << os.str();
}

// Reported values (the historical record): one per expanded condition, only with /reported, > 0
TEST(InterveneReported, OnePerConditionWithASource) {
  json j = withConditions("tiny-demo.json", json::parse(R"([{"op": "constant", "values": [2, 1.5, 1], "reported_perplexity": [24.08, null, 692.08]}])"));
  std::string err;
  try {
    parseManifest(j, "m.json", "", true);
  } catch (const omn::UsageError& e) {
    err = e.what();
  }
  EXPECT_NE(err.find("/conditions/0/reported_perplexity: needs /reported"), std::string::npos) << err;
  j["reported"] = {{"source", "the historical record"}, {"control_perplexity", 12.97}};
  const auto m = parseManifest(j, "m.json", "", true);
  ASSERT_EQ(m.conditions.size(), 3u);
  EXPECT_EQ(*m.conditions[0].reported_perplexity, 24.08);
  EXPECT_FALSE(m.conditions[1].reported_perplexity.has_value());
  ASSERT_TRUE(m.reported && m.reported->control_perplexity);
  EXPECT_EQ(*m.reported->control_perplexity, 12.97);
  auto refused = [&](const json& conditions, const json& reported) {
    json k = withConditions("tiny-demo.json", conditions);
    k["reported"] = reported;
    try {
      parseManifest(k, "m.json", "", true);
    } catch (const omn::UsageError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  const json src = {{"source", "x"}};
  EXPECT_NE(refused(json::parse(R"([{"op": "constant", "values": [2, 1], "reported_perplexity": [24.08]}])"), src)
                .find("/conditions/0/reported_perplexity: expected 2 values, one per condition"),
            std::string::npos);
  EXPECT_NE(refused(json::parse(R"([{"op": "constant", "values": [2, 1], "reported_perplexity": 24.08}])"), src)
                .find("give a list of 2"),
            std::string::npos);
  EXPECT_NE(refused(json::parse(R"([{"op": "constant", "values": [2], "reported_perplexity": [-1]}])"), src)
                .find("/conditions/0/reported_perplexity/0: expected a perplexity > 0"),
            std::string::npos);
  EXPECT_NE(refused(json::parse(R"([{"op": "constant", "values": [2]}])"), json{{"source", ""}}).find("/reported/source: must not be empty"),
            std::string::npos);
}

// The shipped OMN-1 manifests parse (with their placeholders filled) and say what they claim: the
// historical one drops out-of-vocabulary ids, takes "up to" 50 rows and carries the reported values
TEST(InterveneReported, ShippedManifestsParse) {
  for (const char* f : {"omn1-historical.json", "omn1-bridge.json", "omn1-reproduction.json"})
    EXPECT_NO_THROW(parseManifest(withConditions(f, json()), f, "", true)) << f;
  const auto h = parseManifest(withConditions("omn1-historical.json", json()), "h.json", "", true);
  EXPECT_TRUE(h.session.up_to);
  EXPECT_EQ(h.session.out_of_vocab, omn::eval::OutOfVocabulary::Drop);
  ASSERT_EQ(h.conditions.size(), 3u);
  EXPECT_EQ(*h.conditions[2].reported_perplexity, 692.08);
  ASSERT_TRUE(h.reported && h.reported->control_perplexity);
  EXPECT_EQ(*h.reported->control_perplexity, 12.97);
  const auto b = parseManifest(withConditions("omn1-bridge.json", json()), "b.json", "", true);
  EXPECT_EQ(b.session.row_form, omn::eval::RowForm::Historical);
}

// The estimate is the timed pass scaled: seconds per token x the tokens of every pass (the
// conditions and the control twice); the cache only said to make it less, what was not timed named.
TEST(IntervenePlan, EstimateScalesTheTimedPass) {
  const auto m = parse(json::parse(R"([{"op": "constant", "values": [2, 3], "layers": [2, 3]}])"));
  omn::intervene::PlanFacts f;
  f.n_layers = 4;
  f.rows = 64;
  f.seq_len = 128;
  f.first_layers = {2, 2};
  f.timed_rows = 16;
  f.timed_tokens = 16 * 128;
  f.total_tokens = 64 * 128;
  f.timed_seconds = 2.5;  // 0.15625 s a row; 64 rows x 4 passes = 40 s
  f.machine = "Some CPU, 1 thread, cpu";
  std::ostringstream os;
  omn::intervene::printPlan(os, m, m.conditions, f);
  EXPECT_NE(os.str().find("estimate: 40 s on this machine (Some CPU, 1 thread, cpu; one pass of 16 rows took 2.5 s); "
                          "less with --cache-activations\n"),
            std::string::npos)
      << os.str();
  f.timed_seconds = 250;  // 4,000 s: in minutes
  f.timed_tokens = 8 * 128;  // per-document rows: the tokens, not the rows, scale (8,000 s)
  f.unmeasured = "--kl";
  std::ostringstream longer;
  omn::intervene::printPlan(longer, m, m.conditions, f);
  EXPECT_NE(longer.str().find("estimate: 2.2 h on this machine"), std::string::npos) << longer.str();
  EXPECT_NE(longer.str().find("; --kl not timed: more\n"), std::string::npos) << longer.str();
}
