// Every document kind as a struct (documents/<kind>_document.h): read from a real document (one the
// tool writes in the test, or one the repository publishes), the struct written back is the
// document again, member for member -- so the struct holds all of it and the report, which reads
// only the struct, misses nothing. A member that does not convert names the file and the JSON
// pointer.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <functional>
#include <string>

#include "omn/audit/profile_run.h"
#include "omn/documents/document.h"
#include "omn/documents/eval_document.h"
#include "omn/documents/intervention_document.h"
#include "omn/documents/layer_metrics.h"
#include "omn/documents/legacy_documents.h"
#include "omn/documents/profile_document.h"
#include "omn/documents/study_document.h"
#include "omn/documents/track_document.h"
#include "omn/documents/train_document.h"
#include "omn/errors.h"
#include "omn/io/json_document.h"

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
    const json doc = omn::audit::profileCheckpoint(r);
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
  json old = omn::audit::profileCheckpoint(r);
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
  for (std::string line; std::getline(log, line);) records.push_back(json::parse(line));
  const auto typed = omn::documents::TrainLogRecord::fromJson(records, "log.jsonl");
  ASSERT_EQ(typed.size(), records.size());
  ASSERT_TRUE(typed.front().eval.has_value());
  const json& layer0 = records.front()["eval"]["layers"][0];
  EXPECT_EQ(typed.front().eval->layers.at(0).metrics.max_attention_logit, layer0["max_attention_logit"].get<double>());
  EXPECT_EQ(typed.front().eval->layers.at(0).metrics.attention_entropy, layer0["attention_entropy"].get<double>());
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
