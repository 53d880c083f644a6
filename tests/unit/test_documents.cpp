// Every document kind as a struct (documents/<kind>_document.h): read from a real document (one the
// tool writes in the test, or one the repository publishes), the struct written back is the
// document again, member for member -- so the struct holds all of it and the report, which reads
// only the struct, misses nothing. A member that does not convert names the file and the JSON
// pointer.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <functional>
#include <limits>
#include <sstream>
#include <string>

#include "omn/audit/profile_run.h"
#include "omn/audit/regression.h"
#include "omn/audit/track.h"
#include "omn/documents/document.h"
#include "omn/documents/eval_document.h"
#include "omn/documents/intervention_document.h"
#include "omn/documents/layer_metrics.h"
#include "omn/documents/legacy_documents.h"
#include "omn/documents/profile_document.h"
#include "omn/documents/run_outcome.h"
#include "omn/documents/study_document.h"
#include "omn/documents/track_document.h"
#include "omn/documents/train_document.h"
#include "omn/errors.h"
#include "omn/intervene/pass_record.h"
#include "omn/intervene/results.h"
#include "omn/io/json_document.h"
#include "omn/json_pointer.h"
#include "omn/report/html.h"
#include "omn/report/plots.h"
#include "omn/report/profile_text.h"
#include "omn/report/track_text.h"

using nlohmann::json;
using omn::documents::DocumentKind;

namespace {

std::string repositoryFile(const std::string& path) { return std::string(OMN_SOURCE_DIR) + "/" + path; }

// A published document, checked and read as today's form, as every reader reads it.
json published(const std::string& path, DocumentKind kind) { return omn::documents::readDocument(repositoryFile(path), "test", {kind}).json; }

// The first member where `a` and `b` differ ("" when equal): a failing round trip names the place.
std::string firstDifference(const json& a, const json& b, const std::string& at = "") {
  if (a.is_object() && b.is_object()) {
    for (auto it = a.begin(); it != a.end(); ++it) {
      if (!b.contains(it.key())) return at + "/" + it.key() + " (lost)";
      const std::string d = firstDifference(it.value(), b[it.key()], at + "/" + it.key());
      if (!d.empty()) return d;
    }
    for (auto it = b.begin(); it != b.end(); ++it)
      if (!a.contains(it.key())) return at + "/" + it.key() + " (added)";
    return "";
  }
  if (a.is_array() && b.is_array() && a.size() == b.size()) {
    for (std::size_t i = 0; i < a.size(); ++i) {
      const std::string d = firstDifference(a[i], b[i], at + "/" + std::to_string(i));
      if (!d.empty()) return d;
    }
    return "";
  }
  return a == b ? "" : at + " (" + a.dump().substr(0, 80) + " != " + b.dump().substr(0, 80) + ")";
}

std::string formatError(const std::function<void()>& f) {
  try {
    f();
  } catch (const omn::FormatError& e) {
    return e.what();
  }
  return "(no FormatError)";
}

}  // namespace

TEST(Documents, AProfileReadsBackAsItsStructAndWritesBackTheSame) {
  for (const char* file : {"omn1-mini.pt", "interop/qwen3.safetensors"}) {
    omn::audit::ProfileRequest r;
    r.checkpoint = std::string(OMN_FIXTURES) + "/" + file;
    const json doc = omn::audit::profileCheckpoint(r).toJson();
    omn::documents::checkDocument(doc, file, {DocumentKind::profile});
    const auto p = omn::documents::ProfileDocument::fromJson(doc, file);
    EXPECT_EQ(firstDifference(doc, p.toJson()), "") << file;
    EXPECT_EQ(p.layers.size(), static_cast<std::size_t>(p.gains.n_layers));
    EXPECT_EQ(p.checkpoint.sha256, doc["checkpoint"]["sha256"].get<std::string>());
  }
}

TEST(Documents, AProfileFromBeforeCountRangesReadsAsToday) {
  omn::audit::ProfileRequest r;
  r.checkpoint = std::string(OMN_FIXTURES) + "/omn1-mini.pt";
  json old = omn::audit::profileCheckpoint(r).toJson();
  const json counts = old["statistics"]["counts"];
  old["statistics"].erase("counts");
  old["options"].erase("count_ranges");
  old["statistics"]["count_in_1_2"] = counts["[1,2]"]["count"];
  old["statistics"]["count_above_32"] = counts["(32,inf)"]["count"];
  omn::documents::acceptDocument(old, "old", {DocumentKind::profile});
  const auto p = omn::documents::ProfileDocument::fromJson(old, "old");
  ASSERT_EQ(p.statistics.counts.size(), 2u);
  EXPECT_EQ(p.statistics.counts.at("[1,2]").count, counts["[1,2]"]["count"].get<std::int64_t>());
  EXPECT_FALSE(p.statistics.counts.at("(32,inf)").hi.has_value());
}

TEST(Documents, ATrackReadsBackAsItsStructAndWritesBackTheSame) {
  const json doc = published("results/depth-12/after/qk-on_lr-5.623e-03_seed-0.track.json", DocumentKind::track);
  const auto t = omn::documents::TrackDocument::fromJson(doc, "track");
  EXPECT_EQ(firstDifference(doc, t.toJson()), "");
  ASSERT_FALSE(t.checkpoints.empty());
  EXPECT_EQ(t.summary.checkpoints, static_cast<std::int64_t>(t.checkpoints.size()));
}

TEST(Documents, ATrainingRunReadsBackAsItsStructAndWritesBackTheSame) {
  const json doc = published("demo/tiny-sotu/train.json", DocumentKind::train);
  const auto r = omn::documents::TrainDocument::fromJson(doc, "train.json");
  EXPECT_EQ(firstDifference(doc, r.toJson()), "");
  EXPECT_EQ(r.evals.size(), doc["evals"].size());
  EXPECT_EQ(r.clipGradNorm(), doc["config"]["values"]["clip_grad_norm"].get<double>());
  std::ifstream log(repositoryFile("demo/tiny-sotu/log.jsonl"));
  std::vector<json> records;
  std::vector<std::string> lines;
  for (std::string line; std::getline(log, line);) {
    records.push_back(json::parse(line));
    lines.push_back(line);
  }
  const auto typed = omn::documents::TrainLogRecord::fromJson(records, "log.jsonl");
  ASSERT_EQ(typed.size(), records.size());
  // the trainer writes each line from its record: the same bytes as the run's own log, line for line
  for (std::size_t i = 0; i < typed.size(); ++i) EXPECT_EQ(typed[i].toJson().dump(), lines[i]) << "line " << i + 1;
  ASSERT_TRUE(typed.front().eval.has_value());
  const json& layer0 = records.front()["eval"]["layers"][0];
  EXPECT_EQ(typed.front().eval->layers.at(0).metrics.max_attention_logit, layer0["max_attention_logit"].get<double>());
  EXPECT_EQ(typed.front().eval->layers.at(0).metrics.attention_entropy, layer0["attention_entropy"].get<double>());
}

// What a run came to is one record (documents/run_outcome.h): train.json writes it of its run, and
// each run of a study repeats it, the same members under the same names, read and written by one pair.
TEST(Documents, ARunsOutcomeIsOneRecordInTrainJsonAndInAStudy) {
  const json train = published("demo/tiny-sotu/train.json", DocumentKind::train);
  const json study = published("results/ablation-small/study.json", DocumentKind::study);
  std::vector<std::string> keys;
  for (const json* doc : {&train, &study["runs"][0]}) {
    const json written = doc->get<omn::documents::RunOutcome>();
    std::vector<std::string> mine;
    for (auto it = written.begin(); it != written.end(); ++it) {
      mine.push_back(it.key());
      EXPECT_EQ(it.value(), (*doc)[it.key()]) << it.key();
    }
    if (keys.empty()) keys = mine;
    EXPECT_EQ(mine, keys);  // the same members in both documents
  }
  EXPECT_NE(std::find(keys.begin(), keys.end(), "initial_train_loss"), keys.end());
  EXPECT_EQ(keys.size(), 11u);
}

TEST(Documents, AStudyReadsBackAsItsStructAndWritesBackTheSame) {
  for (const char* path : {"results/ablation-small/study.json", "results/depth-12/study.json"}) {
    const json doc = published(path, DocumentKind::study);
    const auto s = omn::documents::StudyDocument::fromJson(doc, path);
    EXPECT_EQ(firstDifference(doc, s.toJson()), "") << path;
    ASSERT_FALSE(s.runs.empty());
    // every metric the study recorded is in its row of the table, the others empty
    for (const auto& row : omn::documents::kLayerMetrics)
      EXPECT_EQ(s.runs[0].trajectory.eval.metric(row).has_value(), doc["runs"][0]["trajectory"]["eval"].contains(row.key)) << row.key;
  }
}

TEST(Documents, ASweepReadsBackAsItsStructAndWritesBackTheSame) {
  const char* path = "results/ablation-small/after/qk-on_lr-1.778e-03_seed-0.sweep.json";
  const json doc = published(path, DocumentKind::intervention);
  const auto r = omn::documents::InterventionDocument::fromJson(doc, path);
  EXPECT_EQ(firstDifference(doc, r.toJson()), "");
  ASSERT_FALSE(r.conditions.empty());
  const auto& c0 = r.conditions[0];
  EXPECT_EQ(c0.op.name, doc["conditions"][0]["op"]["op"].get<std::string>());
  EXPECT_EQ(c0.op.all_layers, doc["conditions"][0]["op"]["layers"] == "all");
  EXPECT_EQ(r.control.open.mechanism.has_value(), doc["mechanism"].get<bool>());  // --mechanism not asked: null
}

TEST(Documents, AnEvalResultReadsBackAsItsStructAndWritesBackTheSame) {
  const char* path = "results/ablation-small/after/qk-on_lr-1.778e-03_seed-0.eval.json";
  const json doc = published(path, DocumentKind::eval);
  const auto r = omn::documents::EvalDocument::fromJson(doc, path);
  EXPECT_EQ(firstDifference(doc, r.toJson()), "");
  EXPECT_EQ(r.result.sequences.nll_sum.size(), static_cast<std::size_t>(r.selection.num_seqs));
}

TEST(Documents, AMemberThatDoesNotConvertNamesTheFileAndPointer) {
  json doc = published("results/depth-12/after/qk-on_lr-5.623e-03_seed-0.track.json", DocumentKind::track);
  doc["checkpoints"][1]["layers"][2]["q"]["mean"] = "high";
  const std::string e = formatError([&] { omn::documents::TrackDocument::fromJson(doc, "track t.json"); });
  EXPECT_NE(e.find("track t.json: /checkpoints/1/layers/2/q/mean: "), std::string::npos) << e;
  doc.erase("summary");
  const std::string missing = formatError([&] { omn::documents::TrackDocument::fromJson(doc, "track t.json"); });
  EXPECT_NE(missing.find("track t.json: /summary: required"), std::string::npos) << missing;
}

// A part of a document kept in a record of its own (a journal line) is held to that part of the
// schema: a study's run without a member its document requires, or a sweep condition's op without
// its name, is refused naming the record and the member (the struct alone would read it as absent).
TEST(Documents, AJournaledPartIsCheckedAgainstItsPartOfTheSchema) {
  using omn::documents::checkPart;
  const json study = published("results/ablation-small/study.json", DocumentKind::study);
  json run = study["runs"][0];
  EXPECT_NO_THROW(checkPart(run, DocumentKind::study, "/properties/runs/items", "journal j line 2", ""));
  for (const char* member : {"final_heldout_loss", "divergence", "seconds"}) {
    json cut = run;
    cut.erase(member);
    const std::string e = formatError([&] { checkPart(cut, DocumentKind::study, "/properties/runs/items", "journal j line 2", ""); });
    EXPECT_NE(e.find("journal j line 2: /: Missing required property '" + std::string(member) + "'"), std::string::npos) << e;
  }
  run["lr"] = "0.001";
  const std::string typed = formatError([&] { checkPart(run, DocumentKind::study, "/properties/runs/items", "journal j line 2", ""); });
  EXPECT_NE(typed.find("journal j line 2: /lr: "), std::string::npos) << typed;

  const json sweep = published("results/ablation-small/after/qk-on_lr-1.778e-03_seed-0.sweep.json", DocumentKind::intervention);
  json op = sweep["conditions"][0]["op"];
  const char* at = "/properties/conditions/items/properties/op";
  EXPECT_NO_THROW(checkPart(op, DocumentKind::intervention, at, "journal j line 3 record c0", "/op"));
  op.erase("op");
  const std::string e = formatError([&] { checkPart(op, DocumentKind::intervention, at, "journal j line 3 record c0", "/op"); });
  EXPECT_NE(e.find("journal j line 3 record c0: /op"), std::string::npos) << e;
}

// ARCHITECTURE.md, "Adding ... a per-layer metric": a field and a row in documents/layer_metrics.h,
// its computation (test_documents_mechanism.cpp checks a pass measures every row), and its name in
// the schemas and docs that list the metrics -- this test fails until they do.
TEST(LayerMetrics, EveryRowIsInTheSchemasAndTheDocs) {
  auto file = [](const std::string& path) {
    std::ifstream in(repositoryFile(path));
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  };
  const json sweep = json::parse(file("docs/schema/intervention.schema.json"));
  const json study = json::parse(file("docs/schema/study.schema.json"));
  const json& mechanism = sweep["$defs"]["mechanism"]["items"]["properties"];
  const json& trajectory = study["$defs"]["run"]["properties"]["trajectory"]["properties"]["eval"];
  const std::string manifest_md = file("docs/manifest.md"), train_md = file("docs/train.md");
  std::size_t trained = 0;
  for (const auto& row : omn::documents::kLayerMetrics) {
    EXPECT_TRUE(mechanism.contains(row.key)) << row.key << " is not in intervention.schema.json's $defs/mechanism";
    EXPECT_NE(manifest_md.find(std::string("`") + row.key + "`"), std::string::npos) << row.key << " is not in docs/manifest.md";
    EXPECT_EQ(trajectory["properties"].contains(row.key), row.trained) << row.key << ": study.schema.json's trajectory.eval";
    if (!row.trained) continue;
    ++trained;
    EXPECT_NE(std::find(trajectory["required"].begin(), trajectory["required"].end(), row.key), trajectory["required"].end()) << row.key;
    EXPECT_NE(train_md.find(row.key), std::string::npos) << row.key << " is not in docs/train.md";
  }
  EXPECT_EQ(trained, omn::documents::trainedLayerMetrics().size());
  // the sweep's names are the trainer's: no row's key is one a sweep used to write
  for (const auto& [old_key, key] : omn::documents::kLegacyMetricNames) {
    EXPECT_TRUE(mechanism.contains(old_key));  // still read (older results)
    bool named = false;
    for (const auto& row : omn::documents::kLayerMetrics) named = named || std::string(row.key) == key;
    EXPECT_TRUE(named) << key;
  }
}

TEST(LayerMetrics, EveryRowIsWrittenAndReadUnderItsOneName) {
  omn::documents::LayerMetrics m;
  double v = 1.5;
  for (const auto& row : omn::documents::kLayerMetrics) m.*row.value = (v += 1);
  m.q_rms = std::nan("");
  json j = json::object();
  omn::documents::writeLayerMetrics(j, m);
  EXPECT_EQ(j.size(), omn::documents::kLayerMetrics.size());
  EXPECT_TRUE(j["q_rms"].is_null());  // not finite: null
  omn::documents::LayerMetrics back;
  omn::documents::readLayerMetrics(j, back);
  for (const auto& row : omn::documents::kLayerMetrics)
    if (std::string(row.key) != "q_rms") {
      EXPECT_EQ(back.*row.value, m.*row.value) << row.key;
    }
  EXPECT_TRUE(std::isnan(back.q_rms));
  // a pass's batches: the largest logit a maximum, the rest a mean weighted by the rows
  omn::documents::LayerMetrics pass, batch = m;
  omn::documents::foldBatch(pass, m, 1.0, true);
  batch.max_attention_logit = m.max_attention_logit - 1;
  batch.attention_entropy = m.attention_entropy + 2;
  omn::documents::foldBatch(pass, batch, 0.5, false);
  EXPECT_EQ(pass.max_attention_logit, m.max_attention_logit);
  EXPECT_EQ(pass.attention_entropy, m.attention_entropy + 1);
}

TEST(LayerMetrics, ASweepFromBeforeTheOneNameReadsAsToday) {
  json doc = published("results/ablation-small/after/qk-on_lr-1.778e-03_seed-0.sweep.json", DocumentKind::intervention);
  const json old_layer = {{"layer", 0}, {"mean_attention_entropy", 2.5}, {"max_logit", 7.0}, {"q_rms", 1.0}, {"k_rms", 1.25},
                          {"input_kurtosis", 3.0}};
  doc["mechanism"] = true;
  for (json* table : {&doc["control"]["open"]["mechanism"], &doc["control"]["close"]["mechanism"]}) *table = json::array({old_layer});
  for (auto& c : doc["conditions"]) c["mechanism"] = json::array({old_layer});
  omn::documents::acceptDocument(doc, "old sweep", {DocumentKind::intervention});
  const auto r = omn::documents::InterventionDocument::fromJson(doc, "old sweep");
  ASSERT_TRUE(r.control.open.mechanism.has_value());
  const omn::documents::LayerMetrics& m = r.conditions.at(0).mechanism->at(0).metrics;
  EXPECT_EQ(m.attention_entropy, 2.5);
  EXPECT_EQ(m.max_attention_logit, 7.0);
  EXPECT_EQ(m.k_rms, 1.25);
  EXPECT_FALSE(r.toJson()["conditions"][0]["mechanism"][0].contains("max_logit"));  // written under today's names
  json mixed = doc;  // one entry with both names is no form a sweep ever wrote
  mixed["conditions"][0]["mechanism"][0]["max_logit"] = 7.0;
  EXPECT_NE(formatError([&] { omn::documents::checkDocument(mixed, "mixed", {DocumentKind::intervention}); }).find("/conditions/0/mechanism/0"),
            std::string::npos);
}

// --- what a reader accepts is what the schema accepts ---------------------------------------------

namespace {

// A profile of the mini fixture with a regression verdict (against its perturbed copy), a track of
// both with drift: the optional blocks no published document holds.
json profileWithVerdict() {
  omn::audit::ProfileRequest r;
  r.checkpoint = std::string(OMN_FIXTURES) + "/omn1-mini-perturbed.pt";
  omn::documents::ProfileDocument doc = omn::audit::profileCheckpoint(r);
  r.checkpoint = std::string(OMN_FIXTURES) + "/omn1-mini.pt";
  const omn::documents::ProfileDocument baseline = omn::audit::profileCheckpoint(r);
  const auto rep = omn::audit::checkRegression(doc, baseline, std::nullopt, "mini.json");
  doc.regression = omn::audit::regressionVerdict(rep, "mini.json", "");
  return doc.toJson();
}

json trackWithDrift() {
  omn::audit::ProfileRequest r;
  r.checkpoint = std::string(OMN_FIXTURES) + "/omn1-mini.pt";
  omn::audit::TrackRequest t;
  t.inputs = {std::string(OMN_FIXTURES) + "/omn1-mini.pt", std::string(OMN_FIXTURES) + "/omn1-mini-perturbed.pt"};
  t.order = omn::audit::TrackOrder::Given;
  t.baseline = omn::audit::profileCheckpoint(r);
  t.baseline_path = "mini.json";
  return omn::audit::trackCheckpoints(t, t.inputs).toJson();
}

// `doc` with every array cut to its first `keep` elements: arrays walked in step stay in step (a
// sweep's per-sequence arrays, a study's trajectories), and the schema is checked in a fraction of
// the time.
json shortened(json doc, std::size_t keep) {
  if (doc.is_array() && doc.size() > keep) doc.erase(doc.begin() + static_cast<std::ptrdiff_t>(keep), doc.end());
  if (doc.is_structured())
    for (auto& v : doc) v = shortened(std::move(v), keep);
  return doc;
}

// Every member of `doc` (an array: its first and last element), with its JSON pointer; not inside
// the blocks the schemas leave free-form (a struct holds them as JSON), nor inside the provenance
// block every kind shares (the first case walks it).
void members(const json& node, const std::string& at, std::vector<std::string>& out, bool provenance) {
  static const std::vector<std::string> free_form = {"/checkpoint/metadata", "/model/config", "/model/weights", "/model/blas",
                                                     "/manifest/verbatim", "/options", "/config/values", "/optimizer/groups",
                                                     "/merged_from", "/tokens/offsets", "/segments"};
  if (std::find(free_form.begin(), free_form.end(), at) != free_form.end() || (at == "/provenance" && !provenance)) return;
  if (node.is_object()) {
    for (auto it = node.begin(); it != node.end(); ++it) {
      const std::string p = at + "/" + omn::escapePointerToken(it.key());
      out.push_back(p);
      members(it.value(), p, out, provenance);
    }
  } else if (node.is_array() && !node.empty()) {
    for (std::size_t i : {std::size_t{0}, node.size() - 1}) {
      out.push_back(at + "/" + std::to_string(i));
      members(node[i], at + "/" + std::to_string(i), out, provenance);
      if (node.size() == 1) break;
    }
  }
}

}  // namespace

// The schema is the one acceptance rule: each member of a document of every kind left out or
// replaced by null, a string, a fraction, a negative or positive integer, a boolean, an array or an
// object either fails the schema or is read by the kind's struct. A reader that asks for more than
// the schema promises turned a document the schema passed into an error (a null where the struct
// wants a value), or read it wrong (128.5 as 128, true as 1).
TEST(Documents, WhatTheSchemaAcceptsTheStructReads) {
  using omn::documents::EvalDocument;
  using omn::documents::InterventionDocument;
  using omn::documents::ProfileDocument;
  using omn::documents::StudyDocument;
  using omn::documents::TrackDocument;
  using omn::documents::TrainDocument;
  auto raw = [](const char* path, std::size_t keep = 3) { return shortened(omn::io::readJsonFile(repositoryFile(path), "test"), keep); };
  struct Case {
    std::string name;
    json doc;
    DocumentKind kind;
    std::function<void(const json&)> read;
  };
  const std::vector<Case> cases = {
      {"sweep (--mechanism)", raw("demo/tiny-sotu/results/sweep.json"), DocumentKind::intervention,
       [](const json& d) { InterventionDocument::fromJson(d, "t"); }},
      {"sweep (--kl)", raw("results/regime-c2048-g1/after/qk-on_lr-5.623e-03_seed-0.sweep.json"), DocumentKind::intervention,
       [](const json& d) { InterventionDocument::fromJson(d, "t"); }},
      {"eval", raw("results/ablation-small/after/qk-on_lr-1.778e-03_seed-0.eval.json"), DocumentKind::eval,
       [](const json& d) { EvalDocument::fromJson(d, "t"); }},
      {"study", raw("results/ablation-small-lr-1e-3/study.json"), DocumentKind::study, [](const json& d) { StudyDocument::fromJson(d, "t"); }},
      {"study (a shard)", raw("results/routing-gain-lr-0.1/cell-002.json"), DocumentKind::study,
       [](const json& d) { StudyDocument::fromJson(d, "t"); }},
      {"track", trackWithDrift(), DocumentKind::track, [](const json& d) { TrackDocument::fromJson(d, "t"); }},
      // whole: its shape rules tie the last checkpoint to last_checkpoint_step
      {"train", raw("demo/tiny-sotu/train.json", 1000), DocumentKind::train, [](const json& d) { TrainDocument::fromJson(d, "t"); }},
      {"profile", profileWithVerdict(), DocumentKind::profile, [](const json& d) { ProfileDocument::fromJson(d, "t"); }},
      {"profile (old)", raw("demo/tiny-sotu/results/profile.json"), DocumentKind::profile,
       [](const json& d) { ProfileDocument::fromJson(d, "t"); }},
  };
  const std::vector<std::pair<const char*, json>> replacements = {
      {"null", nullptr}, {"a string", "x"}, {"a fraction", 0.5}, {"-1", -1}, {"7", 7}, {"true", true}, {"[]", json::array()}, {"{}", json::object()}};
  for (const Case& c : cases) {
    std::vector<std::string> pointers;
    members(c.doc, "", pointers, &c == &cases.front());
    std::vector<std::string> misread;
    std::size_t accepted = 0;
    // `refusal`: what the struct must say instead of reading it, where the schema cannot refuse it
    auto attempt = [&](json d, const std::string& what, const std::string& refusal = "") {
      try {
        omn::documents::acceptDocument(d, "t", {c.kind});
      } catch (const omn::FormatError&) {
        return;  // the schema refuses it: so may the struct
      }
      ++accepted;
      try {
        c.read(d);
        if (!refusal.empty()) misread.push_back(what + ": read, not refused with \"" + refusal + "\"");
      } catch (const omn::FormatError& e) {
        if (refusal.empty() || std::string(e.what()).find(refusal) == std::string::npos) misread.push_back(what + ": " + e.what());
      }
    };
    json as_given = c.doc;
    ASSERT_NO_THROW(omn::documents::acceptDocument(as_given, "t", {c.kind})) << c.name;
    ASSERT_NO_THROW(c.read(as_given)) << c.name;
    for (const std::string& p : pointers) {
      if (p == "/schema") continue;
      const json::json_pointer ptr(p);
      if (c.doc.at(ptr.parent_pointer()).is_object()) {
        json d = c.doc;
        d.at(ptr.parent_pointer()).erase(ptr.back());
        attempt(std::move(d), p + " left out");
      }
      for (const auto& [name, value] : replacements) {
        json d = c.doc;
        d.at(ptr) = value;
        // a seed of an eval or a sweep is 0 to 2^64 - 1, and the validator reads an integer past
        // 2^63 as negative: the schema cannot bound it below (eval.schema.json $defs/seed), the
        // struct refuses a negative one
        const bool seed = ptr.back() == "seed" && value == -1 && (c.kind == DocumentKind::eval || c.kind == DocumentKind::intervention);
        attempt(std::move(d), p + " = " + name, seed ? p + ": expected an integer from 0 to 18446744073709551615, got -1" : "");
      }
    }
    EXPECT_GT(accepted, 0u) << c.name;
    std::string list;
    for (std::size_t i = 0; i < misread.size() && i < 40; ++i) list += "\n  " + misread[i];
    EXPECT_TRUE(misread.empty()) << c.name << ": " << misread.size() << " documents the schema accepts and the struct refuses:" << list;
  }
}

// An integer member is a whole number in its type's range, or an error naming it: nlohmann's own
// conversion had read 128.5 as 128, true as 1 and a seed past 2^63 as a negative number.
TEST(Documents, AnIntegerMemberIsAWholeNumberInItsRange) {
  const json doc = published("demo/tiny-sotu/results/sweep.json", DocumentKind::intervention);
  auto read = [](const json& d) { return omn::documents::InterventionDocument::fromJson(d, "s.json"); };
  auto error = [&](const std::string& pointer, const json& value) {
    json d = doc;
    d[json::json_pointer(pointer)] = value;
    return formatError([&] { read(d); });
  };
  EXPECT_NE(error("/conditions/0/result/groups/0/count", 128.5).find("s.json: /conditions/0/result/groups/0/count: expected an integer, got 128.5"),
            std::string::npos);
  EXPECT_NE(error("/selection/num_seqs", true).find("s.json: /selection/num_seqs: expected an integer, got boolean"), std::string::npos);
  EXPECT_NE(error("/conditions/0/vs_control/resamples", std::numeric_limits<std::uint64_t>::max())
                .find("/conditions/0/vs_control/resamples: expected an integer from -9223372036854775808 to 9223372036854775807, got 18446744073709551615"),
            std::string::npos);
  EXPECT_NE(error("/selection/seed", -1).find("/selection/seed: expected an integer from 0 to 18446744073709551615, got -1"), std::string::npos);
  EXPECT_NE(error("/selection/seed", 1e30).find("/selection/seed: expected an integer from 0"), std::string::npos);
  EXPECT_NE(error("/control/open/seconds", true).find("/control/open/seconds: expected a number, got boolean"), std::string::npos);
  // a whole number written as a float is that integer
  json whole = doc;
  whole["selection"]["num_seqs"] = static_cast<double>(doc["selection"]["num_seqs"].get<std::int64_t>());
  EXPECT_EQ(read(whole).selection.num_seqs, doc["selection"]["num_seqs"].get<std::int64_t>());
  // a seed is 64 bits unsigned: the largest reads and writes back as written
  json seeded = doc;
  const std::uint64_t top = std::numeric_limits<std::uint64_t>::max();
  seeded["selection"]["seed"] = top;
  seeded["conditions"][0]["vs_control"]["seed"] = top;
  seeded["control"]["open"]["result"]["perplexity_ci"]["seed"] = top;
  EXPECT_NO_THROW(omn::documents::checkDocument(seeded, "s.json", {DocumentKind::intervention}));  // a seed past 2^63 is one the tool writes
  EXPECT_EQ(firstDifference(seeded, read(seeded).toJson()), "");
  json study = published("results/ablation-tiny/study.json", DocumentKind::study);
  study["grid"]["seeds"][0] = top;
  for (auto& run : study["runs"]) run["seed"] = top;
  const auto s = omn::documents::StudyDocument::fromJson(study, "study.json");
  EXPECT_EQ(firstDifference(study, s.toJson()), "");
  const auto figures = omn::report::studyFigures(s);  // the first seed's runs, by its number
  const auto lossFigure = std::find_if(figures.begin(), figures.end(), [](const auto& f) { return f.name == "study-train-loss.svg"; });
  ASSERT_NE(lossFigure, figures.end());
  EXPECT_NE(lossFigure->svg.find("Seed 18446744073709551615"), std::string::npos);
  // where the writer writes an integer the schema says so: a fraction fails it first
  json fraction = doc;
  fraction["conditions"][0]["result"]["groups"][0]["first"] = 0.5;
  EXPECT_NE(formatError([&] { omn::documents::checkDocument(fraction, "s.json", {DocumentKind::intervention}); })
                .find("/conditions/0/result/groups/0/first"),
            std::string::npos);
}

// A sweep whose closing control scored a sequence infinite where the opening one did not: the
// largest difference is infinite, written null (nlohmann wrote inf as null too, which the struct
// then refused), and read back and shown as inf.
TEST(Documents, AControlThatDiffersWithoutBoundReadsBack) {
  const json doc = published("demo/tiny-sotu/results/sweep.json", DocumentKind::intervention);
  const auto shard = omn::documents::InterventionDocument::fromJson(doc, "sweep.json");
  omn::intervene::ResultsInput in;
  in.base = shard;
  in.control_open = omn::intervene::controlFromResult(shard.control.open, "control_open");
  in.control_close = omn::intervene::controlFromResult(shard.control.close, "control_close");
  in.control_close.scores.nll_sum.at(1) = INFINITY;
  for (const auto& c : shard.conditions) in.conditions.push_back(omn::intervene::conditionFromResult(c));
  in.bootstrap.resamples = 200;
  in.family_size = in.conditions.size();
  in.exact_control = false;
  const omn::documents::InterventionDocument assembled = omn::intervene::assembleResults(in);
  EXPECT_FALSE(assembled.control.max_abs_nll_difference);  // infinite: empty
  std::ostringstream table;
  omn::intervene::printResultsTable(table, assembled);
  EXPECT_NE(table.str().find("differs from the opening one by up to inf"), std::string::npos) << table.str();
  json written = json::parse(assembled.toJson().dump());  // as the file holds it
  EXPECT_TRUE(written["control"]["max_abs_nll_difference"].is_null());
  omn::documents::acceptDocument(written, "s.json", {DocumentKind::intervention});
  omn::report::ReportInput report;
  report.sweep = omn::documents::InterventionDocument::fromJson(written, "s.json");
  const auto warnings = omn::report::reportWarnings(report);
  EXPECT_NE(std::find(warnings.begin(), warnings.end(), "The closing control differs from the opening one (largest NLL difference inf)."),
            warnings.end());
  EXPECT_EQ(firstDifference(written, report.sweep->toJson()), "");
}

// A model config without its preset name: refused naming the member, never shown as "".
TEST(Documents, AModelWithoutItsPresetNameIsRefused) {
  json doc = published("results/ablation-small/after/qk-on_lr-1.778e-03_seed-0.eval.json", DocumentKind::eval);
  omn::report::ReportInput in;
  in.eval = omn::documents::EvalDocument::fromJson(doc, "e.json");
  const std::string model_row = doc["model"]["config"]["preset"].get<std::string>() + ", " + doc["model"]["attention"].get<std::string>();
  EXPECT_NE(omn::report::htmlReport(in).find(model_row), std::string::npos) << model_row;
  doc["model"]["config"].erase("preset");
  EXPECT_NE(formatError([&] { omn::documents::checkDocument(doc, "e.json", {DocumentKind::eval}); }).find("/model/config"), std::string::npos);
  EXPECT_NE(formatError([&] { omn::documents::EvalDocument::fromJson(doc, "e.json"); }).find("e.json: /model/config/preset: required"),
            std::string::npos);
  doc["model"]["config"]["preset"] = nullptr;
  EXPECT_NE(formatError([&] { omn::documents::checkDocument(doc, "e.json", {DocumentKind::eval}); }).find("/model/config"), std::string::npos);
}

// --- the report of a document as the struct holds it ----------------------------------------------

// The sweep's --mechanism figures in the report in the order they always came: the attention
// entropy, then the largest logit (the metric table lists the logit first, for the study's figures).
TEST(DocumentsReport, TheSweepsMechanismFiguresComeInTheirOrder) {
  const json doc = published("demo/tiny-sotu/results/sweep.json", DocumentKind::intervention);
  const auto r = omn::documents::InterventionDocument::fromJson(doc, "sweep.json");
  std::vector<std::string> names;
  for (const auto& f : omn::report::sweepFigures(r)) names.push_back(f.name);
  const auto entropy = std::find(names.begin(), names.end(), "sweep-mechanism-entropy.svg");
  const auto logit = std::find(names.begin(), names.end(), "sweep-mechanism-max-logit.svg");
  ASSERT_NE(entropy, names.end());
  ASSERT_NE(logit, names.end());
  EXPECT_LT(entropy, logit);
  EXPECT_EQ(logit, names.end() - 1);
  // and the study's: the largest logit, the entropy, the kurtosis
  const auto s = omn::documents::StudyDocument::fromJson(published("results/ablation-tiny/study.json", DocumentKind::study), "study.json");
  names.clear();
  for (const auto& f : omn::report::studyFigures(s)) names.push_back(f.name);
  const std::vector<std::string> study_order = {"study-max-logit.svg", "study-entropy.svg", "study-kurtosis.svg"};
  std::vector<std::string> drawn;
  for (const auto& n : names)
    if (std::find(study_order.begin(), study_order.end(), n) != study_order.end()) drawn.push_back(n);
  EXPECT_EQ(drawn, study_order);
}

// A histogram bin without an edge (the schema lets lo and hi be null: the first and last bins are
// unbounded) is not where the threshold line goes; it had stopped the figure with "bad optional access".
TEST(DocumentsReport, AHistogramBinWithoutAnEdgeHoldsNoThreshold) {
  json doc = published("demo/tiny-sotu/results/profile.json", DocumentKind::profile);
  doc.erase("distribution");  // a profile without one: the configured bins are drawn
  doc["options"]["threshold"] = 1.5;             // not the default: the line is drawn
  auto histogram = [](const json& d) {
    for (const auto& f : omn::report::profileFigures(omn::documents::ProfileDocument::fromJson(d, "p.json")))
      if (f.name == "profile-histogram.svg") return f.svg;
    return std::string();
  };
  const std::string drawn = histogram(doc);
  ASSERT_NE(drawn.find("class=\"threshold\""), std::string::npos);  // in [1,2]
  for (auto& b : doc["histogram"])
    if (b["label"] == "[0,1)") b["lo"] = nullptr, b["hi"] = nullptr;
  omn::documents::acceptDocument(doc, "p.json", {DocumentKind::profile});
  std::string without_edges;
  ASSERT_NO_THROW(without_edges = histogram(doc));
  EXPECT_EQ(without_edges, drawn);  // the bins are drawn by their labels, the line where it was
}

// The steepest change between layers as it was printed: a `to` the document leaves null is "null".
TEST(DocumentsReport, TheSteepestChangePrintsAnEmptyEndAsNull) {
  json doc = published("demo/tiny-sotu/results/profile.json", DocumentKind::profile);
  auto text = [](const json& d) {
    std::ostringstream os;
    omn::report::printProfile(os, omn::documents::ProfileDocument::fromJson(d, "p.json"));
    return os.str();
  };
  EXPECT_NE(text(doc).find("steepest change in layer mean: layer 0 -> 1 ("), std::string::npos);
  doc["steepest_change"]["all"]["to"] = nullptr;
  omn::documents::checkDocument(doc, "p.json", {DocumentKind::profile});
  EXPECT_NE(text(doc).find("steepest change in layer mean: layer 0 -> null ("), std::string::npos) << text(doc);
}

namespace {

// A copy of the Qwen3 interop fixture whose layer 0 Q and K gains are all NaN.
std::string qwenWithNanGains(const std::string& dir) {
  std::ifstream in(std::string(OMN_FIXTURES) + "/interop/qwen3.safetensors", std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::uint64_t n = 0;
  std::memcpy(&n, bytes.data(), sizeof n);  // little-endian, as safetensors writes it
  const json header = json::parse(bytes.substr(8, n));
  const std::size_t data = 8 + n;
  for (const char* name : {"model.layers.0.self_attn.q_norm.weight", "model.layers.0.self_attn.k_norm.weight"}) {
    const json& t = header.at(name);
    EXPECT_EQ(t.at("dtype"), "F32");
    const float nan = std::numeric_limits<float>::quiet_NaN();
    for (std::size_t o = t.at("data_offsets")[0].get<std::size_t>(); o < t.at("data_offsets")[1].get<std::size_t>(); o += sizeof nan)
      std::memcpy(&bytes[data + o], &nan, sizeof nan);
  }
  const std::string path = dir + "/qwen3-nan.safetensors";
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

}  // namespace

// A track of a checkpoint whose layer has no finite gain: its Q and K statistics are null, as track
// writes them, and the document reads back into the report and the figures (the schema had required
// numbers there, so plot and report refused track's own output).
TEST(DocumentsReport, ATrackOfNanGainsReadsBackIntoTheReport) {
  const std::string dir = testing::TempDir() + "/omn-track-nan-" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  const std::string ckpt = qwenWithNanGains(dir);
  omn::audit::TrackRequest t;
  t.inputs = {std::string(OMN_FIXTURES) + "/interop/qwen3.safetensors", ckpt};
  t.order = omn::audit::TrackOrder::Given;
  json doc = json::parse(omn::audit::trackCheckpoints(t, t.inputs).toJson().dump());  // as written
  ASSERT_TRUE(doc["checkpoints"][1]["layers"][0]["q"]["mean"].is_null());
  omn::documents::acceptDocument(doc, "track.json", {DocumentKind::track});
  omn::report::ReportInput in;
  in.track = omn::documents::TrackDocument::fromJson(doc, "track.json");
  EXPECT_FALSE(in.track->checkpoints[1].layers[0].q.mean.has_value());
  EXPECT_TRUE(in.track->checkpoints[0].layers[0].q.mean.has_value());
  EXPECT_EQ(firstDifference(doc, in.track->toJson()), "");
  EXPECT_FALSE(omn::report::trackFigures(*in.track).empty());
  std::ostringstream text;
  omn::report::printTrack(text, *in.track);
  EXPECT_FALSE(omn::report::trackCsv(*in.track).empty());
  EXPECT_NE(omn::report::htmlReport(in).find("id=\"track\""), std::string::npos);
  EXPECT_FALSE(omn::report::markdownReport(in, "figures").empty());
  std::filesystem::remove_all(dir);
}
