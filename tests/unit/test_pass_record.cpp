// A sweep's pass record (intervene/pass_record.h): its journal line reads back to the same record,
// a result document's blocks read back (merge) to the records it was assembled from, and a damaged
// record is refused at its key.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "omn/documents/read_block.h"
#include "omn/errors.h"
#include "omn/intervene/pass_record.h"
#include "omn/intervene/results.h"

using nlohmann::json;
using omn::intervene::PassRecord;

namespace {

PassRecord control(const char* id, double first_nll) {
  PassRecord r;
  r.id = id;
  r.scores.nll_sum = {first_nll, 2.25, 3.5, 4.0};
  r.scores.tokens = {3, 4, 5, 6};
  r.seconds = 0.5;
  r.gain_sha256 = std::string(64, 'a');
  return r;
}

PassRecord condition() {
  PassRecord r;
  r.control = false;
  r.id = "c1";
  r.label = "q gains = 1";
  r.manifest_pointer = "/conditions/0";
  r.op = omn::documents::readBlock<omn::documents::ConditionOp>(
      json{{"op", "constant"}, {"target", "q"}, {"layers", "all"}, {"value", 1.0}}, "test", "/op");
  r.touched = {"layers.0.q_norm.weight", "layers.1.q_norm.weight"};
  r.applied.sha256 = std::string(64, 'b');
  r.applied.vectors = {{0, "q", false, 8, 8, 1.0, 1.0, 1.0}};
  r.scores.nll_sum = {std::nan(""), 2.5, 3.75, 4.5};  // a non-finite sum is journaled as null
  r.scores.tokens = {3, 4, 5, 6};
  r.seconds = 0.25;
  omn::documents::LayerMetrics layer0;
  layer0.max_attention_logit = 3.5;
  layer0.attention_entropy = std::nan("");  // not finite: null in the line, NaN read back
  r.mechanism = std::vector<omn::documents::MechanismLayer>{{0, layer0}};
  r.restore.sha256 = r.restore.expected = std::string(64, 'a');
  r.reported_perplexity = 692.0;
  return r;
}

// The sweep every record here is bound to, and the tokens its 4 rows score
const std::string kSweep(64, 'd');
const std::vector<std::int64_t> kRowTokens = {3, 4, 5, 6};

json lineOf(const PassRecord& r) { return omn::intervene::journalLine(r, kSweep); }
// The sweep runs with --mechanism on a 1-layer model and without --kl (as condition() was recorded;
// control() has no table: read back with `layers` 0)
PassRecord readBack(const json& line, bool control, const std::vector<std::int64_t>& tokens = kRowTokens, std::size_t layers = 1,
                    bool kl = false) {
  return omn::intervene::recordFromJournal(line, "journal j", control, {kSweep, tokens, layers, kl});
}
PassRecord readBack(const PassRecord& r) { return readBack(lineOf(r), r.control, kRowTokens, r.mechanism ? r.mechanism->size() : 0); }

std::string journalRefusal(const json& line, bool control = false, std::size_t layers = 1, bool kl = false) {
  try {
    readBack(line, control, kRowTokens, layers, kl);
  } catch (const omn::UsageError& e) {
    return e.what();
  }
  return "";
}

// What the document's own reader or the schema refuses in a condition's line (FormatError), or "".
std::string formatRefusal(const json& line) {
  try {
    readBack(line, false);
  } catch (const omn::FormatError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(PassRecord, AJournalLineReadsBackToTheSameRecord) {
  for (const PassRecord& r : {control("control_open", 1.125), condition()}) {
    const json line = lineOf(r);
    const PassRecord back = readBack(r);
    EXPECT_EQ(lineOf(back), line) << r.id;
    EXPECT_EQ(back.control, r.control);
    EXPECT_EQ(back.restored(), r.restored());
  }
  const PassRecord back = readBack(lineOf(condition()), false);
  EXPECT_TRUE(std::isnan(back.scores.nll_sum[0]));
  EXPECT_EQ(back.scores.nll_sum[1], 2.5);
  ASSERT_TRUE(back.reported_perplexity.has_value());
  EXPECT_EQ(*back.reported_perplexity, 692.0);
}

TEST(PassRecord, AResultDocumentReadsBackToTheRecordsItWasAssembledFrom) {
  omn::intervene::ResultsInput in;
  in.base.reported = omn::documents::ReportedSource{"the historical record", 173.0};
  in.control_open = control("control_open", 1.125);
  in.control_close = control("control_close", 1.125);
  in.conditions = {condition()};
  in.bootstrap.resamples = 50;
  in.groups = 2;
  const omn::documents::InterventionDocument doc = omn::intervene::assembleResults(in);
  const PassRecord open = omn::intervene::controlFromResult(doc.control.open, "control_open");
  EXPECT_EQ(lineOf(open), lineOf(in.control_open));
  const PassRecord c = omn::intervene::conditionFromResult(doc.conditions[0]);
  EXPECT_EQ(lineOf(c), lineOf(in.conditions[0]));
  EXPECT_TRUE(doc.conditions[0].restore.ok);
  // the reported value beside the measured one, its ratio to the reported control's
  ASSERT_TRUE(doc.conditions[0].reported);
  EXPECT_EQ(doc.conditions[0].reported->perplexity, 692.0);
  EXPECT_EQ(doc.conditions[0].reported->ratio_to_reported_control, 692.0 / 173.0);
  // and through the document's JSON, as merge reads a shard's blocks
  const json written = doc.toJson();
  const auto condition = written["conditions"][0].get<omn::documents::SweepCondition>();
  EXPECT_EQ(lineOf(omn::intervene::conditionFromResult(condition)), lineOf(in.conditions[0]));
  const auto close = written["control"]["close"].get<omn::documents::ControlPass>();
  EXPECT_EQ(lineOf(omn::intervene::controlFromResult(close, "control_close")), lineOf(in.control_close));
}

TEST(PassRecord, ADamagedRecordIsRefusedAtItsKey) {
  json line = lineOf(condition());
  line["restore"].erase("expected");
  EXPECT_EQ(journalRefusal(line), "journal j record c1: /restore/expected: required");
  line = lineOf(condition());
  line["scores"]["tokens"].erase(0);
  EXPECT_EQ(journalRefusal(line), "journal j record c1: /scores/tokens: expected an array of 4 token counts, one per nll_sum");
  line = lineOf(condition());
  line["scores"]["nll_sum"][2] = "3.75";
  EXPECT_EQ(journalRefusal(line), "journal j record c1: /scores/nll_sum/2: expected a number, got string");
  line = lineOf(condition());
  line["kind"] = "probe";
  EXPECT_NE(journalRefusal(line).find("journal j record c1: /kind: "), std::string::npos) << journalRefusal(line);
  // a control's record where the sweep expects a condition (and the reverse) is not taken for one
  EXPECT_EQ(journalRefusal(lineOf(control("c1", 1.0))),
            "journal j record c1: /kind: expected \"condition\" in this place of the sweep");
  EXPECT_EQ(journalRefusal(lineOf(condition()), true),
            "journal j record c1: /kind: expected \"control\" in this place of the sweep");
  line = lineOf(condition());
  line["divergence"] = {{"kl_sum", {0.5}}, {"top1_agree", {1}}, {"dp_correct_sum", {0}}, {"kl_quantiles", nullptr}};
  EXPECT_EQ(journalRefusal(line), "journal j record c1: /divergence/kl_sum: expected an array of 4 per-sequence values");
  line = lineOf(condition());
  line["mechanism"] = {1, 2};
  EXPECT_EQ(journalRefusal(line), "journal j record c1: /mechanism/0: expected an object, got number");
  line = lineOf(condition());
  line["start_layer"] = -1;
  EXPECT_EQ(journalRefusal(line), "journal j record c1: /start_layer: expected an integer >= 0, got -1");
  // a block the document's own reader refuses is refused at its member's pointer
  line = lineOf(condition());
  line["mechanism"][0]["max_attention_logit"] = "big";
  EXPECT_EQ(formatRefusal(line), "journal j record c1: /mechanism/0/max_attention_logit: expected a number, got string");
  line = lineOf(condition());
  line["applied"]["vectors"][0]["changed"] = 1.5;
  EXPECT_EQ(formatRefusal(line), "journal j record c1: /applied/vectors/0/changed: expected an integer, got 1.5");
  line = lineOf(condition());
  line["op"] = "constant";
  EXPECT_EQ(formatRefusal(line), "journal j record c1: /op: expected an object, got string");
}

TEST(PassRecord, ANonFiniteSumIsRecordedAsNaNAsItReadsBack) {
  omn::eval::SequenceScores s;
  s.nll_sum = {1.0, std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(), std::nan("")};
  s.tokens = {1, 1, 1, 1};
  PassRecord r = control("control_open", 1.0);
  r.scores = omn::intervene::recordedScores(s);
  EXPECT_EQ(r.scores.nll_sum[0], 1.0);
  for (std::size_t i = 1; i < 4; ++i) EXPECT_TRUE(std::isnan(r.scores.nll_sum[i])) << i;
  // so the fresh record and the one a resume reads back give the same bytes
  const json line = lineOf(r);
  EXPECT_EQ(lineOf(readBack(line, true, {1, 1, 1, 1}, 0)), line);
}

TEST(PassRecord, AResumeReusesAConditionOnlyWhenItsGainsRestored) {
  PassRecord r = condition();
  EXPECT_TRUE(omn::intervene::reusable(lineOf(r)));
  r.restore.sha256 = std::string(64, 'c');
  EXPECT_FALSE(omn::intervene::reusable(lineOf(r)));
  EXPECT_TRUE(omn::intervene::reusable(lineOf(control("control_open", 1.0))));
  json damaged = lineOf(condition());
  damaged["restore"] = "yes";  // too damaged to tell: reused, so the reader refuses it at its key
  EXPECT_TRUE(omn::intervene::reusable(damaged));
}

// issue 50: a record spliced from another sweep's journal, one whose counts are not this sweep's
// rows', and one re-signed with a negative NLL sum are refused, naming the journal and the key
TEST(PassRecord, AJournaledRecordIsBoundToItsSweepAndItsRows) {
  const json line = lineOf(condition());
  EXPECT_EQ(line["sweep_sha256"], kSweep);
  const json other = omn::intervene::journalLine(condition(), std::string(64, 'e'));
  EXPECT_NE(journalRefusal(other).find("journal j record c1: /sweep_sha256: the record is another sweep's"), std::string::npos)
      << journalRefusal(other);
  json unbound = line;
  unbound.erase("sweep_sha256");
  EXPECT_EQ(journalRefusal(unbound), "journal j record c1: /sweep_sha256: required");
  try {  // a sweep over other rows: 3 rows, or other counts
    readBack(line, false, {3, 4, 5});
    ADD_FAILURE() << "a record of 4 rows read as one of 3";
  } catch (const omn::UsageError& e) {
    EXPECT_EQ(std::string(e.what()), "journal j record c1: /scores/tokens: expected one count per row of this sweep (3), got 4");
  }
  try {
    readBack(line, false, {3, 4, 7, 6});
    ADD_FAILURE() << "a record of other counts read back";
  } catch (const omn::UsageError& e) {
    EXPECT_EQ(std::string(e.what()), "journal j record c1: /scores/tokens/2: expected the 7 tokens row 2 scores, got 5");
  }
  json negative = line;
  negative["scores"]["nll_sum"][1] = -2.5;
  EXPECT_EQ(journalRefusal(negative), "journal j record c1: /scores/nll_sum/1: expected an NLL sum >= 0, got -2.5");
}

// A record re-signed without the parts its sweep's options give every pass (--mechanism's table,
// --kl's sums), or with parts the options do not give, is refused at the part: reused, it would
// leave a result with a null row of the table (or sums from nowhere) and exit 0.
TEST(PassRecord, AJournaledRecordHoldsThePartsItsSweepsOptionsGive) {
  json line = lineOf(condition());
  line["mechanism"] = nullptr;
  EXPECT_EQ(journalRefusal(line), "journal j record c1: /mechanism: expected one row per layer (1): this sweep runs with --mechanism");
  EXPECT_EQ(journalRefusal(lineOf(condition()), false, 2),
            "journal j record c1: /mechanism: expected one row per layer (2), got 1");
  EXPECT_EQ(journalRefusal(lineOf(condition()), false, 0),
            "journal j record c1: /mechanism: expected null: this sweep runs without --mechanism");
  line = lineOf(condition());
  line["mechanism"][0]["layer"] = 3;
  EXPECT_EQ(journalRefusal(line), "journal j record c1: /mechanism/0/layer: expected 0, got 3");
  // a row the struct would read with a member missing (null) or a layer truncated is its schema's to refuse
  line = lineOf(condition());
  line["mechanism"][0].erase("q_rms");
  EXPECT_NE(formatRefusal(line).find("journal j record c1: /mechanism/0"), std::string::npos) << formatRefusal(line);
  EXPECT_NE(formatRefusal(line).find("q_rms"), std::string::npos) << formatRefusal(line);
  line = lineOf(condition());
  line["mechanism"][0]["layer"] = 0.5;
  EXPECT_NE(formatRefusal(line).find("journal j record c1: /mechanism/0/layer"), std::string::npos) << formatRefusal(line);
  EXPECT_EQ(journalRefusal(lineOf(condition()), false, 1, true),
            "journal j record c1: /divergence: expected --kl's sums: this sweep runs with --kl");
  PassRecord with_kl = condition();
  with_kl.divergence = omn::documents::DivergenceSums{{0.5, 0.25, 0.0, 1.0}, {1, 1, 0, 1}, {0.0, 0.0, 0.0, 0.0}, {}, 0};
  EXPECT_EQ(lineOf(readBack(lineOf(with_kl), false, kRowTokens, 1, true)), lineOf(with_kl));
  EXPECT_EQ(journalRefusal(lineOf(with_kl)),
            "journal j record c1: /divergence: expected null: this sweep runs without --kl (or the record is the opening control, their "
            "reference)");
}
