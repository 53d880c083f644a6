// The study's statistics and journal without training anything: Student-t quantiles against
// published table values, LR sensitivity on a hand-made grid, and the journal's integrity rules.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <fstream>

#include "omn/errors.h"
#include "omn/io/journal.h"
#include "omn/study/analysis.h"
#include "omn/train/train_config.h"
#include "../support/temp_file.h"

using nlohmann::json;

TEST(StudentT, MatchesPublishedTables) {
  // two-sided 95% critical values (e.g. NIST/SEMATECH e-Handbook, table 1.3.6.7.2)
  EXPECT_NEAR(omn::study::studentTQuantile(0.975, 1), 12.706, 5e-4);
  EXPECT_NEAR(omn::study::studentTQuantile(0.975, 2), 4.303, 5e-4);
  EXPECT_NEAR(omn::study::studentTQuantile(0.975, 5), 2.571, 5e-4);
  EXPECT_NEAR(omn::study::studentTQuantile(0.975, 30), 2.042, 5e-4);
  EXPECT_NEAR(omn::study::studentTQuantile(0.995, 10), 3.169, 5e-4);
  EXPECT_NEAR(omn::study::studentTQuantile(0.5, 3), 0.0, 1e-7);
  EXPECT_THROW(omn::study::studentTQuantile(1.0, 3), omn::UsageError);
}

namespace {
using omn::documents::StudyGrid;
using omn::documents::StudyRun;

StudyRun run(const std::string& arm, bool qk, double lr, std::uint64_t seed, double l0, std::optional<double> loss, bool diverged) {
  StudyRun r;
  r.id = arm + std::to_string(lr) + "-" + std::to_string(seed);
  r.arm = arm;
  r.qk_norm = qk;
  r.n_layers = 2;
  r.optimizer = "adamw";
  r.lr = lr;
  r.seed = seed;
  r.initial_loss = l0;
  r.final_heldout_loss = loss;
  r.diverged = diverged;
  return r;
}
StudyGrid grid(std::vector<std::string> arms, std::vector<double> lrs, std::vector<std::uint64_t> seeds) {
  const auto cells = static_cast<std::int64_t>(arms.size() * lrs.size() * seeds.size());
  return {std::move(arms), std::move(lrs), std::move(seeds), cells};
}
}  // namespace

TEST(StudyAnalysis, WortsmanSensitivityLargestStableAndPairedDifferences) {
  const StudyGrid g = grid({"qk-on", "qk-off"}, {0.001, 0.01, 0.1}, {0, 1});
  std::vector<StudyRun> runs = {
      run("qk-on", true, 0.001, 0, 8, 5.0, false), run("qk-on", true, 0.001, 1, 8, 5.2, false),
      run("qk-on", true, 0.01, 0, 8, 4.0, false),  run("qk-on", true, 0.01, 1, 8, 4.4, false),
      run("qk-on", true, 0.1, 0, 8, 9.0, false),   run("qk-on", true, 0.1, 1, 8, 4.6, false),  // 9 > L0: capped, unstable
      run("qk-off", false, 0.001, 0, 8, 5.1, false), run("qk-off", false, 0.001, 1, 8, 5.1, false),
      run("qk-off", false, 0.01, 0, 8, 4.5, false),  run("qk-off", false, 0.01, 1, 8, 4.7, false),
      run("qk-off", false, 0.1, 0, 8, std::nullopt, true), run("qk-off", false, 0.1, 1, 8, 50.0, true),
  };
  const auto arms = omn::study::analyseArms(runs, g, 0.95);
  ASSERT_EQ(arms.size(), 2u);
  // qk-on: capped means 5.1, 4.2, (8 + 4.6)/2 = 6.3 → mean 5.2, min 4.2 → 1.0
  EXPECT_NEAR(arms[0].lr_sensitivity.value(), 1.0, 1e-12);
  EXPECT_EQ(arms[0].largest_stable_lr, 0.01);  // one seed at 0.1 ended above L0
  EXPECT_EQ(arms[0].best_lr, 0.01);
  EXPECT_NEAR(arms[0].best_loss.value(), 4.2, 1e-12);
  // qk-off: 5.1, 4.6, 8 (diverged counts as L0) → mean 5.9, min 4.6 → 1.3
  EXPECT_NEAR(arms[1].lr_sensitivity.value(), 1.3, 1e-12);
  EXPECT_EQ(arms[1].diverged, 2);
  EXPECT_EQ(arms[1].largest_stable_lr, 0.01);
  const auto cmp = omn::study::compareArms(runs, arms, 0.95);
  ASSERT_EQ(cmp.size(), 1u);
  const omn::documents::SeriesSummary& d = cmp[0].per_lr[1].difference;  // lr 0.01: on − off = −0.5, −0.3
  EXPECT_NEAR(d.mean.value(), -0.4, 1e-12);
  const double half = 12.706204736174698 * std::sqrt(0.02) / std::sqrt(2.0);  // t(0.975, 1) · sd / √n
  EXPECT_NEAR(d.ci_high.value(), -0.4 + half, 1e-6);
  EXPECT_EQ(cmp[0].per_lr[2].difference.n, 0);  // both off runs diverged: no pair
  EXPECT_EQ(cmp[0].per_lr[2].diverged.off, 2);
}

TEST(StudyAnalysis, NoSensitivityWithoutAGridOrWithoutTraining) {
  // every run diverged: capped losses all equal L0, and mean − min = 0 would read "insensitive"
  std::vector<StudyRun> runs = {run("qk-off", false, 0.1, 0, 8, std::nullopt, true), run("qk-off", false, 1.0, 0, 8, 40.0, true)};
  auto arms = omn::study::analyseArms(runs, grid({"qk-off"}, {0.1, 1.0}, {0}), 0.95);
  EXPECT_FALSE(arms[0].lr_sensitivity);
  EXPECT_NE(arms[0].lr_sensitivity_note.value().find("below the loss at initialisation"), std::string::npos);
  EXPECT_FALSE(arms[0].largest_stable_lr);
  EXPECT_FALSE(arms[0].lr_sensitivity_by_seed[0].lr_sensitivity);
  // one learning rate: nothing to be sensitive to
  arms = omn::study::analyseArms({run("qk-on", true, 0.01, 0, 8, 4.0, false)}, grid({"qk-on"}, {0.01}, {0}), 0.95);
  EXPECT_FALSE(arms[0].lr_sensitivity);
  EXPECT_EQ(arms[0].largest_stable_lr, 0.01);
  // a missing cell: incomplete, no sensitivity
  arms = omn::study::analyseArms({run("qk-on", true, 0.001, 0, 8, 5.0, false)}, grid({"qk-on"}, {0.001, 0.01}, {0}), 0.95);
  EXPECT_FALSE(arms[0].complete);
  EXPECT_FALSE(arms[0].lr_sensitivity);
  // the note is always recorded, null when the sensitivity was measured
  EXPECT_TRUE(json(arms[0]).contains("lr_sensitivity_note"));
}

TEST(StudyAnalysis, EachRunIsCappedBeforeTheSeedsAreAveraged) {
  // seeds ending at 4 and 12 with L0 = 8: the learning rate's value is (4 + 8) / 2 = 6
  std::vector<StudyRun> runs = {run("qk-on", true, 0.01, 0, 8, 5.0, false), run("qk-on", true, 0.01, 1, 8, 5.0, false),
                                run("qk-on", true, 0.1, 0, 8, 4.0, false), run("qk-on", true, 0.1, 1, 8, 12.0, false)};
  const auto arms = omn::study::analyseArms(runs, grid({"qk-on"}, {0.01, 0.1}, {0, 1}), 0.95);
  EXPECT_NEAR(arms[0].per_lr[1].capped_mean.value(), 6.0, 1e-12);
  EXPECT_NEAR(arms[0].lr_sensitivity.value(), (5.0 + 6.0) / 2 - 5.0, 1e-12);
  EXPECT_EQ(arms[0].largest_stable_lr, 0.01);  // seed 1 at 0.1 ended above L0
}

TEST(Journal, ChecksumTornTailAndLock) {
  omn::test::TempDir dir;
  const std::string path = dir.path() + "/j.journal";
  struct {
    const std::string& p;
    const std::string& path() const { return p; }
  } f{path};
  {
    omn::io::Journal j = omn::io::Journal::create(f.path(), {{"schema", "omn-audit/journal@1"}, {"k", 1}});
    j.append({{"id", "a"}, {"v", 1.5}});
    EXPECT_THROW(omn::io::Journal::resume(f.path()), omn::UsageError);  // locked by j
  }
  { std::ofstream(f.path(), std::ios::app) << "{\"id\": \"b\", \"v\""; }  // torn by a kill mid-write
  {
    omn::io::Journal j = omn::io::Journal::resume(f.path());
    ASSERT_EQ(j.records().size(), 1u);
    EXPECT_EQ(j.records()[0]["v"].get<double>(), 1.5);
    j.append({{"id", "c"}});
  }
  EXPECT_EQ(omn::io::Journal::resume(f.path()).records().size(), 2u);  // the torn tail was cut, not appended after
  std::string text;
  {
    std::ifstream in(f.path());
    text.assign(std::istreambuf_iterator<char>(in), {});
  }
  text.replace(text.find("1.5"), 3, "9.5");
  { std::ofstream(f.path()) << text; }
  try {
    omn::io::Journal::resume(f.path());
    FAIL() << "a doctored record was trusted";
  } catch (const omn::FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("line 2: checksum mismatch"), std::string::npos) << e.what();
  }
}

// The optimizer kinds are one table (train_config.h): the study manifest's schema and the training
// record's schema list the same names.
TEST(TrainConfig, SchemasListTheOptimizerKindsOfTheTable) {
  auto load = [](const char* f) { return nlohmann::json::parse(std::ifstream(std::string(OMN_SOURCE_DIR) + "/docs/schema/" + f)); };
  std::vector<std::string> kinds;
  for (const auto& k : omn::train::kOptimizerKinds) kinds.push_back(k.name);
  std::sort(kinds.begin(), kinds.end());
  auto sorted = [](std::vector<std::string> v) {
    std::sort(v.begin(), v.end());
    return v;
  };
  const auto study = load("study-manifest.schema.json");
  const auto train = load("train.schema.json");
  EXPECT_EQ(sorted(study.at("properties").at("grid").at("properties").at("optimizer").at("oneOf")[0].at("enum")), kinds);
  EXPECT_EQ(sorted(train.at("properties").at("optimizer").at("properties").at("kind").at("enum")), kinds);
  EXPECT_EQ(omn::io::parseChoice(omn::train::kDecays, "linear", "/schedule/decay"), omn::train::Decay::Linear);
}

TEST(Journal, OpenForRunReplacesAHeaderOnlyJournalAndNamesAnInUseOne) {
  omn::test::TempDir dir;
  const std::string path = dir.path() + "/j.journal";
  const nlohmann::json header = {{"schema", "omn-audit/journal@1"}, {"k", 1}};
  bool resumed = true;
  { omn::io::Journal j = omn::io::Journal::openForRun(path, header, false, "run", resumed); }  // a run that failed at once
  EXPECT_FALSE(resumed);
  {
    // header only: a fresh run takes its place, no --resume needed
    omn::io::Journal j = omn::io::Journal::openForRun(path, header, false, "run", resumed);
    EXPECT_FALSE(resumed);
    j.append({{"id", "a"}});
    // held by a running process: "in use", not "interrupted"
    try {
      omn::io::Journal::openForRun(path, header, false, "run", resumed);
      ADD_FAILURE() << "a journal in use was opened";
    } catch (const omn::UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("in use by another omn-audit process"), std::string::npos) << e.what();
    }
  }
  // with a finished record: refused without --resume, naming how many; continued with it
  try {
    omn::io::Journal::openForRun(path, header, false, "study", resumed);
    ADD_FAILURE() << "an interrupted journal was replaced";
  } catch (const omn::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("of an interrupted study exists (1 finished record(s))"), std::string::npos) << e.what();
  }
  omn::io::Journal j = omn::io::Journal::openForRun(path, header, true, "study", resumed);
  EXPECT_TRUE(resumed);
  EXPECT_EQ(j.records().size(), 1u);
}

// The resuming the sweep and the study share: a changed identity field is refused by name, records
// the reuse rule rejects run again, the others come back by id.
TEST(Journal, ResumeJournalMatchesIdentityAndReusesByRule) {
  omn::test::TempDir dir;
  const std::string path = dir.path() + "/r.journal";
  const nlohmann::json header = {{"schema", "omn-audit/journal@1"}, {"manifest_sha256", "aa"}, {"shard", nullptr}};
  {
    omn::io::ResumedJournal r = omn::io::resumeJournal(path, header, false, "run", {"manifest_sha256"});
    EXPECT_FALSE(r.resumed);
    EXPECT_TRUE(r.done.empty());
    r.journal.append({{"id", "c1"}, {"restore", {{"ok", true}}}});
    r.journal.append({{"id", "c2"}, {"restore", {{"ok", false}}}});
  }
  nlohmann::json changed = header;
  changed["manifest_sha256"] = "bb";
  try {
    omn::io::resumeJournal(path, changed, true, "run", {"manifest_sha256", "shard"});
    ADD_FAILURE() << "a journal of other inputs was resumed";
  } catch (const omn::UsageError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("cannot resume from " + path), std::string::npos) << m;
    EXPECT_NE(m.find("manifest_sha256"), std::string::npos) << m;
  }
  const auto ok = [](const nlohmann::json& rec) { return rec["restore"].value("ok", false); };
  omn::io::ResumedJournal r = omn::io::resumeJournal(path, header, true, "run", {"manifest_sha256", "shard"}, ok);
  EXPECT_TRUE(r.resumed);
  ASSERT_NE(r.find("c1"), nullptr);
  EXPECT_EQ(r.find("c2"), nullptr);  // its restore failed: it runs again
  EXPECT_EQ(r.done.size(), 1u);
  EXPECT_EQ(r.where("c1"), "journal " + path + ": line 2");  // a message about a record names its line (the header is line 1)
}
