// runStudy (study/study_run.h) in C++ on a micro grid: one arm (QK-norm on) × 2 learning rates × 1
// seed of a 2-layer, d-16 model trained 4 steps on a synthetic corpus. The document's cells, runs
// (each its own train.json's numbers), arm and best-LR bookkeeping recomputed here from the runs'
// files; and a study stopped inside its second run, resumed: the finished run reused (its files
// untouched, no step of it trained again), the run in flight continued from its checkpoint, and the
// document the uninterrupted study wrote, number for number.
#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>

#include "../support/token_files.h"
#include "omn/documents/study_document.h"
#include "omn/documents/train_document.h"
#include "omn/errors.h"
#include "omn/io/journal.h"
#include "omn/io/sha256.h"
#include "omn/output/json_file.h"
#include "omn/study/study_run.h"

namespace fs = std::filesystem;
using nlohmann::json;
using omn::documents::StudyDocument;
using omn::documents::StudyRun;

namespace {

std::string studyFileBytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::size_t studyJournalLines(const std::string& path) {
  std::ifstream in(path);
  std::size_t n = 0;
  for (std::string line; std::getline(in, line);) n += !line.empty();
  return n;
}

// A run's record without what differs between two trainings of the same cell: its wall time, its
// directory and its train.json's digest (train.json holds timestamps)
json runNumbers(const StudyRun& r) {
  json run = r;
  for (const char* k : {"seconds", "dir", "train_json_sha256"}) run.erase(k);
  return run;
}

class StudyRunTest : public ::testing::Test {
 protected:
  // The corpus, the base config and the uninterrupted study, once for every test here.
  static void SetUpTestSuite() {
    root_ = new fs::path(fs::temp_directory_path() / ("omn-test-study-run-" + std::to_string(::getpid())));
    fs::remove_all(*root_);
    fs::create_directories(*root_ / "corpus");
    const fs::path c = *root_ / "corpus";
    const json corpus = {{"schema", "omn-audit/corpus@1"},
                         {"train", {{"path", "train.u16"}, {"sha256", omn::test::writeBytes(c / "train.u16", omn::test::tokenBytes(6000, 1))}}},
                         {"heldout", {{"path", "heldout.u16"}, {"sha256", omn::test::writeBytes(c / "heldout.u16", omn::test::tokenBytes(1000, 2))}}},
                         {"tokenizer", {{"path", "tokenizer.model"}, {"sha256", omn::test::writeBytes(c / "tokenizer.model", "synthetic")},
                                        {"vocab_size", 64}, {"eos_id", 0}}},
                         {"token_format", "u16"},
                         {"unigram", {{"heldout_cross_entropy", 4.0}}}};
    std::ofstream(c / "corpus.json") << corpus.dump(2);
    const json base = {{"schema", "omn-audit/train-config@1"},
                       {"name", "micro"},
                       {"corpus", "corpus"},
                       {"model", {{"n_layers", 2}, {"d_model", 16}, {"n_heads", 2}, {"n_kv_heads", 1}, {"head_dim", 8},
                                  {"ffn_hidden", 32}, {"qk_norm", true}}},
                       {"optimizer", {{"kind", "adamw"}, {"lr", 0.003}}},
                       {"schedule", {{"warmup_steps", 1}, {"decay", "cosine"}, {"min_lr_ratio", 0.1}}},
                       {"steps", 4}, {"batch_size", 4}, {"seq_len", 16}, {"seed", 3}, {"log_every", 1},
                       {"eval", {{"every", 2}, {"rows", 4}}}, {"checkpoint_every", 2}, {"loss_thresholds", {4.0}}};
    std::ofstream(*root_ / "base.json") << base.dump(2);
    whole_ = new StudyDocument(runIn("whole", {}));
  }
  static void TearDownTestSuite() {
    delete whole_;
    fs::remove_all(*root_);
    delete root_;
  }

  static std::string manifestIn(const std::string& name) {
    fs::create_directories(*root_ / name);
    const json m = {{"schema", "omn-audit/study-manifest@1"},
                    {"description", "micro study"},
                    {"base", "../base.json"},
                    {"grid", {{"qk_norm", {true}}, {"lr", {0.003, 0.03}}, {"seeds", {7}}}},
                    {"output", {{"json", "study.json"}, {"runs", "runs"}}}};
    const fs::path p = *root_ / name / "study-manifest.json";
    std::ofstream(p) << m.dump(1);
    return p.string();
  }
  static StudyDocument runIn(const std::string& name, omn::study::StudyOptions o) {
    o.threads = 1;
    return omn::study::runStudy(omn::study::loadStudyManifest(manifestIn(name)), o);
  }

  // The study run in `name`, stopped at the `ask`-th step asked about once its first run is journaled
  // (its journal then holds the header and that run); the journal's path.
  static std::string stopAfterFirstRun(const std::string& name, int ask) {
    const std::string journal = (*root_ / name / "study.json.journal").string();
    omn::study::StudyOptions stop;
    int asked = 0;
    stop.stop = [&] { return studyJournalLines(journal) >= 2 && ++asked == ask; };
    EXPECT_THROW(runIn(name, stop), omn::Interrupted);
    return journal;
  }

  static fs::path* root_;
  static StudyDocument* whole_;
};
fs::path* StudyRunTest::root_ = nullptr;
StudyDocument* StudyRunTest::whole_ = nullptr;

}  // namespace

TEST_F(StudyRunTest, CellsRunsArmsAndTheBestLearningRate) {
  const StudyDocument& doc = *whole_;
  const fs::path dir = *root_ / "whole";
  EXPECT_TRUE(fs::exists(dir / "study.json"));
  EXPECT_EQ(omn::output::readJsonFile((dir / "study.json").string(), "study"), doc.toJson()) << "the document written is not the one returned";
  EXPECT_FALSE(fs::exists(dir / "study.json.journal")) << "the journal outlived the document";
  EXPECT_EQ(json(doc.grid), json::parse(R"({"arms": ["qk-on"], "lrs": [0.003, 0.03], "seeds": [7], "cells": 2})"));
  EXPECT_FALSE(doc.shard);
  ASSERT_EQ(doc.runs.size(), 2u);
  const std::vector<double> lrs = {0.003, 0.03};
  std::vector<double> capped;
  double best_lr = NAN, best_loss = NAN;
  for (std::size_t i = 0; i < 2; ++i) {
    const StudyRun& r = doc.runs[i];
    EXPECT_EQ(r.index, static_cast<std::int64_t>(i));
    EXPECT_EQ(r.arm, "qk-on");
    EXPECT_EQ(r.lr, lrs[i]);
    EXPECT_EQ(r.seed, 7u);
    EXPECT_TRUE(r.qk_norm);
    // the run's own files: its train.json (whose digest the record holds) and its config; the run's
    // outcome is its train.json's, member for member
    const fs::path run_dir = dir / r.dir;
    const json train_json = omn::output::readJsonFile((run_dir / "train.json").string(), "record");
    const auto train = omn::documents::TrainDocument::fromJson(train_json, "train.json");
    EXPECT_EQ(r.train_json_sha256, omn::io::sha256File((run_dir / "train.json").string()));
    EXPECT_EQ(train.config.values["optimizer"]["lr"], lrs[i]);
    EXPECT_EQ(train.config.values["seed"], 7);
    EXPECT_EQ(json(static_cast<const omn::documents::RunOutcome&>(r)), json(static_cast<const omn::documents::RunOutcome&>(train))) << r.id;
    EXPECT_EQ(r.seconds, train.timing->seconds);
    ASSERT_TRUE(train.final_checkpoint);
    EXPECT_EQ(r.final_checkpoint_sha256, train.final_checkpoint->sha256);
    EXPECT_EQ(r.status, "finished");
    EXPECT_EQ(r.steps_done, 4);
    EXPECT_TRUE(fs::exists(dir / "runs" / (r.id + ".config.json")));
    // the trajectory: every logged step's loss, every evaluation (steps 0, 2, 4) with a value per layer
    EXPECT_EQ(r.trajectory.train.step, (std::vector<std::int64_t>{1, 2, 3, 4}));
    EXPECT_EQ(r.trajectory.eval.step, (std::vector<std::int64_t>{0, 2, 4}));
    for (const auto& row : omn::documents::kLayerMetrics) {
      ASSERT_EQ(r.trajectory.eval.metric(row).has_value(), row.trained) << row.key;
      if (row.trained) {
        EXPECT_EQ(r.trajectory.eval.metric(row)->at(0).size(), 2u) << row.key;
      }
    }
    // Wortsman et al.'s capped loss, and the best LR among the stable runs (below L0, not diverged)
    const double l0 = *r.initial_loss, loss = *r.final_heldout_loss;
    capped.push_back(std::min(loss, l0));
    if (!r.diverged && loss < l0 && (std::isnan(best_loss) || loss < best_loss)) {
      best_loss = loss;
      best_lr = lrs[i];
    }
  }
  EXPECT_FALSE(std::isnan(best_lr)) << "neither learning rate trained below L0 in 4 steps";
  ASSERT_EQ(doc.arms.size(), 1u);
  const omn::documents::StudyArm& arm = doc.arms[0];
  EXPECT_EQ(arm.arm, "qk-on");
  EXPECT_EQ(arm.runs, 2);
  EXPECT_EQ(arm.diverged, 0);
  EXPECT_TRUE(arm.complete);
  EXPECT_EQ(arm.best_lr, best_lr);
  EXPECT_EQ(arm.best_loss, best_loss);
  ASSERT_EQ(arm.per_lr.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(arm.per_lr[i].lr, lrs[i]);
    EXPECT_EQ(arm.per_lr[i].runs, std::vector<std::string>{doc.runs[i].id});
  }
  // mean over the grid of the capped losses minus their minimum (one seed: no averaging)
  const double sensitivity = (capped[0] + capped[1]) / 2 - std::min(capped[0], capped[1]);
  ASSERT_TRUE(arm.lr_sensitivity);
  EXPECT_DOUBLE_EQ(*arm.lr_sensitivity, sensitivity);
  EXPECT_TRUE(doc.comparison.empty());  // one arm: nothing to pair
}

TEST_F(StudyRunTest, AResumedStudyReusesItsFinishedRuns) {
  // stopped inside the second run, after its third step (its step-2 checkpoint written)
  const std::string journal = stopAfterFirstRun("stopped", 4);
  EXPECT_EQ(studyJournalLines(journal), 2u);  // the header and the first run
  EXPECT_FALSE(fs::exists(*root_ / "stopped" / "study.json"));
  const fs::path first = *root_ / "stopped" / "runs" / whole_->runs[0].id;
  const std::string first_train = studyFileBytes(first / "train.json"), first_log = studyFileBytes(first / "log.jsonl");
  const auto first_time = fs::last_write_time(first / "train.json");

  // resumed: the first run reused as it is; the second continued from step 2 (2 steps asked about)
  omn::study::StudyOptions resume;
  resume.resume = true;
  int resumed_asks = 0;
  resume.stop = [&] { return ++resumed_asks < 0; };
  const StudyDocument doc = runIn("stopped", resume);
  EXPECT_EQ(resumed_asks, 2) << "the resumed study trained other steps than the second run's last two";
  EXPECT_EQ(studyFileBytes(first / "train.json"), first_train);
  EXPECT_EQ(studyFileBytes(first / "log.jsonl"), first_log);
  EXPECT_EQ(fs::last_write_time(first / "train.json"), first_time);
  EXPECT_FALSE(fs::exists(journal));

  // the document the uninterrupted study wrote: every run's numbers (final weights bitwise), the arm
  ASSERT_EQ(doc.runs.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) EXPECT_EQ(runNumbers(doc.runs[i]), runNumbers(whole_->runs[i])) << i;
  EXPECT_EQ(json(doc.arms), json(whole_->arms));
  EXPECT_EQ(json(doc.grid), json(whole_->grid));
}

// A journaled run re-signed with another learning rate or loss (its checksum made anew, as anyone can)
// is not reused: its record must be what the cell and its train.json give, refused naming the
// journal's line and the member (it took an arm's best LR with it); the unedited journal resumes.
TEST_F(StudyRunTest, AJournaledRunIsReusedOnlyAsItsCellAndTrainJsonGiveIt) {
  const std::string journal = stopAfterFirstRun("forged", 1);
  ASSERT_EQ(studyJournalLines(journal), 2u);
  const std::string kept = studyFileBytes(journal);
  // the journal written anew with its one run's record edited: each line signed by the journal itself
  auto forge = [&](const std::function<void(json&)>& edit) {
    json header, record;
    {
      const omn::io::Journal j = omn::io::Journal::resume(journal);
      header = j.header();
      record = j.records().at(0);
    }
    edit(record);
    fs::remove(journal);
    omn::io::Journal::create(journal, header).append(record);
  };
  omn::study::StudyOptions resume;
  resume.resume = true;
  auto refusal = [&] {
    try {
      runIn("forged", resume);
    } catch (const omn::IntegrityError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  const std::string line = "journal " + journal + ": line 2 record " + whole_->runs[0].id + ": ";
  forge([](json& r) { r["lr"] = 0.03; });
  EXPECT_EQ(refusal(), line + "/lr: the journal says 0.03, the cell and its train.json give 0.003; "
                              "remove the journal (and the run) to train it again");
  forge([](json& r) { r["lr"] = 0.003; r["final_heldout_loss"] = 0.5; });
  EXPECT_EQ(refusal().rfind(line + "/final_heldout_loss: the journal says 0.5, the cell and its train.json give ", 0), 0u) << refusal();
  // a series of another length is refused at the first element one side lacks (not at "/-", which
  // names no element, nor at the last of several extra ones)
  const auto& loss = whole_->runs[0].trajectory.train.loss;
  ASSERT_EQ(loss.size(), 4u);
  std::ofstream(journal, std::ios::binary | std::ios::trunc) << kept;
  forge([](json& r) { r["trajectory"]["train"]["loss"].erase(3); });
  EXPECT_EQ(refusal(), line + "/trajectory/train/loss/3: the journal says nothing, the cell and its train.json give " + json(loss[3].value()).dump() +
                           "; remove the journal (and the run) to train it again");
  std::ofstream(journal, std::ios::binary | std::ios::trunc) << kept;
  forge([](json& r) {
    r["trajectory"]["train"]["loss"].push_back(1.5);
    r["trajectory"]["train"]["loss"].push_back(2.5);
  });
  EXPECT_EQ(refusal(), line + "/trajectory/train/loss/4: the journal says 1.5, the cell and its train.json give nothing; "
                              "remove the journal (and the run) to train it again");
  EXPECT_FALSE(fs::exists(*root_ / "forged" / "study.json"));
  std::ofstream(journal, std::ios::binary | std::ios::trunc) << kept;  // the journal as the study left it
  const StudyDocument doc = runIn("forged", resume);
  ASSERT_EQ(doc.runs.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) EXPECT_EQ(runNumbers(doc.runs[i]), runNumbers(whole_->runs[i])) << i;
}


// The study resumed through another spelling of its output (a symlinked directory, its journal the
// same file) reuses its journaled run: the run's directory is the one journaled, however named (a
// refusal would have told the user to remove a finished run).
TEST_F(StudyRunTest, AJournaledRunIsReusedThroughAnotherSpellingOfTheOutput) {
  const std::string journal = stopAfterFirstRun("spelled", 1);
  ASSERT_EQ(studyJournalLines(journal), 2u);
  fs::create_directory_symlink(*root_ / "spelled", *root_ / "spelled-link");
  omn::study::StudyOptions resume;
  resume.resume = true;
  resume.output_json = (*root_ / "spelled-link" / "study.json").string();
  const StudyDocument doc = runIn("spelled", resume);
  ASSERT_EQ(doc.runs.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) EXPECT_EQ(runNumbers(doc.runs[i]), runNumbers(whole_->runs[i])) << i;
  for (const StudyRun& r : doc.runs)
    EXPECT_TRUE(fs::equivalent(*root_ / "spelled-link" / r.dir, *root_ / "spelled" / "runs" / r.id)) << r.dir;
}
