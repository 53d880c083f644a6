// A Hugging Face config.json in the preset's terms: each key mapped, defaults derived as
// transformers derives them, what eval cannot compute listed, bad types refused naming the pointer.
#include <gtest/gtest.h>

#include "omn/errors.h"
#include "omn/model/hf_config.h"
#include "omn/model/preset.h"

using nlohmann::json;
using omn::model::readHfConfig;

TEST(HfConfig, Qwen3KeysMapOntoTheArchitecture) {
  const json c = json::parse(R"({"model_type": "qwen3", "num_hidden_layers": 28, "hidden_size": 1024, "num_attention_heads": 16,
    "num_key_value_heads": 8, "head_dim": 128, "intermediate_size": 3072, "vocab_size": 151936, "rms_norm_eps": 1e-06,
    "rope_theta": 1000000, "rope_scaling": null, "tie_word_embeddings": true, "hidden_act": "silu", "attention_bias": false,
    "use_sliding_window": false, "sliding_window": null})");
  const auto hf = readHfConfig(c, "m/config.json");
  EXPECT_EQ(hf.model_type, "qwen3");
  EXPECT_EQ(hf.architecture["n_layers"], 28);
  EXPECT_EQ(hf.architecture["d_model"], 1024);
  EXPECT_EQ(hf.architecture["n_heads"], 16);
  EXPECT_EQ(hf.architecture["n_kv_heads"], 8);
  EXPECT_EQ(hf.architecture["head_dim"], 128);
  EXPECT_EQ(hf.architecture["ffn_hidden"], 3072);
  EXPECT_EQ(hf.architecture["vocab_size"], 151936);
  EXPECT_DOUBLE_EQ(hf.architecture["norm_eps"].get<double>(), 1e-6);
  EXPECT_DOUBLE_EQ(hf.architecture["qk_norm_eps"].get<double>(), 1e-6);  // one eps for every RMSNorm
  EXPECT_DOUBLE_EQ(hf.architecture["rope_theta"].get<double>(), 1e6);
  EXPECT_EQ(hf.architecture["tied_output"], true);
  EXPECT_TRUE(hf.forward_unsupported.empty());
  EXPECT_EQ(hf.from.at("n_layers"), "m/config.json /num_hidden_layers");
}

TEST(HfConfig, DerivedHeadDimNestedTextConfigAndRopeParameters) {
  // OLMo2 has no head_dim key: hidden_size / num_attention_heads, as transformers derives it
  auto hf = readHfConfig(json::parse(R"({"model_type": "olmo2", "hidden_size": 2048, "num_attention_heads": 16})"), "c");
  EXPECT_EQ(hf.architecture["head_dim"], 128);
  EXPECT_EQ(hf.from.at("head_dim"), "c /hidden_size / /num_attention_heads");
  // Gemma 3 with vision: the language model's keys under /text_config
  hf = readHfConfig(json::parse(R"({"model_type": "gemma3", "text_config": {"num_hidden_layers": 34, "rope_theta": 1e6}})"), "c");
  EXPECT_EQ(hf.architecture["n_layers"], 34);
  EXPECT_EQ(hf.from.at("n_layers"), "c /text_config/num_hidden_layers");
  // transformers 5: /rope_parameters/rope_theta
  hf = readHfConfig(json::parse(R"({"model_type": "qwen3", "rope_parameters": {"rope_type": "default", "rope_theta": 5e5}})"), "c");
  EXPECT_DOUBLE_EQ(hf.architecture["rope_theta"].get<double>(), 5e5);
  EXPECT_TRUE(hf.forward_unsupported.empty());
}

TEST(HfConfig, WhatEvalDoesNotComputeIsListedNotIgnored) {
  const auto hf = readHfConfig(json::parse(R"({"model_type": "qwen3", "rope_scaling": {"rope_type": "yarn", "factor": 4.0},
    "attention_bias": true, "use_sliding_window": true, "hidden_act": "gelu", "layer_types": ["full_attention", "sliding_attention"]})"), "c");
  ASSERT_EQ(hf.forward_unsupported.size(), 5u);
  EXPECT_NE(hf.forward_unsupported[0].find("c /rope_scaling"), std::string::npos);
  // the old spelling {"type": "linear"} is scaling too; {"rope_type": "default"} is plain RoPE
  EXPECT_EQ(readHfConfig(json::parse(R"({"rope_scaling": {"type": "linear", "factor": 2}})"), "c").forward_unsupported.size(), 1u);
  EXPECT_TRUE(readHfConfig(json::parse(R"({"rope_scaling": {"rope_type": "default"}})"), "c").forward_unsupported.empty());
}

TEST(HfConfig, WrongTypesNameThePointer) {
  auto msg = [](const char* text) {
    try {
      readHfConfig(json::parse(text), "m/config.json");
    } catch (const omn::FormatError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(msg(R"({"hidden_size": "32"})").find("m/config.json /hidden_size: expected a positive integer"), std::string::npos);
  EXPECT_NE(msg(R"({"num_hidden_layers": 0})").find("/num_hidden_layers"), std::string::npos);
  EXPECT_NE(msg(R"({"rms_norm_eps": -1})").find("/rms_norm_eps: expected a positive number"), std::string::npos);
  EXPECT_NE(msg(R"({"tie_word_embeddings": "yes"})").find("/tie_word_embeddings: expected true or false"), std::string::npos);
  EXPECT_NE(msg(R"({"model_type": 3})").find("/model_type: expected a string"), std::string::npos);
}

TEST(HfConfig, ModelTypeChoosesThePresetAndItsValuesWin) {
  const auto hf = readHfConfig(json::parse(R"({"model_type": "qwen3", "rope_theta": 5000, "rms_norm_eps": 1e-5})"), "c");
  const omn::io::TensorIndex none;
  const auto p = omn::model::resolvePreset("", none, json::object(), "m", &hf);
  EXPECT_EQ(p.name, "qwen3");
  EXPECT_DOUBLE_EQ(p.archDouble("rope_theta", 0), 5000);  // over the family's 1e6
  EXPECT_EQ(p.archSource("rope_theta"), "c /rope_theta");
  EXPECT_EQ(p.archSource("qk_norm_cast"), "preset qwen3");
  const auto llama = readHfConfig(json::parse(R"({"model_type": "llama"})"), "c");
  EXPECT_THROW(omn::model::resolvePreset("", none, json::object(), "m", &llama), omn::FormatError);
  // a preset named on the command line wins over model_type, config.json's values still apply
  EXPECT_EQ(omn::model::resolvePreset("olmo2", none, json::object(), "m", &hf).name, "olmo2");
}
