// The Evaluator's modes (eval/evaluator.h) on the tiny 2-layer model of tests/support/tiny_model.h,
// 8 packed rows in 2 batches, fp32 on the CPU: plain scoring; the activation cache captured at a
// layer and a pass started there (the same NLLs as a full pass, with and without a gain overlay);
// --kl against a kept control (the control against itself: KL 0, every top-1 token agreeing); the
// --mechanism statistics; all of them together. The NLLs are the plain pass's in every mode, bit for
// bit (the same rows in the same batches: no rounding may differ).
#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>

#include <cmath>

#include "omn/eval/evaluator.h"
#include "omn/model/gain_overlay.h"
#include "../support/tiny_model.h"

using omn::eval::ActivationCache;
using omn::eval::Divergence;
using omn::eval::Evaluator;
using omn::eval::LayerMechanism;
using omn::eval::ScoreOptions;
using omn::eval::SequenceScores;

namespace {

class EvaluatorModes : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    files_ = new omn::test::TinyModelFiles();
    session_ = files_->open().release();
  }
  static void TearDownTestSuite() {
    delete session_;
    delete files_;
  }
  static Evaluator evaluator() {
    return Evaluator(*session_->model, session_->rows, session_->path, session_->spec.batch, session_->device);
  }
  // layer 1's Q gains set to 3 (an intervention's overlay; the model's own stay)
  static omn::model::GainOverlay layerOneOverlay() {
    omn::model::GainOverlay o(omn::test::kTinyLayers);
    o.set(1, true, at::full({omn::test::kTinyHeadDim}, 3.0, at::kFloat), false);
    return o;
  }
  static omn::test::TinyModelFiles* files_;
  static omn::eval::Session* session_;
};
omn::test::TinyModelFiles* EvaluatorModes::files_ = nullptr;
omn::eval::Session* EvaluatorModes::session_ = nullptr;

double mechanismField(const LayerMechanism& m, int k) {
  const double fields[] = {m.mean_entropy, m.max_logit, m.q_rms, m.k_rms, m.input_kurtosis};
  return fields[k];
}

}  // namespace

TEST_F(EvaluatorModes, PlainScoringIsEveryRowInOrderAndRepeatable) {
  c10::InferenceMode inference;
  const Evaluator ev = evaluator();
  ASSERT_EQ(ev.size(), 8u);
  EXPECT_TRUE(ev.packed());  // rows hold several documents
  const SequenceScores s = ev.score();
  ASSERT_EQ(s.nll_sum.size(), 8u);
  for (std::size_t i = 0; i < 8; ++i) {
    EXPECT_EQ(s.tokens[i], omn::eval::scoredTokens(ev.rows()[i])) << "row " << i;
    EXPECT_TRUE(std::isfinite(s.nll_sum[i]) && s.nll_sum[i] > 0) << "row " << i;
  }
  const SequenceScores again = ev.score();
  EXPECT_EQ(again.nll_sum, s.nll_sum);
  EXPECT_EQ(again.tokens, s.tokens);
  // stopped before the second batch: the first batch's rows, the same numbers
  ScoreOptions stop;
  int asked = 0;
  stop.stop = [&] { return ++asked == 2; };
  std::size_t progressed = 0;
  stop.progress = [&](const omn::eval::Progress& p) { progressed = p.rows_done; };
  const SequenceScores part = ev.score(stop);
  ASSERT_EQ(part.nll_sum.size(), 4u);
  EXPECT_EQ(progressed, 4u);
  EXPECT_EQ(part.nll_sum, std::vector<double>(s.nll_sum.begin(), s.nll_sum.begin() + 4));
}

// The cache at layer L holds block L's input per batch; a pass from it equals a full pass, with the
// model's gains and with an overlay that changes only layers >= L.
TEST_F(EvaluatorModes, ACachedStartLayerGivesTheNllsOfAFullPass) {
  c10::InferenceMode inference;
  const Evaluator ev = evaluator();
  const SequenceScores plain = ev.score();
  const omn::model::GainOverlay overlay = layerOneOverlay();
  ScoreOptions with_gains;
  with_gains.gains = &overlay;
  const SequenceScores changed = ev.score(with_gains);
  EXPECT_NE(changed.nll_sum, plain.nll_sum);
  for (int layer : {0, 1}) {
    ActivationCache cache;
    cache.layer = layer;
    ScoreOptions capture;
    capture.cache = &cache;
    capture.capture = true;
    EXPECT_EQ(ev.score(capture).nll_sum, plain.nll_sum) << "capturing at layer " << layer;
    ASSERT_EQ(cache.inputs.size(), 2u);  // one per batch
    EXPECT_EQ(cache.bytes(), ev.cacheBytes());
    EXPECT_EQ(cache.bytes(), 8u * 16u * 16u * sizeof(float));  // 8 rows of 16 tokens, d 16, fp32
    ScoreOptions from;
    from.cache = &cache;
    from.from_cache = true;
    EXPECT_EQ(ev.score(from).nll_sum, plain.nll_sum) << "from layer " << layer;
    from.gains = &overlay;
    EXPECT_EQ(ev.score(from).nll_sum, changed.nll_sum) << "from layer " << layer << " with the overlay";
  }
  // a caller's misuse is refused before any pass (std::logic_error: a bug, not a user's input)
  ActivationCache empty;
  ScoreOptions bad;
  bad.cache = &empty;
  bad.from_cache = true;
  EXPECT_THROW(ev.score(bad), std::logic_error);  // nothing captured
  bad.capture = true;
  EXPECT_THROW(ev.score(bad), std::logic_error);  // both at once
}

// --kl: the control keeps its final hidden states; the control compared with itself has KL 0, every
// top-1 token agreeing and no change in p(correct); a condition compared with it has KL > 0. The NLLs
// are those of the same pass without the comparison.
TEST_F(EvaluatorModes, KlAgainstTheControl) {
  c10::InferenceMode inference;
  const Evaluator ev = evaluator();
  const SequenceScores plain = ev.score();
  std::vector<at::Tensor> control_final;
  ScoreOptions keep;
  keep.keep_final = &control_final;
  EXPECT_EQ(ev.score(keep).nll_sum, plain.nll_sum);
  ASSERT_EQ(control_final.size(), 2u);

  Divergence self;
  ScoreOptions compare;
  compare.reference_final = &control_final;
  compare.divergence = &self;
  EXPECT_EQ(ev.score(compare).nll_sum, plain.nll_sum);
  ASSERT_EQ(self.kl_sum.size(), 8u);
  std::int64_t total = 0;
  for (std::size_t i = 0; i < 8; ++i) {
    EXPECT_EQ(self.kl_sum[i], 0.0) << "row " << i;
    EXPECT_EQ(self.top1_agree[i], plain.tokens[i]) << "row " << i;
    EXPECT_EQ(self.dp_correct_sum[i], 0.0) << "row " << i;
    total += plain.tokens[i];
  }
  ASSERT_EQ(self.kl_tokens.size(), static_cast<std::size_t>(total));
  for (float k : self.kl_tokens) EXPECT_EQ(k, 0.0f);

  const omn::model::GainOverlay overlay = layerOneOverlay();
  ScoreOptions gains_only;
  gains_only.gains = &overlay;
  const SequenceScores changed = ev.score(gains_only);
  Divergence vs;
  compare.divergence = &vs;
  compare.gains = &overlay;
  EXPECT_EQ(ev.score(compare).nll_sum, changed.nll_sum);
  double kl = 0;
  for (std::size_t i = 0; i < 8; ++i) {
    EXPECT_GE(vs.kl_sum[i], 0.0) << "row " << i;
    EXPECT_LE(vs.top1_agree[i], plain.tokens[i]) << "row " << i;
    kl += vs.kl_sum[i];
  }
  EXPECT_GT(kl, 0.0);
  // a reference without a divergence to fill (or of another batch count) is a caller's bug
  ScoreOptions half;
  half.reference_final = &control_final;
  EXPECT_THROW(ev.score(half), std::logic_error);
}

// --mechanism: per-layer statistics beside the same NLLs; a pass from the cache at layer 1 leaves
// layer 0 unmeasured (zero: the caller takes the control's) and measures layer 1 exactly as the full
// pass did.
TEST_F(EvaluatorModes, MechanismStatisticsBesideTheSameNlls) {
  c10::InferenceMode inference;
  const Evaluator ev = evaluator();
  const SequenceScores plain = ev.score();
  std::vector<LayerMechanism> full;
  ScoreOptions mech;
  mech.mech = &full;
  EXPECT_EQ(ev.score(mech).nll_sum, plain.nll_sum);
  ASSERT_EQ(full.size(), 2u);
  for (const LayerMechanism& l : full) {
    EXPECT_GT(l.mean_entropy, 0.0);
    EXPECT_GT(l.q_rms, 0.0);
    EXPECT_GT(l.k_rms, 0.0);
    EXPECT_GT(l.input_kurtosis, 0.0);
    EXPECT_TRUE(std::isfinite(l.max_logit));
  }
  ActivationCache cache;
  cache.layer = 1;
  ScoreOptions capture;
  capture.cache = &cache;
  capture.capture = true;
  ev.score(capture);
  std::vector<LayerMechanism> from_one;
  ScoreOptions from;
  from.cache = &cache;
  from.from_cache = true;
  from.mech = &from_one;
  EXPECT_EQ(ev.score(from).nll_sum, plain.nll_sum);
  ASSERT_EQ(from_one.size(), 2u);
  for (int k = 0; k < 5; ++k) {
    EXPECT_EQ(mechanismField(from_one[0], k), 0.0) << "field " << k << ": layer 0 was not run";
    EXPECT_EQ(mechanismField(from_one[1], k), mechanismField(full[1], k)) << "field " << k;
  }
}

// Every mode in one pass (capture, statistics, the kept control, a probe) scores what the plain pass does.
TEST_F(EvaluatorModes, EveryModeAtOnceScoresThePlainNlls) {
  c10::InferenceMode inference;
  const Evaluator ev = evaluator();
  const SequenceScores plain = ev.score();
  struct Count final : omn::model::ForwardObserver {
    int seen = 0;
    bool wants(omn::model::Intermediate what, int) const override { return what == omn::model::Intermediate::BlockOutput; }
    void observe(const omn::model::Announcement&) override { ++seen; }
  } probe;
  ActivationCache cache;
  cache.layer = 1;
  std::vector<LayerMechanism> mech;
  std::vector<at::Tensor> kept;
  ScoreOptions all;
  all.cache = &cache;
  all.capture = true;
  all.mech = &mech;
  all.keep_final = &kept;
  all.observer = &probe;
  const SequenceScores s = ev.score(all);
  EXPECT_EQ(s.nll_sum, plain.nll_sum);
  EXPECT_EQ(s.tokens, plain.tokens);
  EXPECT_EQ(probe.seen, 2 * 2);  // every block's output, in each of the 2 batches
  EXPECT_EQ(cache.inputs.size(), 2u);
  EXPECT_EQ(kept.size(), 2u);
}
