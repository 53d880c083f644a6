// Presets: strict parsing with JSON pointers, name patterns, shape checks against the checkpoint.
#include <gtest/gtest.h>

#include "omn/audit/gain_set.h"
#include "omn/errors.h"
#include "omn/io/checkpoint.h"
#include "omn/model/preset.h"

using nlohmann::json;

namespace {
json minimal() {
  return json::parse(R"({"schema": "omn-audit/preset@1", "name": "p",
    "tensors": {"q_norm": "l.{i}.q", "k_norm": "l.{i}.k"}, "gain": {"parametrisation": "direct", "layout": "head"}})");
}
std::string errorOf(const json& j) {
  try {
    omn::model::parsePreset(j, "p.json");
  } catch (const omn::UsageError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST(Preset, BuiltinsLoad) {
  EXPECT_EQ(omn::model::builtinPresetNames(), (std::vector<std::string>{"gemma3", "olmo2", "omn-1", "omn", "qwen3"}));
  for (const auto& n : omn::model::builtinPresetNames()) EXPECT_EQ(omn::model::loadPreset(n).name, n);
  const auto p = omn::model::loadPreset("omn-1");
  EXPECT_EQ(p.tensorName("q_norm", 27), "layers.27.attention.q_norm.weight");
  EXPECT_EQ(*p.archInt("head_dim"), 128);
}

TEST(Preset, StrictParsingNamesThePointer) {
  EXPECT_EQ(errorOf(minimal()), "");
  json j = minimal();
  j["tensors"]["qnorm"] = "x";
  EXPECT_NE(errorOf(j).find("/tensors/qnorm: unknown key"), std::string::npos) << errorOf(j);
  j = minimal();
  j["gain"]["layout"] = "row";
  EXPECT_NE(errorOf(j).find("/gain/layout"), std::string::npos);
  j = minimal();
  j["architecture"] = {{"head_dim", -4}};
  EXPECT_NE(errorOf(j).find("/architecture/head_dim"), std::string::npos);
  j = minimal();
  j["tensors"]["q_norm"] = "no.layer.index";
  EXPECT_NE(errorOf(j).find("{i}"), std::string::npos);
  j = minimal();
  j.erase("schema");
  EXPECT_NE(errorOf(j).find("/schema: required"), std::string::npos);
  EXPECT_THROW(omn::model::loadPreset("no-such-preset"), omn::UsageError);
}

TEST(Preset, GainShapesCheckedAgainstThePreset) {
  auto ck = omn::io::openCheckpoint(std::string(OMN_FIXTURES) + "/interop/qwen3.safetensors");
  json j = minimal();
  j["tensors"] = {{"q_norm", "model.layers.{i}.self_attn.q_norm.weight"}, {"k_norm", "model.layers.{i}.self_attn.k_norm.weight"}};
  j["architecture"] = {{"head_dim", 128}};
  try {
    omn::audit::loadGains(*ck, omn::model::parsePreset(j, "p.json"));
    FAIL();
  } catch (const omn::FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("expected shape [128]"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("got [16]"), std::string::npos) << e.what();
  }
  j["architecture"] = {{"n_layers", 3}};
  EXPECT_THROW(omn::audit::loadGains(*ck, omn::model::parsePreset(j, "p.json")), omn::FormatError);
}

TEST(Preset, MatchReportsUnmatchedAndMissing) {
  auto ck = omn::io::openCheckpoint(std::string(OMN_FIXTURES) + "/omn1-mini.pt");
  const auto m = omn::model::matchTensors(omn::model::loadPreset("omn-1"), ck->index, 28);
  EXPECT_EQ(m.matched, 283u);
  EXPECT_TRUE(m.unmatched.empty());
  EXPECT_TRUE(m.missing.empty());
}
