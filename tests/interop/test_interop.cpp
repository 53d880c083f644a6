// Files written by real PyTorch (tests/interop/make_fixtures.py) read back exactly as Python reads
// them; hostile and corrupt files refused with a clear message and no side effect.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include "omn/audit/gain_set.h"
#include "omn/errors.h"
#include "omn/io/checkpoint.h"
#include "omn/model/preset.h"

namespace {

const std::string kDir = std::string(OMN_FIXTURES) + "/interop";

const nlohmann::json& expected() {
  static const nlohmann::json j = [] {
    std::ifstream in(kDir + "/expected.json");
    return nlohmann::json::parse(in);
  }();
  return j;
}

std::string checkpointRefusal(const std::string& name) {
  try {
    omn::io::openCheckpoint(kDir + "/" + name);
  } catch (const omn::FormatError& e) {
    return e.what();
  }
  return "";
}

class Interop : public ::testing::TestWithParam<std::string> {};

}  // namespace

TEST_P(Interop, TensorsMatchPython) {
  const std::string name = GetParam();
  auto ck = omn::io::openCheckpoint(kDir + "/" + name);
  const auto& want = expected()[name]["tensors"];
  ASSERT_EQ(ck->index.size(), want.size());
  for (auto it = want.begin(); it != want.end(); ++it) {
    const auto* t = ck->index.find(it.key());
    ASSERT_NE(t, nullptr) << it.key();
    EXPECT_EQ(omn::io::dtypeName(t->dtype), (*it)["dtype"].get<std::string>()) << it.key();
    EXPECT_EQ(t->shape, (*it)["shape"].get<std::vector<std::int64_t>>()) << it.key();
    EXPECT_EQ(omn::io::readAsDouble(*t), (*it)["values"].get<std::vector<double>>()) << it.key();
  }
}

INSTANTIATE_TEST_SUITE_P(Files, Interop,
                         ::testing::Values("od_metadata.pt", "envelope.pt", "tied.pt", "views.pt", "dtypes.pt",
                                           "model.safetensors", "model.safetensors.index.json", "qwen3.safetensors"),
                         [](const auto& info) {
                           std::string s = info.param;
                           for (char& c : s)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return s;
                         });

TEST(InteropEnvelope, MetadataRenderedAsJson) {
  auto ck = omn::io::openCheckpoint(kDir + "/envelope.pt");
  EXPECT_EQ(ck->state_key, "model");
  nlohmann::json meta = ck->metadata;
  EXPECT_EQ(meta["model"]["$state_dict"]["tensors"], 5);
  meta.erase("model");
  EXPECT_EQ(meta, expected()["envelope.pt"]["metadata"]);
}

TEST(InteropEnvelope, StateKeyOption) {
  omn::io::OpenOptions o;
  o.state_key = "model";
  EXPECT_EQ(omn::io::openCheckpoint(kDir + "/envelope.pt", o)->index.size(), 5u);
  o.state_key = "nested";
  EXPECT_THROW(omn::io::openCheckpoint(kDir + "/envelope.pt", o), omn::FormatError);
  o.state_key = "nope";
  EXPECT_THROW(omn::io::openCheckpoint(kDir + "/envelope.pt", o), omn::FormatError);
}

TEST(InteropStateDict, ModuleMetadataArrivesThroughBuild) {
  auto ck = omn::io::openCheckpoint(kDir + "/od_metadata.pt");
  EXPECT_EQ(ck->state_key, "");
  EXPECT_EQ(ck->metadata["$state_dict"]["module_metadata_entries"], expected()["od_metadata.pt"]["module_metadata_entries"]);
}

TEST(InteropTied, SharedStorageIsReported) {
  auto ck = omn::io::openCheckpoint(kDir + "/tied.pt");
  ASSERT_EQ(ck->shared_storage.size(), 1u);
  EXPECT_EQ(ck->shared_storage[0], (std::vector<std::string>{"embed.weight", "head.weight"}));
  EXPECT_EQ(ck->index.at("embed.weight").storage_data, ck->index.at("head.weight").storage_data);
}

TEST(InteropViews, OffsetsAndStridesAreKept) {
  auto ck = omn::io::openCheckpoint(kDir + "/views.pt");
  const auto& b = ck->index.at("block");
  EXPECT_EQ(b.storage_offset, 12);
  EXPECT_EQ(b.strides, (std::vector<std::int64_t>{10, 1}));
  EXPECT_FALSE(ck->index.at("transposed").contiguous());
  EXPECT_EQ(ck->index.at("scalar").shape.size(), 0u);
}

TEST(InteropZip, RecordsAreAlignedAndMappedInPlace) {
  auto ck = omn::io::openCheckpoint(kDir + "/dtypes.pt");
  for (const auto& t : ck->index.tensors()) {
    EXPECT_EQ(t.storage_file_offset % 64, 0u) << t.name;
    EXPECT_EQ(t.storage_data, ck->files[0]->data() + t.storage_file_offset) << t.name;
  }
}

TEST(Hostile, EveryPickleAttackIsRefusedAndNothingRuns) {
  const std::string marker = kDir + "/MARKER_PWNED";
  ::unlink(marker.c_str());
  const std::pair<const char*, const char*> cases[] = {
      {"evil_os_system.pt", "GLOBAL 'posix.system'"},   {"evil_eval.pt", "GLOBAL '__builtin__.eval'"},
      {"evil_popen.pt", "Popen'"},                      {"evil_nested.pt", "GLOBAL 'posix.system'"},
      {"evil_stack_global.pt", "STACK_GLOBAL"},         {"evil_inst.pt", "INST"},
      {"evil_protocol4.pt", "protocol 4"},
  };
  for (const auto& [file, expect] : cases) {
    const std::string msg = checkpointRefusal(file);
    EXPECT_NE(msg.find(expect), std::string::npos) << file << ": " << msg;
    EXPECT_NE(msg.find("pickle byte"), std::string::npos) << file << ": " << msg;
  }
  EXPECT_NE(checkpointRefusal("evil_stack_global.pt").find("posix.system"), std::string::npos);
  EXPECT_NE(checkpointRefusal("evil_inst.pt").find("posix.system"), std::string::npos);
  EXPECT_NE(::access(marker.c_str(), F_OK), 0) << "a hostile pickle created its marker file";
}

TEST(Corrupt, EachIsAClearFormatError) {
  const std::pair<const char*, const char*> cases[] = {
      {"truncated.pt", "end-of-central-directory"}, {"flipped.pt", "CRC-32"},
      {"past_end.pt", "past the end of the file"},  {"huge_header.safetensors", "100 MB"},
      {"overlap.safetensors", "overlaps"},          {"legacy.pt", "legacy"},
  };
  for (const auto& [file, expect] : cases) {
    const std::string msg = checkpointRefusal(file);
    EXPECT_NE(msg.find(expect), std::string::npos) << file << ": " << msg;
    EXPECT_NE(msg.find(file), std::string::npos) << "names the file: " << msg;
  }
}

TEST(Presets, DetectedFromHuggingFaceNames) {
  for (const char* name : {"qwen3", "olmo2", "gemma3"}) {
    auto ck = omn::io::openCheckpoint(kDir + "/" + name + ".safetensors");
    const auto p = omn::model::detectPreset(ck->index);
    EXPECT_EQ(p.name, name);
    const auto g = omn::audit::loadGains(*ck, p);
    EXPECT_EQ(g.n_layers, 2);
    const auto& stored = expected()[std::string(name) + ".safetensors"]["tensors"]["model.layers.1.self_attn.q_norm.weight"]["values"];
    const double offset = std::string(name) == "gemma3" ? 1.0 : 0.0;  // Gemma: effective gain 1 + w
    for (std::size_t i = 0; i < stored.size(); ++i)
      EXPECT_EQ(g.at(1, omn::audit::Role::Q).values[i], stored[i].get<double>() + offset);
  }
}
