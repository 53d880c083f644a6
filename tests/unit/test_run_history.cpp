// train::RunHistory and the evaluation record. RunHistory: what a run knows of its past, the same whether built step by step or rebuilt
// from the log a resume reads (the resume's bitwise guarantee rests on it), and the divergence rule
// it judges (docs/train.md, rule 2).
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include "omn/study/analysis.h"
#include "omn/train/evaluation.h"
#include "omn/train/run_history.h"
#include "omn/train/run_records.h"

using nlohmann::json;
using omn::train::CheckpointEntry;
using omn::train::RunHistory;

namespace {
json evalRecord(std::int64_t step, json heldout) { return {{"step", step}, {"eval", {{"heldout_loss", heldout}}}}; }
json trainRecord(std::int64_t step, json loss) { return {{"step", step}, {"train_loss", loss}}; }

// A run's log: L0 7.0 at step 0, the first batch's loss 6.9, evaluations at 2, 4 (not finite: null) and 6.
std::vector<json> sampleLog() {
  return {evalRecord(0, 7.0), trainRecord(1, 6.9), evalRecord(2, 5.4), trainRecord(3, 5.3), evalRecord(4, nullptr),
          evalRecord(6, 4.9)};
}
}  // namespace

TEST(RunHistory, StepByStepEqualsRebuiltFromTheLog) {
  RunHistory live({6.0, 5.0, 4.0});
  std::string text;
  for (const json& r : sampleLog()) {
    const std::string line = r.dump() + "\n";
    live.logged(r, line);
    text += line;
  }
  live.checkpointed({6, "checkpoints/step-000006.pt", "aa", "bb", text.size(), "cc"});
  RunHistory rebuilt({6.0, 5.0, 4.0});
  rebuilt.restore(omn::train::parseLog("log.jsonl", text), text, live.checkpointsJson());
  for (const RunHistory* h : {&live, &rebuilt}) {
    EXPECT_EQ(h->initialLoss(), 7.0);
    EXPECT_EQ(h->initialTrainLoss(), 6.9);
    EXPECT_EQ(h->bestHeldout(), 4.9);
    EXPECT_EQ(h->lastLoggedStep(), 6);
    EXPECT_TRUE(h->logStartsAtStep0());
    ASSERT_TRUE(h->lastEval());
    EXPECT_EQ(h->lastEval()->step, 6);
    EXPECT_EQ(h->logText(), text);
  }
  EXPECT_EQ(live.thresholdsJson(), rebuilt.thresholdsJson());
  EXPECT_EQ(live.evalsJson(), rebuilt.evalsJson());
  EXPECT_EQ(live.checkpointsJson(), rebuilt.checkpointsJson());
  // 6.0 first reached at step 2 (5.4), 5.0 at step 6 (4.9), 4.0 never; a null evaluation is kept as null
  EXPECT_EQ(live.thresholdsJson(), json::parse(R"([{"threshold":6.0,"step":2},{"threshold":5.0,"step":6},{"threshold":4.0,"step":null}])"));
  EXPECT_EQ(live.evalsJson()[2], json::parse(R"({"step":4,"heldout_loss":null})"));
}

TEST(RunHistory, NothingLoggedHasNoL0) {
  RunHistory h({});
  EXPECT_TRUE(std::isnan(h.initialLoss()));
  EXPECT_TRUE(std::isinf(h.bestHeldout()));
  EXPECT_FALSE(h.logStartsAtStep0());
  EXPECT_FALSE(h.lastLoggedStep());
  EXPECT_EQ(h.thresholdsJson(), json::array());
  // a log that does not start at step 0 (written before step-0 evaluations) has no L0 either
  RunHistory old({});
  old.restore({trainRecord(1, 6.0), evalRecord(2, 5.0)}, "", json::array());
  EXPECT_FALSE(old.logStartsAtStep0());
  EXPECT_TRUE(std::isnan(old.initialLoss()));
}

TEST(RunHistory, HeldoutDivergenceAfterWarmupOnly) {
  RunHistory h({});
  h.logged(evalRecord(0, 7.0), "");
  EXPECT_EQ(h.heldoutDivergence(7.5, 10, 10), "");  // in the warm-up: not judged
  EXPECT_EQ(h.heldoutDivergence(std::nullopt, 10, 10), "");
  EXPECT_EQ(h.heldoutDivergence(7.0, 11, 10), "");  // equal to L0 is not above it
  EXPECT_EQ(h.heldoutDivergence(7.5, 11, 10), "held-out loss 7.5000 above L0 7.0000 (the held-out loss at step 0) after warm-up");
  EXPECT_EQ(h.heldoutDivergence(std::nullopt, 11, 10), "non-finite held-out loss after warm-up");
}

TEST(RunHistory, CheckpointEntryRoundTrips) {
  const CheckpointEntry e{200, "checkpoints/step-000200.pt", std::string(64, 'a'), std::string(64, 'b'), 12345, std::string(64, 'c')};
  const json j = omn::train::toJson(e);
  EXPECT_EQ(j, omn::train::toJson(omn::train::checkpointEntry(j)));
  EXPECT_EQ(j["log_bytes"], 12345);
  EXPECT_THROW(omn::train::checkpointEntry(json{{"step", 1}}), json::exception);
}

// The per-layer metrics are one table (train/evaluation.h): the log record, the study's
// trajectories and figures are made from it, and the schema and docs must list every row -- this
// test fails for a metric added to the table and not to them.
namespace {
std::string sourceFile(const std::string& rel) {
  std::ifstream f(std::string(OMN_SOURCE_DIR) + "/" + rel);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}
}  // namespace

TEST(LayerMetrics, EveryRowReachesTheLogTheStudyTheSchemaAndTheDocs) {
  omn::train::Evaluation e;
  e.heldout_loss = 4.5;
  e.heldout_tokens = 100;
  omn::train::LayerHealth h;
  h.max_attention_logit = 12.5;
  h.attention_entropy = std::nan("");
  h.input_kurtosis = 3.25;
  e.layers = {h, h};
  const json rec = omn::train::toJson(e);
  ASSERT_EQ(rec["layers"].size(), 2u);
  EXPECT_EQ(rec["layers"][1]["layer"], 1);
  EXPECT_FALSE(rec["layers"][0].contains("q_gain"));  // no QK-norm: no gain statistics
  EXPECT_EQ(rec["layers"][0]["attention_entropy"], nullptr);  // not finite: null
  for (const auto& m : omn::train::kLayerMetrics) EXPECT_TRUE(rec["layers"][0].contains(m.key)) << m.key;

  // the study's trajectory carries a per-layer series for each row, from the log as written
  omn::study::Cell cell;
  cell.id = "qk-off_lr-1.000e-03_seed-0";
  const json train = {{"status", "finished"}, {"config", {{"sha256", "x"}}}, {"model", {{"parameters", 10}}}};
  const std::vector<json> log = {{{"step", 0}, {"eval", rec}}, {{"step", 1}, {"train_loss", 4.0}}};
  const json run = omn::study::runRecord(cell, train, log, "runs/x", "y");
  const std::string schema = sourceFile("docs/schema/study.schema.json");
  const std::string docs = sourceFile("docs/train.md");
  ASSERT_FALSE(schema.empty());
  ASSERT_FALSE(docs.empty());
  for (const auto& m : omn::train::kLayerMetrics) {
    ASSERT_TRUE(run["trajectory"]["eval"].contains(m.key)) << m.key;
    EXPECT_EQ(run["trajectory"]["eval"][m.key][0][0], rec["layers"][0][m.key]) << m.key;
    EXPECT_NE(schema.find(std::string("\"") + m.key + "\": {\"$ref\": \"#/$defs/per_layer_series\"}"), std::string::npos)
        << m.key << " is not in docs/schema/study.schema.json's trajectory.eval";
    EXPECT_NE(docs.find(m.key), std::string::npos) << m.key << " is not documented in docs/train.md";
  }
}
