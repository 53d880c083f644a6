// train::RunHistory and the evaluation record. RunHistory: what a run knows of its past, the same whether built step by step or rebuilt
// from the log a resume reads (the resume's bitwise guarantee rests on it), and the divergence rule
// it judges (docs/train.md, rule 2).
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include "omn/errors.h"
#include "omn/study/analysis.h"
#include "omn/train/evaluation.h"
#include "omn/train/run_history.h"
#include "omn/train/run_records.h"
#include "omn/train/run_segments.h"

using nlohmann::json;
using omn::documents::TrainLogRecord;
using omn::train::CheckpointEntry;
using omn::train::RunHistory;

namespace {
TrainLogRecord evalRecord(std::int64_t step, std::optional<double> heldout) {
  TrainLogRecord r;
  r.step = step;
  r.eval = omn::documents::LogEvaluation{heldout, 0, {}};
  return r;
}
TrainLogRecord trainRecord(std::int64_t step, std::optional<double> loss) {
  TrainLogRecord r;
  r.step = step;
  r.trained = true;
  r.train_loss = loss;
  return r;
}

// A run's log: L0 7.0 at step 0, the first batch's loss 6.9, evaluations at 2, 4 (not finite: null) and 6.
std::vector<TrainLogRecord> sampleLog() {
  return {evalRecord(0, 7.0), trainRecord(1, 6.9), evalRecord(2, 5.4), trainRecord(3, 5.3), evalRecord(4, std::nullopt),
          evalRecord(6, 4.9)};
}
}  // namespace

TEST(RunHistory, StepByStepEqualsRebuiltFromTheLog) {
  RunHistory live({6.0, 5.0, 4.0});
  std::string text;
  for (const TrainLogRecord& r : sampleLog()) {
    const std::string line = r.toJson().dump() + "\n";
    live.logged(r, line);
    text += line;
  }
  live.checkpointed({6, "checkpoints/step-000006.pt", "aa", "bb", static_cast<std::int64_t>(text.size()), "cc"});
  RunHistory rebuilt({6.0, 5.0, 4.0});
  rebuilt.restore(TrainLogRecord::fromJson(omn::train::parseLog("log.jsonl", text), "log.jsonl"), text, live.checkpoints());
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
  EXPECT_EQ(json(live.thresholds()), json(rebuilt.thresholds()));
  EXPECT_EQ(json(live.evals()), json(rebuilt.evals()));
  EXPECT_EQ(json(live.checkpoints()), json(rebuilt.checkpoints()));
  // 6.0 first reached at step 2 (5.4), 5.0 at step 6 (4.9), 4.0 never; a null evaluation is kept as null
  EXPECT_EQ(json(live.thresholds()), json::parse(R"([{"threshold":6.0,"step":2},{"threshold":5.0,"step":6},{"threshold":4.0,"step":null}])"));
  EXPECT_EQ(json(live.evals()[2]), json::parse(R"({"step":4,"heldout_loss":null})"));
  // the log's lines as the trainer writes them: a training step's with its loss (null when not
  // finite), step 0's evaluation without one
  EXPECT_EQ(trainRecord(3, std::nullopt).toJson()["train_loss"], nullptr);
  EXPECT_FALSE(evalRecord(0, 7.0).toJson().contains("train_loss"));
}

TEST(RunHistory, NothingLoggedHasNoL0) {
  RunHistory h({});
  EXPECT_TRUE(std::isnan(h.initialLoss()));
  EXPECT_TRUE(std::isinf(h.bestHeldout()));
  EXPECT_FALSE(h.logStartsAtStep0());
  EXPECT_FALSE(h.lastLoggedStep());
  EXPECT_TRUE(h.thresholds().empty());
  // a log that does not start at step 0 (written before step-0 evaluations) has no L0 either
  RunHistory old({});
  old.restore({trainRecord(1, 6.0), evalRecord(2, 5.0)}, "", {});
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
  const json j = e;
  EXPECT_EQ(j, json(j.get<CheckpointEntry>()));
  EXPECT_EQ(j["log_bytes"], 12345);
  EXPECT_THROW((void)json({{"step", 1}}).get<CheckpointEntry>(), std::exception);
}

// train.json's /segments: one per process that trained the run, read back by a resume in order,
// and the run's timing added up over all of them.
namespace {
json segmentJson(std::int64_t start, std::int64_t end, double seconds, const std::string& openblas) {
  omn::train::RunSegment s;
  s.start_step = start;
  s.end_step = end;
  s.tokens = (end - start) * 64;
  s.end = "checkpoint";
  s.seconds = seconds;
  s.openblas = openblas;
  return s;
}
// A running record of 100 steps (64 tokens each) with checkpoints at 0 and 40, and `segments`.
omn::documents::TrainDocument segmentedRecord(const json& segments) {
  omn::documents::TrainDocument doc;
  doc.steps = 100;
  doc.last_checkpoint_step = 40;
  doc.checkpoints = {CheckpointEntry{0, "", "", {}, {}, {}}, CheckpointEntry{40, "", "", {}, {}, {}}};
  if (!segments.is_null()) doc.segments = segments.get<std::vector<omn::train::RunSegment>>();
  return doc;
}
}  // namespace

TEST(RunSegments, ReadBackAsWrittenAndTimedTogether) {
  // stopped after step 50 (its last checkpoint 40), resumed on another OpenBLAS kernel from 40
  const json segs = {segmentJson(0, 50, 30.0, "OpenBLAS 0.3.21 Haswell"), segmentJson(40, 100, 20.0, "OpenBLAS 0.3.21 SkylakeX")};
  const auto back = omn::train::recordedSegments(segmentedRecord(segs), "train.json", 64);
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(json(back), segs);  // nothing lost between the record and the resume
  EXPECT_EQ(*back[0].openblas, "OpenBLAS 0.3.21 Haswell");
  const json t = omn::train::runTiming(back);
  EXPECT_EQ(t["seconds"], 50.0);
  EXPECT_EQ(t["tokens_trained"], (50 + 60) * 64);  // steps 41-50 twice: both were spent
  EXPECT_EQ(t["tokens_per_second"], (50 + 60) * 64 / 50.0);
  EXPECT_EQ(t["segments"], 2);
  EXPECT_EQ(t["unrecorded_steps"], 0);
}

TEST(RunSegments, ARecordWithoutSegmentsIsOneUnrecordedSegment) {
  const auto back = omn::train::recordedSegments(segmentedRecord(nullptr), "train.json", 64);
  ASSERT_EQ(back.size(), 1u);
  EXPECT_FALSE(back[0].recorded());
  EXPECT_EQ(back[0].start_step, 0);
  EXPECT_EQ(back[0].end_step, 40);  // to the last checkpoint: what a resume continues from
  EXPECT_EQ(back[0].tokens, 40 * 64);
  EXPECT_FALSE(back[0].seconds);
  EXPECT_FALSE(back[0].openblas);
  const json t = omn::train::runTiming({back[0], omn::train::recordedSegments(segmentedRecord(json::array({segmentJson(40, 100, 20.0, "x")})), "t", 64)[0]});
  EXPECT_EQ(t["seconds"], 20.0);
  EXPECT_EQ(t["tokens_trained"], 100 * 64);
  EXPECT_EQ(t["tokens_per_second"], 60 * 64 / 20.0);  // the timed segment's tokens over its time
  EXPECT_EQ(t["unrecorded_steps"], 40);
  omn::documents::TrainDocument none = segmentedRecord(nullptr);
  none.checkpoints.clear();
  none.last_checkpoint_step.reset();
  EXPECT_TRUE(omn::train::recordedSegments(none, "train.json", 64).empty());  // nothing to continue: nothing to count
}

TEST(RunSegments, OutOfOrderSegmentsAreRefusedNamingThePointer) {
  auto refusal = [](const json& segs) {
    try {
      omn::train::recordedSegments(segmentedRecord(segs), "train.json", 64);
    } catch (const omn::FormatError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(refusal({segmentJson(0, 50, 1, "a"), segmentJson(40, 100, 1, "b")}), "accepted");
  EXPECT_NE(refusal({segmentJson(0, 30, 1, "a"), segmentJson(40, 100, 1, "b")}).find("/segments/1/start_step"), std::string::npos);
  EXPECT_NE(refusal(json::array({segmentJson(0, 101, 1, "a")})).find("/segments/0/end_step"), std::string::npos);
  EXPECT_NE(refusal(json::array({segmentJson(50, 40, 1, "a")})).find("/segments/0/end_step"), std::string::npos);
  EXPECT_NE(refusal(json::array({segmentJson(0, 30, 1, "a")})).find("/segments/0/end_step: expected at least /last_checkpoint_step 40"),
            std::string::npos);
  json wrong_tokens = segmentJson(0, 50, 1, "a");
  wrong_tokens["tokens"] = 1;
  EXPECT_NE(refusal(json::array({wrong_tokens})).find("/segments/0/tokens"), std::string::npos);
  json unrecorded = segmentJson(40, 100, 1, "b");
  unrecorded["end"] = "unrecorded";
  EXPECT_NE(refusal({segmentJson(0, 50, 1, "a"), unrecorded}).find("/segments/1/end"), std::string::npos);
  EXPECT_NE(refusal(json::array()).find("/segments: expected the segments that wrote its checkpoints"), std::string::npos);
  // a count past int64 (a doctored /steps with a config's tokens per step) is refused, never wrapped
  EXPECT_THROW(omn::train::recordedSegments(segmentedRecord(json::array({segmentJson(0, 50, 1, "a")})), "t", std::int64_t{1} << 62), omn::FormatError);
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
  h.metrics.max_attention_logit = 12.5;
  h.metrics.attention_entropy = std::nan("");
  h.metrics.input_kurtosis = 3.25;
  e.layers = {h, h};
  e.layers[1].layer = 1;
  const json rec = e;
  ASSERT_EQ(rec["layers"].size(), 2u);
  EXPECT_EQ(rec["layers"][1]["layer"], 1);
  EXPECT_FALSE(rec["layers"][0].contains("q_gain"));  // no QK-norm: no gain statistics
  EXPECT_EQ(rec["layers"][0]["attention_entropy"], nullptr);  // not finite: null
  for (const auto& m : omn::train::kLayerMetrics) EXPECT_TRUE(rec["layers"][0].contains(m.key)) << m.key;

  // the study's trajectory carries a per-layer series for each row, from the log as written
  omn::study::Cell cell;
  cell.id = "qk-off_lr-1.000e-03_seed-0";
  omn::documents::TrainDocument train;
  train.status = "finished";
  train.config.sha256 = "x";
  train.model.parameters = 10;
  const std::vector<TrainLogRecord> log =
      TrainLogRecord::fromJson(std::vector<json>{{{"step", 0}, {"eval", rec}}, {{"step", 1}, {"train_loss", 4.0}}}, "log.jsonl");
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
