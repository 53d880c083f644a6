// Manifest layer specifications: kept as ranges, bounded by the model's layer count before any
// index is made (a range "0-1000000000" allocated gigabytes), shared by the conditions they expand to.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <functional>
#include <set>

#include "omn/errors.h"
#include "omn/intervene/manifest.h"

using nlohmann::json;
using omn::intervene::parseManifest;

namespace {

json demoWith(const json& conditions) {
  std::ifstream in(std::string(OMN_SOURCE_DIR) + "/configs/manifests/tiny-demo.json");
  json j = json::parse(in);
  j["conditions"] = conditions;
  return j;
}

std::string usageError(const std::function<void()>& f) {
  try {
    f();
  } catch (const omn::UsageError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(InterveneManifest, HugeLayerRangeIsCheckedBeforeExpanding) {
  const auto start = std::chrono::steady_clock::now();
  const auto m = parseManifest(demoWith(json::parse(R"([{"op": "constant", "values": [2], "layers": "0-1000000000"}])")),
                               "m.json", "", true);
  ASSERT_EQ(m.conditions.size(), 1u);
  const std::string msg = usageError([&] { m.conditions[0].steps[0].layers.resolve(4, "/conditions/0"); });
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));  // 4 GB of ints took minutes
  EXPECT_NE(msg.find("/conditions/0/layers: layer 4 does not exist (the model has 4 layers: 0-3)"), std::string::npos) << msg;
}

TEST(InterveneManifest, RangesResolveAscendingAndMerged) {
  const auto m = parseManifest(demoWith(json::parse(R"([{"op": "constant", "values": [2], "layers": ["5-7", 2, "6-9", 3, 0]}])")),
                               "m.json", "", true);
  EXPECT_EQ(m.conditions[0].steps[0].layers.resolve(12, "/c"), (std::vector<int>{0, 2, 3, 5, 6, 7, 8, 9}));
  EXPECT_EQ(m.conditions[0].describe()["layers"], json::parse("[0, 2, 3, 5, 6, 7, 8, 9]"));
  EXPECT_NE(usageError([&] { m.conditions[0].steps[0].layers.resolve(9, "/c"); }).find("layer 9 does not exist"), std::string::npos);
  // the first layer past the end is named, not the range's start
  const auto w = parseManifest(demoWith(json::parse(R"([{"op": "constant", "values": [2], "layers": ["2-40"]}])")), "m.json", "", true);
  EXPECT_NE(usageError([&] { w.conditions[0].steps[0].layers.resolve(28, "/c"); }).find("layer 28 does not exist"), std::string::npos);
}

TEST(InterveneManifest, LongLayerListIsSharedNotCopiedPerCondition) {
  // 20,000 layer entries times 2,000 values: one list, and labels that stay short
  json layers = json::array();
  for (int i = 0; i < 20000; ++i) layers.push_back(2 * i);
  json values = json::array();
  for (int i = 0; i < 2000; ++i) values.push_back(1.0 + i / 1000.0);
  const auto m = parseManifest(demoWith(json::array({{{"op", "constant"}, {"values", values}, {"layers", layers}}})), "m.json", "", true);
  ASSERT_EQ(m.conditions.size(), 2000u);
  EXPECT_EQ(m.conditions[0].steps[0].layers.ranges.get(), m.conditions[1999].steps[0].layers.ranges.get());
  EXPECT_EQ(m.conditions[0].steps[0].layers.ranges->size(), 20000u);
  EXPECT_LT(m.conditions[0].label.size(), 160u) << m.conditions[0].label;
}

// Every op of the catalog (op_catalog.h) parses from its row alone: its name, its parameter list
// (or none), its label and its recorded op; another op's parameter and an unknown op are refused
// with the catalog's own names.
TEST(InterveneManifest, EveryCatalogOpParsesFromItsRow) {
  using omn::intervene::kOps;
  using omn::intervene::ParamKind;
  for (const auto& info : kOps) {
    json c = {{"op", info.name}};
    json sample;
    switch (info.param) {
      case ParamKind::Number: sample = 1.5; break;
      case ParamKind::Source: sample = {{"path", "other.pt"}, {"sha256", std::string(64, 'a')}}; break;
      case ParamKind::Mode: sample = "abs"; break;
      case ParamKind::SourceLayer: sample = 2; break;
      case ParamKind::None: break;
    }
    if (info.list_key) c[info.list_key] = json::array({sample});
    if (info.seeded) c[omn::intervene::kSeedsKey] = json::array({7});
    const auto m = parseManifest(demoWith(json::array({c})), "m.json", "", true);
    ASSERT_EQ(m.conditions.size(), 1u) << info.name;
    const json d = m.conditions[0].describe();
    EXPECT_EQ(d["op"], info.name);
    EXPECT_EQ(m.conditions[0].label.rfind(info.name, 0), 0u) << m.conditions[0].label;
    if (info.record_key) {
      EXPECT_EQ(d[info.record_key], sample) << info.name;
    }
    if (info.seeded) {
      EXPECT_EQ(d[omn::intervene::kSeedKey], 7) << info.name;
    }
    EXPECT_EQ(d.size(), 3u + (info.record_key != nullptr) + info.seeded) << d.dump();  // op, target, layers, parameters
    // a parameter list that belongs to another op
    json wrong = c;
    wrong[info.seeded ? "modes" : "seeds"] = json::array({1});
    EXPECT_THROW(parseManifest(demoWith(json::array({wrong})), "m.json", "", true), omn::UsageError) << info.name;
  }
  try {
    parseManifest(demoWith(json::parse(R"([{"op": "clamp"}])")), "m.json", "", true);
    ADD_FAILURE() << "an unknown op was accepted";
  } catch (const omn::UsageError& e) {
    std::string listed;  // the catalog's names, as the message lists them: "constant, scale, ... or bypass"
    for (std::size_t k = 0; k < kOps.size(); ++k)
      listed += std::string(k == 0 ? "" : k + 1 == kOps.size() ? " or " : ", ") + kOps[k].name;
    EXPECT_NE(std::string(e.what()).find("/conditions/0/op: expected " + listed + ", got \"clamp\""), std::string::npos) << e.what();
    EXPECT_NE(listed.find("constant, scale, vector_mean"), std::string::npos);
  }
}

// The published schema (docs/schema/manifest.schema.json) and the parser's tables say the same:
// every op, its parameter list and when it is required; targets, sign_fix modes, row forms,
// attention paths and dtypes. The tables are the definition; this catches the schema drifting.
TEST(InterveneManifest, SchemaAgreesWithTheTables) {
  std::ifstream in(std::string(OMN_SOURCE_DIR) + "/docs/schema/manifest.schema.json");
  const json schema = json::parse(in);
  auto names = [](const auto& table) {
    std::vector<std::string> v;
    for (const auto& e : table) v.push_back(e.name);
    return v;
  };
  auto enumOf = [](const json& j) { return j.at("enum").get<std::vector<std::string>>(); };
  const json& cond = schema.at("$defs").at("op");
  std::vector<std::string> ops;
  for (const auto& info : omn::intervene::kOps) ops.push_back(info.name);
  EXPECT_EQ(enumOf(cond.at("properties").at("op")), ops);
  // an allOf rule: if op is this one, then `key` is required; and no rule requires a list the op lacks
  auto requiredFor = [&](const char* name, const std::string& key) {
    for (const json& rule : cond.at("allOf")) {
      const json& op = rule.at("if").at("properties").at("op");
      const bool names_it = op.contains("const") ? op["const"] == name : std::find(op["enum"].begin(), op["enum"].end(), name) != op["enum"].end();
      if (names_it && rule.at("then").at("required").get<std::vector<std::string>>() == std::vector<std::string>{key}) return true;
    }
    return false;
  };
  for (const auto& info : omn::intervene::kOps)
    for (const std::string key : {"values", "modes", "source_layers", "sources", "seeds"}) {
      const bool takes = (info.list_key && key == info.list_key) || (info.seeded && key == omn::intervene::kSeedsKey);
      EXPECT_TRUE(cond.at("properties").contains(key)) << key;
      EXPECT_EQ(requiredFor(info.name, key), takes) << info.name << " and " << key << " in the schema";
    }
  EXPECT_EQ(enumOf(schema.at("$defs").at("targets").at("oneOf")[0]), names(omn::intervene::kTargets));
  std::vector<std::string> modes(omn::intervene::kSignFixModes.begin(), omn::intervene::kSignFixModes.end());
  EXPECT_EQ(enumOf(cond.at("properties").at("modes").at("oneOf")[0]), modes);
  const json& props = schema.at("properties");
  EXPECT_EQ(enumOf(props.at("rows").at("properties").at("form")), names(omn::eval::kRowForms));
  EXPECT_EQ(enumOf(props.at("rows").at("properties").at("selection")), names(omn::eval::kSelectionModes));
  EXPECT_EQ(enumOf(props.at("tokens").at("properties").at("format")), names(omn::eval::kTokenFormats));
  EXPECT_EQ(enumOf(props.at("model").at("properties").at("attention")), names(omn::model::kAttentionRequests));
  EXPECT_EQ(enumOf(props.at("model").at("properties").at("dtype")), names(omn::model::kDtypeRequests));
}

TEST(InterveneManifest, ExpansionPastTheCapIsRefusedAtItsEntry) {
  // one entry: 40,000 values x 3 targets, refused before a condition is built
  json values = json::array();
  for (int i = 0; i < 40000; ++i) values.push_back(1.0 + i * 1e-6);
  json one = json::array({{{"op", "constant"}, {"values", values}, {"targets", {"qk", "q", "k"}}, {"layers", "all"}}});
  std::string msg = usageError([&] { parseManifest(demoWith(one), "m.json", "", true); });
  EXPECT_NE(msg.find("/conditions/0: expands into 120000 conditions"), std::string::npos) << msg;
  // three entries of 40,000 each: the third passes the cap, and is the one named
  json three = json::array();
  for (int k = 0; k < 3; ++k) {
    json v = json::array();
    for (int i = 0; i < 40000; ++i) v.push_back(k + 1.0 + i * 1e-6);
    three.push_back({{"op", "constant"}, {"values", v}, {"layers", "all"}});
  }
  msg = usageError([&] { parseManifest(demoWith(three), "m.json", "", true); });
  EXPECT_NE(msg.find("/conditions/2: brings the manifest past 100000 conditions"), std::string::npos) << msg;
}

TEST(InterveneManifest, EveryMistakeIsReportedInOneError) {
  // three independent mistakes: a section, a condition's op, another condition's value
  json j = demoWith(json::parse(R"([{"op": "constant", "values": [2]}, {"op": "clamp"}, {"op": "scale", "values": [1]},
                                    {"op": "noise", "values": ["x"], "seeds": [1]}])"));
  j["rows"]["num_seqs"] = -3;
  const std::string msg = usageError([&] { parseManifest(j, "m.json", "", true); });
  EXPECT_EQ(msg.rfind("manifest m.json: 3 errors:\n", 0), 0u) << msg;
  EXPECT_NE(msg.find("\n  /rows/num_seqs: "), std::string::npos) << msg;
  EXPECT_NE(msg.find("\n  /conditions/1/op: "), std::string::npos) << msg;
  EXPECT_NE(msg.find("\n  /conditions/3/values/0: "), std::string::npos) << msg;
  EXPECT_EQ(msg.find("/conditions/0"), std::string::npos) << msg;  // the good entries are not named
  EXPECT_EQ(msg.find("/conditions/2"), std::string::npos) << msg;
  // one mistake reads as it always did
  json one = demoWith(json::parse(R"([{"op": "clamp"}])"));
  EXPECT_EQ(usageError([&] { parseManifest(one, "m.json", "", true); }).rfind("manifest m.json: /conditions/0/op: ", 0), 0u);
  // past twenty, the rest are counted
  json many = json::array();
  for (int i = 0; i < 25; ++i) many.push_back({{"op", "clamp"}});
  const std::string all = usageError([&] { parseManifest(demoWith(many), "m.json", "", true); });
  EXPECT_EQ(all.rfind("manifest m.json: 25 errors:\n", 0), 0u) << all;
  EXPECT_NE(all.find("/conditions/19/op"), std::string::npos) << all;
  EXPECT_EQ(all.find("/conditions/20/op"), std::string::npos) << all;
  EXPECT_NE(all.find("\n  ... and 5 more"), std::string::npos) << all;
}

// An op is one catalog row and its entries in the places ARCHITECTURE.md names; the two that are
// text, not code, are checked here: the result schema's op enum (what a recorded step may say)
// and docs/manifest.md's table of ops (a row starting with the op's name in backticks).
TEST(InterveneManifest, EveryOpIsInTheResultSchemaAndTheDocs) {
  std::ifstream in(std::string(OMN_SOURCE_DIR) + "/docs/schema/intervention.schema.json");
  const json schema = json::parse(in);
  std::vector<std::string> ops;
  for (const auto& info : omn::intervene::kOps) ops.push_back(info.name);
  EXPECT_EQ(schema.at("$defs").at("step").at("properties").at("op").at("enum").get<std::vector<std::string>>(), ops);
  std::ifstream md(std::string(OMN_SOURCE_DIR) + "/docs/manifest.md");
  std::string line;
  std::set<std::string> documented;  // "| `sign_fix zero\|abs` | ..." documents sign_fix
  while (std::getline(md, line))
    if (line.rfind("| `", 0) == 0) documented.insert(line.substr(3, line.find_first_of(" `", 3) - 3));
  for (const auto& info : omn::intervene::kOps) {
    const std::string n = info.name;
    EXPECT_TRUE(documented.count(n))
        << n << " has no row in docs/manifest.md's table of ops";
  }
}

// What the list leaves out: past the cap, later entries repeat nothing; a mistake in /reported
// does not also refuse every condition's reported perplexity for wanting it.
TEST(InterveneManifest, NoErrorIsReportedOnlyBecauseAnotherWas) {
  json cs = json::array();
  for (int k = 0; k < 5; ++k) {
    json v = json::array();
    for (int i = 0; i < 40000; ++i) v.push_back(k + 1.0 + i * 1e-6);
    cs.push_back({{"op", "constant"}, {"values", v}, {"layers", "all"}});
  }
  const std::string cap = usageError([&] { parseManifest(demoWith(cs), "m.json", "", true); });
  EXPECT_EQ(cap.rfind("manifest m.json: /conditions/2: brings the manifest past 100000 conditions", 0), 0u) << cap.substr(0, 300);
  json j = demoWith(json::parse(R"([{"op": "constant", "values": [2], "reported_perplexity": 40}, {"op": "clamp"}])"));
  j["reported"] = {{"source", ""}};
  const std::string msg = usageError([&] { parseManifest(j, "m.json", "", true); });
  EXPECT_EQ(msg.rfind("manifest m.json: 2 errors:\n", 0), 0u) << msg;
  EXPECT_NE(msg.find("\n  /reported/source: must not be empty"), std::string::npos) << msg;
  EXPECT_NE(msg.find("\n  /conditions/1/op: "), std::string::npos) << msg;
  EXPECT_EQ(msg.find("needs /reported"), std::string::npos) << msg;
}

// /model/batch: omitted or 0 is auto (eval::autoBatch, resolved when the session opens); below 0
// is refused at its pointer.
TEST(InterveneManifest, BatchZeroIsAutoAndANegativeOneIsRefused) {
  json j = demoWith(json::parse(R"([{"op": "constant", "values": [2]}])"));
  j["model"].erase("batch");
  EXPECT_EQ(parseManifest(j, "m.json", "", true).session.batch, 0);
  j["model"]["batch"] = 0;
  EXPECT_EQ(parseManifest(j, "m.json", "", true).session.batch, 0);
  j["model"]["batch"] = 16;
  EXPECT_EQ(parseManifest(j, "m.json", "", true).session.batch, 16);
  j["model"]["batch"] = -1;
  const std::string msg = usageError([&] { parseManifest(j, "m.json", "", true); });
  EXPECT_EQ(msg.rfind("manifest m.json: /model/batch: ", 0), 0u) << msg;
}
