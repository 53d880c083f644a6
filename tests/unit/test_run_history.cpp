// train::RunHistory: what a run knows of its past, the same whether built step by step or rebuilt
// from the log a resume reads (the resume's bitwise guarantee rests on it), and the divergence rule
// it judges (docs/train.md, rule 2).
#include <gtest/gtest.h>

#include <cmath>

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
