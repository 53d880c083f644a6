// The Evaluator's modes (eval/evaluator.h) on the tiny 2-layer model of tests/support/tiny_model.h,
// 8 packed rows in 2 batches, fp32 on the CPU. Each mode is a subscriber or the start argument, so
// no combination is refused at run time: plain scoring; the activation cache captured at a layer
// (ActivationCapture) and a pass started there (Start::at: the same NLLs as a full pass, with and
// without a gain overlay); --kl against a kept control (FinalStates, DivergenceObserver: the control
// against itself has KL 0 and every top-1 token agreeing; a condition's KL against a float64
// log-softmax written out in the test); the --mechanism statistics; all of them together. The NLLs
// are the plain pass's in every mode, bit for bit (the same rows in the same batches: no rounding
// may differ).
#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>

#include <cmath>

#include "omn/eval/evaluator.h"
#include "omn/model/gain_overlay.h"
#include "../support/tiny_model.h"

using omn::eval::ActivationCache;
using omn::eval::ActivationCapture;
using omn::eval::Divergence;
using omn::eval::DivergenceObserver;
using omn::eval::FinalStates;
using omn::eval::Start;
using omn::eval::Evaluator;
using omn::eval::LayerMechanism;
using omn::eval::ScoreOptions;
using omn::eval::Row;
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
  const double fields[] = {m.attention_entropy, m.max_attention_logit, m.q_rms, m.k_rms, m.input_kurtosis};
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
    ActivationCapture capture(layer);
    ScoreOptions capturing;
    capturing.observers = {&capture};
    EXPECT_EQ(ev.score(capturing).nll_sum, plain.nll_sum) << "capturing at layer " << layer;
    const ActivationCache cache = capture.take();
    ASSERT_EQ(cache.inputs.size(), 2u);  // one per batch
    EXPECT_EQ(cache.layer, layer);
    EXPECT_EQ(cache.bytes(), ev.cacheBytes());
    EXPECT_EQ(cache.bytes(), 8u * 16u * 16u * sizeof(float));  // 8 rows of 16 tokens, d 16, fp32
    EXPECT_EQ(Start::at(cache).layer(), layer);
    EXPECT_EQ(ev.score({}, Start::at(cache)).nll_sum, plain.nll_sum) << "from layer " << layer;
    EXPECT_EQ(ev.score(with_gains, Start::at(cache)).nll_sum, changed.nll_sum) << "from layer " << layer << " with the overlay";
  }
  // a pass from a cache can capture a later layer: the same inputs a full pass captures there
  ActivationCapture at0(0), at1(1), again1(1);
  ScoreOptions both;
  both.observers = {&at0, &at1};
  ev.score(both);
  ScoreOptions later;
  later.observers = {&again1};
  ev.score(later, Start::at(at0.cache()));
  ASSERT_EQ(again1.cache().inputs.size(), 2u);
  for (std::size_t b = 0; b < 2; ++b) EXPECT_TRUE(at::equal(again1.cache().inputs[b], at1.cache().inputs[b])) << "batch " << b;
  // a cache that is not these rows' (nothing captured) is a caller's bug: std::logic_error, no pass
  const ActivationCache empty;
  EXPECT_THROW(ev.score({}, Start::at(empty)), std::logic_error);
}

// --kl: the control keeps its final hidden states; the control compared with itself has KL 0, every
// top-1 token agreeing and no change in p(correct); a condition compared with it has KL > 0, equal
// to a float64 log-softmax of the same logits within float32's rounding of the log-sum-exp. The NLLs
// are those of the same pass without the comparison.
TEST_F(EvaluatorModes, KlAgainstTheControl) {
  c10::InferenceMode inference;
  const Evaluator ev = evaluator();
  const SequenceScores plain = ev.score();
  FinalStates control;
  ScoreOptions keep;
  keep.observers = {&control};
  EXPECT_EQ(ev.score(keep).nll_sum, plain.nll_sum);
  ASSERT_EQ(control.states().size(), 2u);

  Divergence self;
  DivergenceObserver against_self(ev.model(), control.states(), self);
  ScoreOptions compare;
  compare.scored = &against_self;
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
  FinalStates condition;
  ScoreOptions gains_only;
  gains_only.gains = &overlay;
  gains_only.observers = {&condition};
  const SequenceScores changed = ev.score(gains_only);
  Divergence vs;
  DivergenceObserver against_control(ev.model(), control.states(), vs);
  compare.scored = &against_control;
  compare.gains = &overlay;
  EXPECT_EQ(ev.score(compare).nll_sum, changed.nll_sum);
  double kl = 0;
  for (std::size_t row = 0; row < 8; ++row) {
    EXPECT_GE(vs.kl_sum[row], 0.0) << "row " << row;
    EXPECT_LE(vs.top1_agree[row], plain.tokens[row]) << "row " << row;
    kl += vs.kl_sum[row];
  }
  // against a float64 log-softmax written out here, per row: a reference made sharp (the control's
  // final states x 40: KL of order 1, where a wrong direction or a missing term shows), the condition
  // as the pass. Each float32 log-probability is within (V + 2) units of roundoff of the log-sum-exp
  // and 2 of the largest logit; a token's KL (weights p_ref summing to 1) within twice that.
  std::vector<at::Tensor> sharp;
  for (const at::Tensor& st : control.states()) sharp.push_back(st * 40.0);
  Divergence vs_sharp;
  DivergenceObserver against_sharp(ev.model(), sharp, vs_sharp);
  compare.scored = &against_sharp;
  EXPECT_EQ(ev.score(compare).nll_sum, changed.nll_sum);
  const at::Tensor head = ev.model().head().to(at::kDouble);
  const double V = static_cast<double>(head.size(0)), u = std::ldexp(1.0, -24);
  for (std::size_t b = 0, row = 0; b < 2; ++b) {
    const at::Tensor z_ref = at::matmul(sharp[b].to(at::kDouble), head.t());
    const at::Tensor z = at::matmul(condition.states()[b].to(at::kDouble), head.t());
    const at::Tensor lp_ref = at::log_softmax(z_ref, -1), lp = at::log_softmax(z, -1);
    const at::Tensor per_token = (lp_ref.exp() * (lp_ref - lp)).sum(-1);  // [B, T]
    const double max_logit = std::max(z_ref.abs().max().item<double>(), z.abs().max().item<double>());
    const double token_bound = 2.0 * 2.0 * ((V + 2.0) * u + 2.0 * u * max_logit);
    for (std::int64_t r = 0; r < per_token.size(0); ++r, ++row) {
      const Row& rr = ev.rows()[row];
      double want = 0;
      std::int64_t n = 0;
      for (std::size_t t = 0; t + 1 < rr.doc.size(); ++t)
        if (rr.doc[t + 1] == rr.doc[t]) want += per_token[r][static_cast<std::int64_t>(t)].item<double>(), ++n;
      EXPECT_GT(want, 0.1 * static_cast<double>(n)) << "row " << row << ": the sharp reference is far from the pass";
      EXPECT_NEAR(vs_sharp.kl_sum[row], want, static_cast<double>(n) * token_bound) << "row " << row;
    }
  }
  EXPECT_GT(kl, 0.0);
  // a reference of another batch count is a caller's bug, refused at that batch
  const std::vector<at::Tensor> one_batch(control.states().begin(), control.states().begin() + 1);
  Divergence short_of_one;
  DivergenceObserver short_reference(ev.model(), one_batch, short_of_one);
  ScoreOptions half;
  half.scored = &short_reference;
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
    EXPECT_GT(l.attention_entropy, 0.0);
    EXPECT_GT(l.q_rms, 0.0);
    EXPECT_GT(l.k_rms, 0.0);
    EXPECT_GT(l.input_kurtosis, 0.0);
    EXPECT_TRUE(std::isfinite(l.max_attention_logit));
  }
  ActivationCapture capture(1);
  ScoreOptions capturing;
  capturing.observers = {&capture};
  ev.score(capturing);
  std::vector<LayerMechanism> from_one;
  ScoreOptions from;
  from.mech = &from_one;
  EXPECT_EQ(ev.score(from, Start::at(capture.cache())).nll_sum, plain.nll_sum);
  ASSERT_EQ(from_one.size(), 2u);
  for (int k = 0; k < 5; ++k) {
    EXPECT_EQ(mechanismField(from_one[0], k), 0.0) << "field " << k << ": layer 0 was not run";
    EXPECT_EQ(mechanismField(from_one[1], k), mechanismField(full[1], k)) << "field " << k;
  }
}

// Every mode in one pass (capture, statistics, the kept control, a probe, from a cache, against a
// control) scores what the plain pass does.
TEST_F(EvaluatorModes, EveryModeAtOnceScoresThePlainNlls) {
  c10::InferenceMode inference;
  const Evaluator ev = evaluator();
  const SequenceScores plain = ev.score();
  struct Count final : omn::model::ForwardObserver {
    int seen = 0;
    bool wants(omn::model::Intermediate what, int) const override { return what == omn::model::Intermediate::BlockOutput; }
    void observe(const omn::model::Announcement&) override { ++seen; }
  } probe;
  ActivationCapture capture(1);
  std::vector<LayerMechanism> mech;
  FinalStates kept;
  ScoreOptions all;
  all.observers = {&capture, &kept, &probe};
  all.mech = &mech;
  const SequenceScores s = ev.score(all);
  EXPECT_EQ(s.nll_sum, plain.nll_sum);
  EXPECT_EQ(s.tokens, plain.tokens);
  EXPECT_EQ(probe.seen, 2 * 2);  // every block's output, in each of the 2 batches
  EXPECT_EQ(capture.cache().inputs.size(), 2u);
  EXPECT_EQ(kept.states().size(), 2u);
  // and from the cache, against the control kept, with a probe and the statistics
  Divergence d;
  DivergenceObserver against(ev.model(), kept.states(), d);
  FinalStates again;
  ScoreOptions rest;
  rest.observers = {&again, &probe};
  rest.mech = &mech;
  rest.scored = &against;
  EXPECT_EQ(ev.score(rest, Start::at(capture.cache())).nll_sum, plain.nll_sum);
  EXPECT_EQ(probe.seen, 2 * 2 + 2);  // from layer 1: one block per batch
  for (std::size_t b = 0; b < 2; ++b) EXPECT_TRUE(at::equal(again.states()[b], kept.states()[b])) << "batch " << b;
  for (double k : d.kl_sum) EXPECT_EQ(k, 0.0);
}
