// The study manifest's expansion without training anything: the grid's product in its documented
// order, Muon's rate scaled with the AdamW rate, each cell's config validated by the trainer's
// parser, and the refusals naming the JSON pointer that gave the value.
#include <gtest/gtest.h>

#include <string>

#include "omn/errors.h"
#include "omn/study/study_manifest.h"
#include "../support/temp_file.h"

using nlohmann::json;

namespace {

const json kBase = {{"schema", "omn-audit/train-config@1"},
                    {"name", "t"},
                    {"corpus", "corpus"},
                    {"model", {{"n_layers", 2}, {"d_model", 32}, {"n_heads", 2}, {"n_kv_heads", 1}, {"head_dim", 16},
                               {"ffn_hidden", 64}, {"qk_norm", true}, {"rope_theta", 10000.0}}},
                    {"optimizer", {{"kind", "muon+adamw"}, {"lr", 0.002}, {"muon_lr", 0.02}}},
                    {"steps", 10},
                    {"batch_size", 2},
                    {"seq_len", 16}};

json manifest(const json& grid) {
  return {{"schema", "omn-audit/study-manifest@1"}, {"base", "base.json"}, {"grid", grid},
          {"output", {{"json", "study.json"}, {"runs", "runs"}}}};
}

omn::study::StudyManifest parse(const omn::test::TempDir& dir, const json& m) {
  dir.file("base.json", kBase.dump());
  return omn::study::parseStudyManifest(m, dir.path() + "/study.json.manifest", "aa", m.dump());
}

std::string refusal(const omn::test::TempDir& dir, const json& m) {
  try {
    parse(dir, m);
  } catch (const omn::UsageError& e) {
    return e.what();
  }
  return "(accepted)";
}

}  // namespace

TEST(StudyManifest, ExpandsArmsThenRatesThenSeedsAndScalesMuon) {
  omn::test::TempDir dir;
  const auto m = parse(dir, manifest({{"qk_norm", {true, false}}, {"lr", {0.004, 0.001}}, {"seeds", {0, 1}}}));
  ASSERT_EQ(m.cells.size(), 8u);
  EXPECT_EQ(m.arms, (std::vector<std::string>{"qk-on", "qk-off"}));
  EXPECT_EQ(m.lrs, (std::vector<double>{0.001, 0.004}));  // ascending, whatever the manifest's order
  EXPECT_EQ(m.cells[0].id, "qk-on_lr-1.000e-03_seed-0");
  EXPECT_EQ(m.cells[1].id, "qk-on_lr-1.000e-03_seed-1");
  EXPECT_EQ(m.cells[2].id, "qk-on_lr-4.000e-03_seed-0");
  EXPECT_EQ(m.cells[4].id, "qk-off_lr-1.000e-03_seed-0");
  for (std::size_t i = 0; i < m.cells.size(); ++i) EXPECT_EQ(m.cells[i].index, i);
  // Muon keeps the base config's ratio to AdamW's rate: 0.02 * 0.004 / 0.002
  ASSERT_TRUE(m.cells[2].muon_lr.has_value());
  EXPECT_DOUBLE_EQ(*m.cells[2].muon_lr, 0.04);
  EXPECT_DOUBLE_EQ(m.cells[2].config["optimizer"]["muon_lr"].get<double>(), 0.04);
  EXPECT_FALSE(m.cells[4].config["model"]["qk_norm"].get<bool>());
  EXPECT_EQ(m.cells[5].config["seed"].get<std::uint64_t>(), 1u);
  EXPECT_EQ(m.cells[0].n_layers, 2);
  // the cells' configs live in the runs directory: the corpus is named relative to it
  EXPECT_EQ(m.cells[0].config["corpus"].get<std::string>(), "../corpus");
}

TEST(StudyManifest, SweptAxesNameTheCellsAndAdamwDropsMuonsRate) {
  omn::test::TempDir dir;
  const auto m = parse(dir, manifest({{"qk_norm", true}, {"lr", json::array({0.002})}, {"n_layers", {2, 4}}, {"optimizer", {"adamw", "muon+adamw"}}}));
  ASSERT_EQ(m.cells.size(), 4u);
  EXPECT_EQ(m.arms, (std::vector<std::string>{"qk-on L2 adamw", "qk-on L4 adamw", "qk-on L2 muon+adamw", "qk-on L4 muon+adamw"}));
  EXPECT_EQ(m.cells[0].id, "qk-on_lr-2.000e-03_seed-0_layers-2_adamw");
  EXPECT_EQ(m.cells[0].optimizer, "adamw");
  EXPECT_FALSE(m.cells[0].muon_lr.has_value());
  EXPECT_FALSE(m.cells[0].config["optimizer"].contains("muon_lr"));
  EXPECT_EQ(m.cells[1].n_layers, 4);
  EXPECT_EQ(m.cells[3].id, "qk-on_lr-2.000e-03_seed-0_layers-4_muon");
}

TEST(StudyManifest, RefusalsNameTheirPointer) {
  omn::test::TempDir dir;
  EXPECT_NE(refusal(dir, manifest({{"qk_norm", true}, {"lr", json::array({0.002})}, {"seeds", {1, 1}}})).find("/grid/seeds: a value appears twice"),
            std::string::npos);
  EXPECT_NE(refusal(dir, manifest({{"qk_norm", true}, {"lr", {0.002, 0.002}}})).find("/grid/lr"), std::string::npos);
  EXPECT_NE(refusal(dir, manifest({{"qk_norm", true}, {"lr", {0.0012341, 0.0012342}}})).find("same to 4 significant digits"),
            std::string::npos);
  EXPECT_NE(refusal(dir, manifest({{"qk_norm", true}, {"lr", {{"from", 1e-4}, {"to", 1e-2}, {"points", 1000}}}, {"seeds", {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10}}}))
                .find("/grid: expands into 11000 cells"),
            std::string::npos);
  EXPECT_NE(refusal(dir, manifest({{"qk_norm", true}, {"lr", json::array({0.002})}, {"n_layers", {0}}})).find("/grid/n_layers/0"), std::string::npos);
  json bad_out = manifest({{"qk_norm", true}, {"lr", json::array({0.002})}});
  bad_out["output"]["csv"] = "study.json";
  EXPECT_NE(refusal(dir, bad_out).find("/output/csv: the same file as /output/json"), std::string::npos);
  json bad_set = manifest({{"qk_norm", true}, {"lr", json::array({0.002})}});
  bad_set["set"] = {{"model", {{"d_model", -1}}}};
  const std::string cell = refusal(dir, bad_set);
  EXPECT_NE(cell.find("cell qk-on_lr-2.000e-03_seed-0 (the base config with /set and the grid applied)"), std::string::npos) << cell;
}

TEST(StudyManifest, TheGridAndTheOutputsAreCheckedInOneRun) {
  omn::test::TempDir dir;
  json m = manifest({{"qk_norm", true}, {"lr", {0.002, 0.002}}});
  m["output"]["csv"] = "study.json";
  const std::string msg = refusal(dir, m);
  EXPECT_NE(msg.find(": 2 errors:\n"), std::string::npos) << msg;
  EXPECT_NE(msg.find("\n  /grid/lr"), std::string::npos) << msg;
  EXPECT_NE(msg.find("\n  /output/csv: the same file as /output/json"), std::string::npos) << msg;
}
