// The trainer's pieces in C++: which optimizer updates which parameter (and with what decay and
// rate), AdamW's and Newton–Schulz's arithmetic against their closed forms, the Trainer's steps one
// by one, and a run stopped and resumed equal to an uninterrupted one bit for bit (final.pt's
// SHA-256), with a flipped byte in the checkpoint refused before a step is taken. A synthetic
// corpus of 64 token ids; every run takes under a second.
#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "../support/token_files.h"
#include "omn/documents/document.h"
#include "omn/errors.h"
#include "omn/io/sha256.h"
#include "omn/output/json_file.h"
#include "omn/train/optimizer_groups.h"
#include "omn/train/training_loop.h"

namespace fs = std::filesystem;
using nlohmann::json;
using namespace omn::train;

namespace {

using omn::test::tokenBytes;
using omn::test::writeBytes;

class TrainerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("omn-test-train-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "corpus");
    const json corpus = {{"schema", "omn-audit/corpus@1"},
                         {"train", {{"path", "train.u16"}, {"sha256", writeBytes(dir_ / "corpus/train.u16", tokenBytes(20000, 1))}}},
                         {"heldout", {{"path", "heldout.u16"}, {"sha256", writeBytes(dir_ / "corpus/heldout.u16", tokenBytes(2000, 2))}}},
                         {"tokenizer", {{"path", "tokenizer.model"}, {"sha256", writeBytes(dir_ / "corpus/tokenizer.model", "synthetic")},
                                        {"vocab_size", 64}, {"eos_id", 0}}},
                         {"token_format", "u16"},
                         {"unigram", {{"heldout_cross_entropy", 4.0}}}};
    std::ofstream(dir_ / "corpus/corpus.json") << corpus.dump(2);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A two-layer model, 6 steps, a record every step, evaluations at 3 and 6, checkpoints at 2 and 4.
  TrainConfig config(const std::string& optimizer = "muon+adamw") {
    json opt = {{"kind", optimizer}, {"lr", 0.01}, {"weight_decay", 0.1}, {"qk_gain_lr_scale", 3.0}, {"qk_gain_weight_decay", 0.5}};
    if (optimizer == "muon+adamw") opt["muon_lr"] = 0.02;  // (refused under "adamw")
    const json j = {{"schema", "omn-audit/train-config@1"},
                    {"name", "unit"},
                    {"corpus", "corpus"},
                    {"model", {{"n_layers", 2}, {"d_model", 32}, {"n_heads", 2}, {"n_kv_heads", 1}, {"head_dim", 16},
                               {"ffn_hidden", 64}, {"qk_norm", true}}},
                    {"optimizer", opt},
                    {"schedule", {{"warmup_steps", 2}, {"decay", "cosine"}, {"min_lr_ratio", 0.1}}},
                    {"steps", 6}, {"batch_size", 4}, {"seq_len", 32}, {"seed", 3}, {"log_every", 1},
                    {"eval", {{"every", 3}, {"rows", 4}}}, {"checkpoint_every", 2}, {"loss_thresholds", {4.5, 1.0}}};
    const fs::path p = dir_ / ("config-" + optimizer + ".json");
    std::ofstream(p) << j.dump(2);
    return loadTrainConfig(p.string());
  }
  TrainOptions options(const std::string& out) {
    TrainOptions o;
    o.config = config();
    o.out_dir = (dir_ / out).string();
    o.threads = 1;
    return o;
  }
  fs::path dir_;
};

}  // namespace

TEST_F(TrainerTest, OptimizerGroupsFollowTheParameterRoles) {
  for (const std::string kind : {"muon+adamw", "adamw"}) {
    const TrainConfig c = config(kind);
    const TrainableModel m = initModel(c, 64, 0, at::kCPU);
    const OptimizerGroups g(m.params, c.optimizer);
    std::size_t hidden = 0;
    for (const Parameter& p : m.params) hidden += p.hidden_matrix;
    ASSERT_GT(hidden, 0u);
    EXPECT_EQ(g.muonNames().size(), kind == "adamw" ? 0u : hidden) << kind;
    EXPECT_EQ(g.adamwNames().size() + g.muonNames().size(), m.params.size()) << kind;
    for (std::size_t i = 0; i < g.adamwNames().size(); ++i) {
      const auto p = std::find_if(m.params.begin(), m.params.end(), [&](const Parameter& q) { return q.name == g.adamwNames()[i]; });
      ASSERT_NE(p, m.params.end());
      EXPECT_EQ(g.adamwDecay()[i], p->qk_gain ? 0.5 : p->matrix ? 0.1 : 0.0) << p->name;
      EXPECT_EQ(g.adamwLrScale()[i], p->qk_gain ? 3.0 : 1.0) << p->name;
      if (kind == "muon+adamw") {
        EXPECT_FALSE(p->hidden_matrix) << p->name;
      }
    }
  }
}

TEST(Optimizers, AdamWFirstStepIsTheClosedForm) {
  // step 1: m̂ = g, v̂ = g², so p ← p·(1 − lr·wd) − lr·g/(|g| + eps)
  at::Tensor p = at::tensor({1.0, -2.0, 0.5}, at::kDouble).set_requires_grad(true);
  p.mutable_grad() = at::tensor({0.5, -1.0, 2.0}, at::kDouble);
  AdamW adamw(0.9, 0.95, 1e-8);
  adamw.step({p}, {0.1}, {2.0}, 0.01);
  const double lr = 0.02, wd = 0.1;
  const std::vector<double> p0{1.0, -2.0, 0.5}, g{0.5, -1.0, 2.0};
  for (int i = 0; i < 3; ++i)
    EXPECT_NEAR(p[i].item<double>(), p0[i] * (1 - lr * wd) - lr * g[i] / (std::abs(g[i]) + 1e-8), 1e-12) << i;
  EXPECT_EQ(adamw.steps(), 1);
}

TEST(Optimizers, NewtonSchulzOrthogonalises) {
  at::manual_seed(0);
  for (const auto& shape : {std::vector<std::int64_t>{16, 8}, std::vector<std::int64_t>{8, 24}}) {
    const at::Tensor x = newtonSchulz5(at::randn(shape), 5);
    EXPECT_EQ(x.sizes().vec(), shape);
    const at::Tensor s = at::linalg_svdvals(x.to(at::kDouble));
    // the quintic's fixed band (KellerJordan/Muon): every singular value pushed into about [0.7, 1.2]
    EXPECT_GT(s.min().item<double>(), 0.5);
    EXPECT_LT(s.max().item<double>(), 1.3);
  }
}

// The clip's norm in one reduction against the per-parameter reference (they differ only in the
// order of P float64 additions of non-negative terms: within P units of float64 roundoff, relative),
// and the clip against torch.nn.utils.clip_grad_norm_ written out in ATen as PyTorch 1.13 computes it
// (float32 norms of each gradient, the norm of those, the coefficient clamped at 1): within the
// float32 roundoff of the longest norm (n_max + P terms). tests/parity/check_train.py checks the
// logged norm and the step it clips against torch itself.
TEST(GradientClip, OneReductionEqualsThePerParameterNormAndTorchsClip) {
  at::manual_seed(5);
  const std::vector<std::vector<std::int64_t>> shapes = {{64, 32}, {32}, {4096, 16}, {16}, {128, 64}, {1}, {33, 7}};
  std::vector<at::Tensor> grads;
  std::int64_t n_max = 0;
  for (const auto& shape : shapes) {
    grads.push_back(at::randn(shape) * 0.01);
    n_max = std::max(n_max, grads.back().numel());
  }
  const double P = static_cast<double>(grads.size());
  const double fast = globalGradNorm(grads), ref = globalGradNormPerParameter(grads);
  EXPECT_LE(std::abs(fast - ref), (P + 1) * std::ldexp(1.0, -53) * ref) << fast << " vs " << ref;
  EXPECT_GT(fast, 0.0);

  std::vector<at::Tensor> ours, torchs;
  for (const at::Tensor& g : grads) ours.push_back(g.clone()), torchs.push_back(g.clone());
  const double max_norm = 0.25 * fast;  // clipped: the coefficient about a quarter
  const double norm = clipGradNorm(ours, max_norm);
  EXPECT_EQ(norm, fast);  // the norm before clipping, as the log records it
  std::vector<at::Tensor> norms;
  for (const at::Tensor& g : torchs) norms.push_back(at::norm(g, 2));
  const at::Tensor total = at::norm(at::stack(norms), 2);
  const at::Tensor coef = at::clamp_max(max_norm / (total + 1e-6), 1.0);
  for (at::Tensor& g : torchs) g.mul_(coef);
  const double bound = (static_cast<double>(n_max) + P + 2) * std::ldexp(1.0, -24);
  EXPECT_LE(std::abs(total.item<double>() - norm), bound * norm);
  for (std::size_t i = 0; i < ours.size(); ++i) {
    const double diff = (ours[i] - torchs[i]).abs().max().item<double>();
    EXPECT_LE(diff, bound * torchs[i].abs().max().item<double>()) << i;
    EXPECT_FALSE(at::equal(ours[i], grads[i])) << i;  // clipped
  }
  // below the threshold (and with 0: no clipping) every gradient is left bit for bit
  for (const double m : {2.0 * fast, 0.0}) {
    std::vector<at::Tensor> kept;
    for (const at::Tensor& g : grads) kept.push_back(g.clone());
    clipGradNorm(kept, m);
    for (std::size_t i = 0; i < kept.size(); ++i) EXPECT_TRUE(at::equal(kept[i], grads[i])) << i;
  }
}

TEST_F(TrainerTest, StepsOneByOne) {
  const TrainOptions o = options("steps");
  Trainer t(o);
  EXPECT_EQ(t.step(), 0);
  const at::Tensor before = t.model().params.front().value.detach().clone();
  const Trainer::StepResult r = t.trainStep();
  EXPECT_EQ(t.step(), 1);
  EXPECT_EQ(r.batch.tokens.size(), 4u * 32u);
  EXPECT_NEAR(r.loss, std::log(64.0), 0.5);  // an untrained model: about uniform over the vocabulary
  EXPECT_GT(r.grad_norm, 0.0);
  EXPECT_DOUBLE_EQ(r.lr_multiplier, lrMultiplier(o.config.schedule, 1, 6));
  EXPECT_FALSE(at::equal(before, t.model().params.front().value.detach()));  // the step updated the weights
  for (const Parameter& p : t.model().params) EXPECT_EQ(p.value.grad().abs().max().item<double>(), 0.0) << p.name;  // zeroed
  // the same seed in another directory: the same batch and the same loss, bit for bit
  const TrainOptions o2 = options("steps-again");
  Trainer t2(o2);
  const Trainer::StepResult r2 = t2.trainStep();
  EXPECT_EQ(r2.batch.offsets, r.batch.offsets);
  EXPECT_EQ(r2.batch.tokens, r.batch.tokens);
  EXPECT_EQ(r2.loss, r.loss);
  EXPECT_EQ(r2.grad_norm, r.grad_norm);
}

TEST_F(TrainerTest, AStoppedRunResumesBitwise) {
  const TrainOptions whole = options("whole");
  const omn::documents::TrainDocument a = runTraining(whole);
  ASSERT_EQ(a.status, "finished");
  ASSERT_TRUE(a.final_train_loss && a.initial_train_loss);
  EXPECT_LT(*a.final_train_loss, *a.initial_train_loss);

  TrainOptions part = options("part");
  int asked = 0;
  part.stop = [&] { return ++asked == 6; };  // asked before each step: stop after step 5 (checkpoint of step 4)
  EXPECT_THROW(runTraining(part), omn::Interrupted);
  TrainOptions resumed = options("part");
  resumed.resume = true;
  const omn::documents::TrainDocument b = runTraining(resumed);
  ASSERT_EQ(b.status, "finished");
  EXPECT_EQ(omn::io::sha256File(whole.out_dir + "/final.pt"), omn::io::sha256File(part.out_dir + "/final.pt"));
  ASSERT_TRUE(b.final_checkpoint);
  EXPECT_EQ(b.final_checkpoint->sha256, omn::io::sha256File(part.out_dir + "/final.pt"));
  // the run's outcome (losses, thresholds, steps) and its evaluations: the uninterrupted run's
  EXPECT_EQ(json(static_cast<const omn::documents::RunOutcome&>(a)), json(static_cast<const omn::documents::RunOutcome&>(b)));
  EXPECT_EQ(json(a.evals), json(b.evals));
  ASSERT_EQ(a.checkpoints.size(), b.checkpoints.size());
  for (std::size_t i = 0; i < a.checkpoints.size(); ++i) EXPECT_EQ(a.checkpoints[i].sha256, b.checkpoints[i].sha256) << i;

  // the uninterrupted run is one segment; the resumed one two: steps 1-5 (stopped), then 5-6 from
  // the checkpoint of step 4 (step 5 trained twice), each timed, and the run's timing over both
  ASSERT_TRUE(a.segments && b.segments && b.timing);
  ASSERT_EQ(a.segments->size(), 1u);
  EXPECT_EQ(a.segments->at(0).start_step, 0);
  EXPECT_EQ(a.segments->at(0).end_step, 6);
  EXPECT_EQ(a.segments->at(0).end, "finished");
  ASSERT_EQ(b.segments->size(), 2u);
  const omn::train::RunSegment& s0 = b.segments->at(0);
  const omn::train::RunSegment& s1 = b.segments->at(1);
  EXPECT_EQ(s0.start_step, 0);
  EXPECT_EQ(s0.end_step, 5);
  EXPECT_EQ(s0.end, "interrupted");
  EXPECT_EQ(s1.start_step, 4);
  EXPECT_EQ(s1.end_step, 6);
  EXPECT_EQ(s1.end, "finished");
  const std::int64_t per_step = 4 * 32;
  EXPECT_EQ(s0.tokens, 5 * per_step);
  EXPECT_EQ(s1.tokens, 2 * per_step);
  EXPECT_EQ(b.timing->tokens_trained, 7 * per_step);
  EXPECT_EQ(b.timing->segments, 2);
  ASSERT_TRUE(s0.seconds && s1.seconds);
  EXPECT_EQ(b.timing->seconds, *s0.seconds + *s1.seconds);
  EXPECT_GT(*s0.seconds, 0.0);
  // each segment's host and build as the provenance block records them (here one process: the same)
  for (const omn::train::RunSegment* s : {&s0, &s1}) {
    EXPECT_EQ(s->cpu, b.provenance.host->cpu);
    EXPECT_EQ(s->openblas, b.provenance.libraries->openblas);
    EXPECT_EQ(s->git_revision, b.provenance.git_revision);
    EXPECT_EQ(s->model_code_fingerprint, b.provenance.model_code_fingerprint);
    EXPECT_EQ(s->threads, 1);
    EXPECT_TRUE(s->bf16_products == "native" || s->bf16_products == "fp32-accumulate") << s->bf16_products.value_or("(none)");
  }
  omn::documents::checkDocument(b.toJson(), "train.json", {omn::documents::DocumentKind::train});  // the schema holds them
}

TEST_F(TrainerTest, AResumeOnAnotherBuildKeepsEachSegmentsOwn) {
  TrainOptions part = options("build");
  int asked = 0;
  part.stop = [&] { return ++asked == 4; };  // stop after step 3 (checkpoint of step 2)
  EXPECT_THROW(runTraining(part), omn::Interrupted);
  // as if another build on another CPU's kernels had trained the first segment
  const std::string record = part.out_dir + "/train.json";
  json doc = omn::output::readJsonFile(record, "record");
  ASSERT_EQ(doc["segments"].size(), 1u);
  EXPECT_EQ(doc["segments"][0]["end"], "interrupted");
  EXPECT_EQ(doc["segments"][0]["end_step"], 3);  // stopped past its checkpoint of step 2: recorded
  EXPECT_EQ(doc["steps_done"], 3);
  doc["segments"][0]["openblas"] = "OpenBLAS 0.3.21 DYNAMIC_ARCH Haswell";
  doc["segments"][0]["git_revision"] = "2cca08a";
  doc["segments"][0]["cpu"] = "AMD EPYC";
  omn::output::writeFileAtomic(record, doc.dump());
  TrainOptions resumed = options("build");
  resumed.resume = true;
  const json b = runTraining(resumed).toJson();
  ASSERT_EQ(b["segments"].size(), 2u);
  EXPECT_EQ(b["segments"][0]["openblas"], "OpenBLAS 0.3.21 DYNAMIC_ARCH Haswell");
  EXPECT_EQ(b["segments"][0]["git_revision"], "2cca08a");
  EXPECT_EQ(b["segments"][0]["cpu"], "AMD EPYC");
  EXPECT_EQ(b["segments"][1]["openblas"], b["provenance"]["libraries"]["openblas"]);
  EXPECT_EQ(b["segments"][1]["git_revision"], b["provenance"]["git_revision"]);
  EXPECT_EQ(b["segments"][1]["start_step"], 2);
  // a record whose segments do not reach the checkpoint it resumes from is refused before a step
  TrainOptions again = options("build-2");
  int asked2 = 0;
  again.stop = [&] { return ++asked2 == 4; };
  EXPECT_THROW(runTraining(again), omn::Interrupted);
  json broken = omn::output::readJsonFile(again.out_dir + "/train.json", "record");
  broken["segments"][0]["end_step"] = 1;
  broken["segments"][0]["tokens"] = 4 * 32;  // one step's
  omn::output::writeFileAtomic(again.out_dir + "/train.json", broken.dump());
  again.stop = nullptr;
  again.resume = true;
  try {
    runTraining(again);
    ADD_FAILURE() << "accepted a record whose segments end before its last checkpoint";
  } catch (const omn::FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("/segments/0/end_step: expected at least /last_checkpoint_step 2"), std::string::npos) << e.what();
  }
}

// train.json is written at the start, at each checkpoint and once at the end (the record with its
// timing): counted as the renames onto train.json that inotify sees while the run trains.
TEST_F(TrainerTest, TheRecordIsWrittenOnceAtTheEnd) {
  const TrainOptions o = options("once");
  fs::create_directories(o.out_dir);
  const int fd = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  ASSERT_GE(fd, 0);
  // with the creation of each write's temporary between them: inotify merges an event identical to the one before
  ASSERT_GE(::inotify_add_watch(fd, o.out_dir.c_str(), IN_CREATE | IN_MOVED_TO), 0);
  const omn::documents::TrainDocument doc = runTraining(o);
  int writes = 0;
  alignas(inotify_event) char buf[1 << 16];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;)
    for (char* p = buf; p < buf + n;) {
      const auto* ev = reinterpret_cast<const inotify_event*>(p);
      if ((ev->mask & IN_MOVED_TO) && ev->len > 0 && std::string(ev->name) == "train.json") ++writes;
      p += sizeof(inotify_event) + ev->len;
    }
  ::close(fd);
  // before step 0's evaluation, then the checkpoints of steps 0, 2 and 4, then the end: 5
  EXPECT_EQ(writes, 5);
  EXPECT_EQ(omn::output::readJsonFile(o.out_dir + "/train.json", "record"), doc.toJson());  // what it returned is what it wrote
  EXPECT_TRUE(doc.timing);
}

TEST_F(TrainerTest, AFlippedCheckpointByteIsRefused) {
  TrainOptions part = options("flip");
  int asked = 0;
  part.stop = [&] { return ++asked == 4; };  // stop after step 3: the last checkpoint is step 2's
  EXPECT_THROW(runTraining(part), omn::Interrupted);
  const std::string ck = part.out_dir + "/checkpoints/step-000002.pt";
  std::string bytes = omn::output::readJsonFile(part.out_dir + "/train.json", "record").dump();  // the record as it was
  {
    std::fstream f(ck, std::ios::in | std::ios::out | std::ios::binary);
    const auto at = static_cast<std::streamoff>(fs::file_size(ck) / 2);
    f.seekg(at);
    const char c = static_cast<char>(f.get());
    f.seekp(at);
    f.put(static_cast<char>(c ^ 0x01));
  }
  const std::string flipped = omn::io::sha256File(ck);
  TrainOptions resumed = options("flip");
  resumed.resume = true;
  EXPECT_THROW(runTraining(resumed), omn::IntegrityError);
  EXPECT_EQ(omn::io::sha256File(ck), flipped);  // nothing rewritten
  EXPECT_EQ(omn::output::readJsonFile(part.out_dir + "/train.json", "record").dump(), bytes);
  EXPECT_FALSE(fs::exists(part.out_dir + "/final.pt"));
}
