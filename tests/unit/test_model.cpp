// The model's building blocks, parameterised over dtype and device: every attention path against
// the masked reference on multi-document rows; RMSNorm cast orders; RoPE conventions. CUDA cases
// compile only with CUDA and skip cleanly otherwise.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>

#include "omn/errors.h"
#include "omn/eval/mechanism.h"
#include "omn/eval/scorer.h"
#include "omn/eval/token_set.h"
#include "omn/model/attention.h"
#include "omn/model/rms_norm.h"
#include "omn/model/rotary.h"
#include "omn/model/preset.h"
#include "omn/model/products.h"
#include "omn/model/weights.h"
#include "omn/io/checkpoint.h"
#include "omn/train/parameters.h"
#include "omn/train/train_config.h"

using namespace omn::model;

namespace {

struct Case {
  at::ScalarType dtype;
  const char* device;
};

class AttentionParity : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    if (std::string(GetParam().device) == "cuda" && !at::hasCUDA()) GTEST_SKIP() << "no CUDA device in this build/machine";
  }
};

// softmax(q k^T / sqrt(D) + causal, same-document mask) v in float64, on the CPU: [B, T, H, D]
at::Tensor exactAttention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const DocumentLayout& l) {
  const at::Tensor qd = q.to(at::kDouble).cpu().transpose(1, 2), kd = k.to(at::kDouble).cpu().transpose(1, 2),
                   vd = v.to(at::kDouble).cpu().transpose(1, 2);  // [B, H, T, D]
  const std::int64_t T = q.size(1);
  at::Tensor s = at::matmul(qd, kd.transpose(-2, -1)) / std::sqrt(static_cast<double>(q.size(-1)));
  const at::Tensor doc = l.doc.cpu();
  const at::Tensor allowed = (doc.unsqueeze(2) == doc.unsqueeze(1)) & (at::arange(T).unsqueeze(0) <= at::arange(T).unsqueeze(1)).unsqueeze(0);
  s.masked_fill_(allowed.logical_not().unsqueeze(1), -std::numeric_limits<double>::infinity());
  return at::matmul(at::softmax(s, -1), vd).transpose(1, 2);
}

std::string caseName(const ::testing::TestParamInfo<Case>& i) {
  return std::string(c10::toString(i.param.dtype)) + "_" + i.param.device;
}

}  // namespace

TEST_P(AttentionParity, EveryPathMatchesTheMaskedReference) {
  const Case c = GetParam();
  at::manual_seed(0);
  const at::Device dev(c.device);
  const std::int64_t B = 2, T = 37, H = 4, D = 16;
  // row 0: three documents; row 1: one
  at::Tensor doc = at::zeros({B, T}, at::kLong);
  doc[0].narrow(0, 10, 15).fill_(1);
  doc[0].narrow(0, 25, 12).fill_(2);
  const DocumentLayout layout = documentLayout(doc);
  EXPECT_FALSE(layout.single_document);
  EXPECT_EQ(layout.segments[0].size(), 3u);
  EXPECT_EQ(layout.positions[0][10].item<std::int64_t>(), 0);  // positions restart at each document
  auto opts = at::TensorOptions().dtype(c.dtype).device(dev);
  const at::Tensor q = at::randn({B, T, H, D}, opts), k = at::randn({B, T, H, D}, opts), v = at::randn({B, T, H, D}, opts);
  const at::Tensor ref = attend(AttentionPath::Masked, q, k, v, layout).to(at::kFloat);
  // Every path, the masked reference included, against the exact result (float64), each within its
  // rounding bound, derived per element: scores rounded once (|ds| <= u|s|, so every probability
  // within a factor exp(+-2u max|s|) of the exact one), probabilities rounded once (u), the output
  // once (u); u the working dtype's unit roundoff (bf16 2^-8, fp16 2^-11, fp32 2^-24), float32
  // sums and exp a few float32 units more.
  const at::Tensor exact = exactAttention(q, k, v, layout);  // [B, T, H, D] float64
  const double u = c.dtype == at::kBFloat16 ? std::ldexp(1.0, -8) : c.dtype == at::kHalf ? std::ldexp(1.0, -11) : std::ldexp(1.0, -24);
  const at::Tensor qd = q.to(at::kDouble).transpose(1, 2), kd = k.to(at::kDouble).transpose(1, 2);
  const double smax = (at::matmul(qd, kd.transpose(-2, -1)).abs().max().item<double>()) / std::sqrt(static_cast<double>(D));
  const double f32 = std::ldexp(1.0, -24) * (D + T + 8);
  const double prob = (std::exp(2 * (u * smax + f32 * smax)) - 1) * (1 + u) + u + f32;
  const at::Tensor bound = prob * (1 + u) * exactAttention(q, k, v.abs(), layout) + (u + f32) * exact.abs();
  std::vector<AttentionPath> paths = {AttentionPath::Masked, AttentionPath::PerDocument, AttentionPath::Blockwise};
  if (flashCompiled() && dev.is_cuda() && c.dtype != at::kFloat) paths.push_back(AttentionPath::Flash);
  // the blockwise path rounds each key block's partial output (u of that block's share of Σ p|v|)
  // before it sums them in float32: u times the |v| term more
  const at::Tensor blockwise_bound = bound + u * exactAttention(q, k, v.abs(), layout);
  for (AttentionPath p : paths) {
    // blocks of 8 tokens (tiles across every document boundary, keys skipped before a document) and
    // one block holding the whole row
    for (std::int64_t block : {std::int64_t{8}, std::int64_t{64}}) {
      if (p != AttentionPath::Blockwise && block != 8) continue;
      const at::Tensor err = (attend(p, q, k, v, layout, block).to(at::kDouble).cpu() - exact).abs();
      const at::Tensor& b = p == AttentionPath::Blockwise ? blockwise_bound : bound;
      // an element whose keys' values are all 0 has error and bound 0 (first token of a document)
      EXPECT_LE((err / b.clamp_min(1e-300)).max().item<double>(), 1.0) << attentionName(p) << " (block " << block << "): worst error/bound";
    }
  }
  // row 0 alone (documents at 0, 10 and 25): a block of queries starting inside a later document
  // skips the keys before it (with row 1 beside it, whose one document starts at 0, none are skipped)
  {
    const DocumentLayout one = documentLayout(doc.narrow(0, 0, 1));
    const at::Tensor q0 = q.narrow(0, 0, 1), k0 = k.narrow(0, 0, 1), v0 = v.narrow(0, 0, 1);
    const at::Tensor exact0 = exactAttention(q0, k0, v0, one);
    const at::Tensor bound0 = (prob * (1 + u) + u) * exactAttention(q0, k0, v0.abs(), one) + (u + f32) * exact0.abs();
    for (std::int64_t block : {std::int64_t{4}, std::int64_t{8}, std::int64_t{12}}) {
      const at::Tensor err0 = (attend(AttentionPath::Blockwise, q0, k0, v0, one, block).to(at::kDouble).cpu() - exact0).abs();
      EXPECT_LE((err0 / bound0.clamp_min(1e-300)).max().item<double>(), 1.0) << "blockwise, row 0 alone, block " << block;
    }
  }
  // one document per row (no document masks but on the diagonal tiles) and a block that does not
  // divide the row: the blockwise path against the masked reference
  const DocumentLayout single = documentLayout(at::zeros({B, T}, at::kLong));
  const at::Tensor exact_single = exactAttention(q, k, v, single);
  const at::Tensor err_single = (attend(AttentionPath::Blockwise, q, k, v, single, 5).to(at::kDouble).cpu() - exact_single).abs();
  const at::Tensor bound_single = (prob * (1 + u) + u) * exactAttention(q, k, v.abs(), single) + (u + f32) * exact_single.abs();
  EXPECT_LE((err_single / bound_single.clamp_min(1e-300)).max().item<double>(), 1.0) << "blockwise, one document per row";
  // a token never sees another document: perturbing document 0 leaves documents 1 and 2 alone
  at::Tensor v2 = v.clone();
  v2[0].narrow(0, 0, 10).add_(5.0);
  const at::Tensor out2 = attend(AttentionPath::Masked, q, k, v2, layout).to(at::kFloat);
  EXPECT_EQ((out2[0].narrow(0, 10, 27) - ref[0].narrow(0, 10, 27)).abs().max().item<double>(), 0.0);
}

INSTANTIATE_TEST_SUITE_P(DtypeDevice, AttentionParity,
                         ::testing::Values(Case{at::kFloat, "cpu"}, Case{at::kBFloat16, "cpu"}
#ifdef OMN_WITH_CUDA
                                           ,
                                           Case{at::kFloat, "cuda"}, Case{at::kBFloat16, "cuda"}, Case{at::kHalf, "cuda"}
#endif
                                           ),
                         caseName);

TEST(AttentionChooser, AutoAndExplicit) {
  using R = AttentionRequest;
  EXPECT_EQ(chooseAttention(R::Auto, at::kCPU, at::kBFloat16, true), AttentionPath::PerDocument);
  EXPECT_EQ(chooseAttention(R::Auto, at::kCPU, at::kFloat, false), AttentionPath::Masked);
  EXPECT_EQ(chooseAttention(R::Masked, at::kCPU, at::kFloat, true), AttentionPath::Masked);
  EXPECT_EQ(chooseAttention(R::Blockwise, at::kCPU, at::kFloat, false), AttentionPath::Blockwise);
  // auto leaves the score matrix when it would pass 1 GiB: a 2,048-token row of 16 heads keeps the
  // masked path (256 MiB a row, 4 rows 1 GiB); one 32,768-token row (64 GiB) takes the blockwise one
  EXPECT_EQ(chooseAttention(R::Auto, at::kCPU, at::kBFloat16, false, "--attention", "--dtype", {4, 16, 2048}), AttentionPath::Masked);
  EXPECT_EQ(chooseAttention(R::Auto, at::kCPU, at::kBFloat16, false, "--attention", "--dtype", {5, 16, 2048}), AttentionPath::Blockwise);
  EXPECT_EQ(chooseAttention(R::Auto, at::kCPU, at::kBFloat16, true, "--attention", "--dtype", {1, 16, 32768}), AttentionPath::Blockwise);
  EXPECT_EQ(chooseAttention(R::Auto, at::kCPU, at::kBFloat16, true, "--attention", "--dtype", {64, 16, 4096}), AttentionPath::PerDocument);
  EXPECT_EQ(attentionScoreBytes(AttentionPath::Blockwise, {1, 16, 32768}), std::int64_t{16} * 256 * 256 * 4);
  // flash on a CPU device is refused in every build, naming the option that asked for it
  try {
    chooseAttention(R::Flash, at::kCPU, at::kBFloat16, true, "manifest m.json: /model/attention");
    ADD_FAILURE() << "flash on the CPU was accepted";
  } catch (const omn::UsageError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("manifest m.json: /model/attention flash", 0), 0u) << e.what();
  }
  EXPECT_EQ(omn::io::parseChoice(kAttentionRequests, "per-document", "--attention"), R::PerDocument);
  try {
    omn::io::parseChoice(kAttentionRequests, "sdpa", "--attention");
    ADD_FAILURE() << "sdpa was accepted";
  } catch (const omn::UsageError& e) {
    EXPECT_STREQ(e.what(), "--attention: expected auto, flash, blockwise, per-document or masked, got \"sdpa\"");
  }
}

// How bf16 products run is decided from the CPU, oneDNN's ISA limit and OMN_BF16_PRODUCTS, in
// one rule; the reason names what decided.
TEST(Bf16Products, ChosenByTheCpuTheIsaLimitAndTheOverride) {
  ProductFacts f;
  EXPECT_EQ(chooseBf16Products(f).bf16, Bf16Products::Fp32Accumulate);  // an AVX2 EPYC
  EXPECT_NE(chooseBf16Products(f).reason.find("no avx512_bf16"), std::string::npos);
  f.avx512_bf16 = true;  // a Sapphire Rapids Xeon
  EXPECT_EQ(chooseBf16Products(f).bf16, Bf16Products::Native);
  f.onednn_max_isa = "avx2", f.onednn_max_isa_variable = "ONEDNN_MAX_CPU_ISA";  // oneDNN held to AVX2
  EXPECT_EQ(chooseBf16Products(f).bf16, Bf16Products::Fp32Accumulate);
  EXPECT_NE(chooseBf16Products(f).reason.find("ONEDNN_MAX_CPU_ISA=avx2"), std::string::npos);
  f.onednn_max_isa = "AVX512_CORE_BF16";
  EXPECT_EQ(chooseBf16Products(f).bf16, Bf16Products::Native);
  f.onednn_max_isa = "AVX512_CORE";  // AVX-512 without its bf16 instructions
  EXPECT_EQ(chooseBf16Products(f).bf16, Bf16Products::Fp32Accumulate);
  f.requested = "native";  // the override wins either way
  EXPECT_EQ(chooseBf16Products(f).bf16, Bf16Products::Native);
  EXPECT_EQ(chooseBf16Products(f).reason, "OMN_BF16_PRODUCTS=native");
  // native asked for where it cannot run: an AVX-512 CPU with oneDNN held to AVX2 (libtorch still
  // calls oneDNN, which throws); on an AVX2 CPU the same limit leaves libtorch's scalar loop
  f.avx512_core = true, f.onednn_max_isa = "AVX2";
  EXPECT_FALSE(nativeBf16Runs(f));
  EXPECT_THROW(chooseBf16Products(f), omn::UsageError);
  f.avx512_core = false;
  EXPECT_TRUE(nativeBf16Runs(f));
  EXPECT_EQ(chooseBf16Products(f).bf16, Bf16Products::Native);
  f = ProductFacts{};
  f.requested = "fp32-accumulate";
  EXPECT_EQ(chooseBf16Products(f).bf16, Bf16Products::Fp32Accumulate);
  f.requested = "fast";
  try {
    chooseBf16Products(f);
    ADD_FAILURE() << "OMN_BF16_PRODUCTS=fast was accepted";
  } catch (const omn::UsageError& e) {
    EXPECT_STREQ(e.what(), "OMN_BF16_PRODUCTS: expected native or fp32-accumulate, got \"fast\"");
  }
}

// What a result records: the choice where bf16 products run on the CPU, "not used" for another
// working dtype, libtorch's own on CUDA (never a CPU reason for a GPU run).
TEST(Bf16Products, RecordedForTheRunsDtypeAndDevice) {
  EXPECT_EQ(productsJson(at::kFloat, at::Device("cpu"))["bf16"], "not used");
  EXPECT_EQ(productsJson(at::kBFloat16, at::Device("cuda:0"))["bf16"], "native");
  EXPECT_EQ(productsJson(at::kBFloat16, at::Device("cuda:0"))["reason"], "cuda:0: libtorch's own bf16 products");
  EXPECT_EQ(productsJson(at::kBFloat16, at::Device("cpu"))["bf16"], omn::io::choiceName(kBf16Products, bf16Products().bf16));
}

// The two bf16 product kernels compute the same products: bf16 inputs, float32 sums, the output
// rounded to bf16. They agree with the float64 product of the same bf16 inputs within one bf16
// rounding plus the float32 sum's error (K terms), element by element.
TEST(Bf16Products, BothKernelsRoundTheFloat32Product) {
  at::manual_seed(3);
  const std::int64_t K = 300;
  const at::Tensor x = at::randn({7, K}).to(at::kBFloat16), w = at::randn({5, K}).to(at::kBFloat16);
  const at::Tensor exact = at::matmul(x.to(at::kDouble), w.to(at::kDouble).t());
  const at::Tensor mag = at::matmul(x.to(at::kDouble).abs(), w.to(at::kDouble).abs().t());
  const at::Tensor bound = std::ldexp(1.0, -8) * exact.abs() + (K * std::ldexp(1.0, -24)) * (1 + std::ldexp(1.0, -8)) * mag;
  std::vector<at::Tensor> kernels = {at::linear(x.to(at::kFloat), w.to(at::kFloat)).to(at::kBFloat16), products::linear(x, w)};
  if (nativeBf16Runs(readProductFacts())) kernels.push_back(at::linear(x, w));  // libtorch's own
  for (const at::Tensor& got : kernels) {
    EXPECT_EQ(got.scalar_type(), at::kBFloat16);
    EXPECT_LE(((got.to(at::kDouble) - exact).abs() / bound).max().item<double>(), 1.0);
  }
  // linearInto: the same values, widened into a float32 buffer
  at::Tensor z = at::empty({7, 5}, at::kFloat);
  products::linearInto(z, x, products::weight(w));
  EXPECT_TRUE(at::equal(z, products::linear(x, w).to(at::kFloat)));
}

TEST(RmsNorm, CastOrderMatters) {
  // seeded: an unseeded draw made the absolute bound below flaky (0.0204 > 0.02 once in CI)
  at::manual_seed(7);
  const at::Tensor x = at::randn({64, 8}).to(at::kBFloat16);
  const at::Tensor g = at::full({8}, 1.7, at::kBFloat16);
  const at::Tensor a = rmsNorm(x, g, 1e-6, NormCast::MultiplyThenCast).to(at::kFloat);
  const at::Tensor b = rmsNorm(x, g, 1e-6, NormCast::CastThenMultiply).to(at::kFloat);
  const at::Tensor xf = x.to(at::kFloat);
  const at::Tensor exact = xf * at::rsqrt(xf.pow(2).mean(-1, true) + 1e-6) * 1.7;
  // bf16 keeps 8 significant bits (a rounding is <= 2^-9 relative); rounding before the multiply
  // adds one more, so casting last is the closer of the two
  const at::Tensor scale = exact.abs().clamp_min(1e-3);
  const double err_a = ((a - exact).abs() / scale).max().item<double>();
  const double err_b = ((b - exact).abs() / scale).max().item<double>();
  EXPECT_LE(err_a, std::ldexp(1.0, -7));
  EXPECT_LE(err_b, std::ldexp(1.0, -6));
  EXPECT_LE(err_a, err_b);
  // bf16: the two orders round at different places, so they differ (Qwen3 casts first, OMN-1 after)
  EXPECT_FALSE(at::equal(a, b));
  // fp32: the two orders are the same computation
  const at::Tensor c = rmsNorm(xf, g.to(at::kFloat), 1e-6, NormCast::MultiplyThenCast);
  const at::Tensor d = rmsNorm(xf, g.to(at::kFloat), 1e-6, NormCast::CastThenMultiply);
  EXPECT_TRUE(at::equal(c, d));
}

// Parity of each cast order with the definition it follows, bitwise in bf16: Qwen3's RMSNorm
// (normalise in float32, cast to the input dtype, then multiply by the weight in that dtype) and
// OMN-1's / Llama's (multiply in float32, cast once), the weight wide and partly negative.
TEST(RmsNorm, EachCastOrderMatchesItsDefinition) {
  at::manual_seed(5);
  const at::Tensor x = (at::randn({16, 32}) * 4).to(at::kBFloat16);
  const at::Tensor w = (at::rand({32}) * 30 - 2).to(at::kBFloat16);
  const at::Tensor xf = x.to(at::kFloat);
  const at::Tensor normed = xf * at::rsqrt(xf.pow(2).mean(-1, true) + 1e-6);
  const at::Tensor qwen3 = w * normed.to(at::kBFloat16);                     // HF Qwen3RMSNorm.forward
  const at::Tensor llama = (normed * w.to(at::kFloat)).to(at::kBFloat16);  // one cast, last
  EXPECT_TRUE(at::equal(rmsNorm(x, w, 1e-6, NormCast::CastThenMultiply), qwen3));
  EXPECT_TRUE(at::equal(rmsNorm(x, w, 1e-6, NormCast::MultiplyThenCast), llama));
  EXPECT_FALSE(at::equal(qwen3, llama));
}

TEST(Rope, PositionZeroIsIdentityAndNormsArePreserved) {
  const at::Tensor x = at::randn({1, 16, 2, 8});
  const at::Tensor pos = at::arange(16, at::kLong).unsqueeze(0);
  const RopeRotation t = ropeRotation(pos, 8, 10000.0, at::kCPU);
  // the rotation is the table's rows for each token's position, whatever the table's length
  const RopeTables tables = ropeTables(40, 8, 10000.0);
  EXPECT_TRUE(at::equal(t.cos.view({16, 4}), tables.cos.narrow(0, 0, 16)));
  EXPECT_TRUE(at::equal(t.sin.view({16, 4}), tables.sin.narrow(0, 0, 16)));
  for (RopeStyle s : {RopeStyle::RotateHalf, RopeStyle::Interleaved}) {
    const at::Tensor y = applyRope(x, t, s);
    EXPECT_TRUE(at::allclose(y[0][0], x[0][0]));
    EXPECT_TRUE(at::allclose(y.norm(2, -1), x.norm(2, -1), 1e-5, 1e-5));
    EXPECT_FALSE(at::allclose(y[0][5], x[0][5]));
  }
  // rotate-half pairs (j, j + 4) rotate together: dims 0 and 4 keep their joint norm
  const at::Tensor y = applyRope(x, t, RopeStyle::RotateHalf);
  const at::Tensor n_in = (x.select(-1, 0).pow(2) + x.select(-1, 4).pow(2)).sqrt();
  const at::Tensor n_out = (y.select(-1, 0).pow(2) + y.select(-1, 4).pow(2)).sqrt();
  EXPECT_TRUE(at::allclose(n_in, n_out, 1e-5, 1e-5));
}

// The scorer's chunk loop: the NLL sums and token counts do not depend on the chunk size (1, 4 and
// the default single chunk), and equal a float64 log-softmax written out in full; positions whose
// next token starts another document are not scored.
TEST(Scorer, ChunksAgreeWithEachOtherAndAFullLogSoftmax) {
  c10::InferenceMode inference;  // as eval scores: the trainable weights require grad
  omn::train::TrainConfig cfg;
  cfg.model.n_layers = 1;
  const std::int64_t V = 97;
  auto tm = omn::train::initModel(cfg, V, 3, at::Device(at::kCPU));
  at::manual_seed(11);
  const std::int64_t B = 2, T = 9, D = cfg.model.d_model;
  const at::Tensor hidden = at::randn({B, T, D});
  const at::Tensor tokens = at::randint(V, {B, T}, at::kLong);
  at::Tensor doc = at::zeros({B, T}, at::kLong);
  doc[0].narrow(0, 4, 5).fill_(1);  // row 0: two documents, 3 + 4 scored positions; row 1: 8

  std::vector<double> ref(B, 0.0);
  const at::Tensor logp = at::log_softmax(at::matmul(hidden.to(at::kDouble), tm.model->head().to(at::kDouble).t()), -1);
  std::vector<std::int64_t> ref_tokens(B, 0);
  for (std::int64_t b = 0; b < B; ++b)
    for (std::int64_t t = 0; t + 1 < T; ++t)
      if (doc[b][t].item<std::int64_t>() == doc[b][t + 1].item<std::int64_t>()) {
        ref[static_cast<std::size_t>(b)] -= logp[b][t][tokens[b][t + 1].item<std::int64_t>()].item<double>();
        ++ref_tokens[static_cast<std::size_t>(b)];
      }
  ASSERT_EQ(ref_tokens[0], 7);
  ASSERT_EQ(ref_tokens[1], 8);
  for (std::int64_t chunk : {0, 1, 4}) {
    const auto got = omn::eval::scoreRows(*tm.model, hidden, tokens, doc, chunk);
    ASSERT_EQ(got.size(), 2u);
    for (std::size_t b = 0; b < 2; ++b) {
      EXPECT_EQ(got[b].tokens, ref_tokens[b]) << "chunk " << chunk;
      EXPECT_NEAR(got[b].nll, ref[b], 1e-4 * std::abs(ref[b])) << "chunk " << chunk << " row " << b;
    }
  }
  for (std::int64_t b = 0; b < B; ++b) {  // what a journaled record's counts must equal: the scorer's rule
    omn::eval::Row row;
    for (std::int64_t t = 0; t < T; ++t) row.doc.push_back(doc[b][t].item<std::int64_t>());
    EXPECT_EQ(omn::eval::scoredTokens(row), ref_tokens[static_cast<std::size_t>(b)]) << "row " << b;
  }
}

// Zero-copy weights view the checkpoint's mapped file: they hold the checkpoint, so dropping every
// other owner leaves the views readable (a view into an unmapped file would crash here).
TEST(Weights, ZeroCopyViewsKeepTheirMappingAlive) {
  std::shared_ptr<omn::io::Checkpoint> ck = omn::io::openCheckpoint(std::string(OMN_FIXTURES) + "/omn1-mini.pt");
  const Preset preset = resolvePreset("", ck->index, ck->metadata, ck->path);
  const ModelConfig config = inferConfig(preset, ck->index, ck->path);
  const at::ScalarType stored = scalarType(ck->index.at(config.name("wq", 0)).dtype);
  Weights w = loadWeights(ck, config, stored, at::kCPU);
  ASSERT_GT(w.zero_copy, 0u) << "the fixture should load at least one tensor as a view";
  EXPECT_EQ(w.mapping.get(), ck.get());
  const double before = w.layers[0].wq.to(at::kDouble).sum().item<double>();
  ck.reset();  // the session's owner gone: the weights' own reference keeps the file mapped
  EXPECT_EQ(w.layers[0].wq.to(at::kDouble).sum().item<double>(), before);
  // owned copies hold nothing
  std::shared_ptr<omn::io::Checkpoint> ck2 = omn::io::openCheckpoint(std::string(OMN_FIXTURES) + "/omn1-mini.pt");
  const Weights owned = loadOwnedWeights(*ck2, config, at::kFloat, at::kCPU);
  EXPECT_EQ(owned.zero_copy, 0u);
  EXPECT_EQ(owned.mapping, nullptr);
}

// --mechanism at training length: the statistics computed a block of query rows at a time equal
// the whole-matrix computation (written out here independently, with its own mask) on a packed
// row, whatever the block size.
TEST(Mechanism, BlockwiseStatsEqualTheWholeMatrix) {
  c10::InferenceMode guard;
  at::manual_seed(3);
  const std::int64_t B = 2, T = 37, H = 3, hd = 8;
  const at::Tensor q = at::randn({B, T, H, hd}) * 2, k = at::randn({B, T, H, hd});
  at::Tensor doc = at::zeros({B, T}, at::kLong);
  doc[0].narrow(0, 20, 17).fill_(1);  // row 0 packs two documents
  const omn::model::DocumentLayout layout = omn::model::documentLayout(doc);
  // the reference: every query's scores over the keys it may see, in double
  double max_logit = -INFINITY, entropy = 0;
  const at::Tensor s = at::matmul(q.transpose(1, 2).to(at::kDouble), k.transpose(1, 2).to(at::kDouble).transpose(-2, -1)) / std::sqrt(8.0);
  for (std::int64_t b = 0; b < B; ++b)
    for (std::int64_t h = 0; h < H; ++h)
      for (std::int64_t i = 0; i < T; ++i) {
        std::vector<double> z;
        for (std::int64_t j = 0; j <= i; ++j)
          if (doc[b][j].item<std::int64_t>() == doc[b][i].item<std::int64_t>()) z.push_back(s[b][h][i][j].item<double>());
        const double m = *std::max_element(z.begin(), z.end());
        double sum = 0;
        for (double x : z) sum += std::exp(x - m);
        for (double x : z) {
          const double p = std::exp(x - m) / sum;
          entropy -= p * std::log(p);
        }
        max_logit = std::max(max_logit, m);
      }
  entropy /= static_cast<double>(B * H * T);
  for (std::int64_t block : {std::int64_t{1}, B * H * T * 4 * 5, std::int64_t{64} << 20}) {  // 1 row, 5 rows, all
    const auto st = omn::eval::attentionStats(q, k, layout, block);
    EXPECT_NEAR(st.max_attention_logit, max_logit, 1e-5 * std::fabs(max_logit)) << block;
    EXPECT_NEAR(st.attention_entropy, entropy, 1e-5 * entropy) << block;
  }
}

// Not a unit test (tools/bench/bench-mechanism.sh runs it): the statistics at OMN-1's training length,
// 32,768 tokens, where the whole score matrix would be 16 GiB for these 4 heads; the bench records
// the time and the peak memory.
TEST(Mechanism, DISABLED_AtTrainingLength) {
  c10::InferenceMode guard;
  at::manual_seed(5);
  const char* len = std::getenv("OMN_BENCH_TOKENS");  // the bench's length (default 32,768)
  const std::int64_t T = len ? std::atoll(len) : 32768, H = 4, hd = 32;
  const at::Tensor q = at::randn({1, T, H, hd}), k = at::randn({1, T, H, hd});
  const omn::model::DocumentLayout layout = omn::model::documentLayout(at::zeros({1, T}, at::kLong));
  const auto t0 = std::chrono::steady_clock::now();
  const auto st = omn::eval::attentionStats(q, k, layout);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_TRUE(std::isfinite(st.attention_entropy) && std::isfinite(st.max_attention_logit));
  std::printf("mechanism at T=%lld, H=%lld, hd=%lld: %.1f s, mean entropy %.4f nats, max logit %.3f\n", static_cast<long long>(T),
              static_cast<long long>(H), static_cast<long long>(hd), s, st.attention_entropy, st.max_attention_logit);
}

// The forward pass's named intermediates (model/forward_observer.h): announced in the documented
// order with their shapes, only to an observer that wants them; a pass with observers gives the same
// output bit for bit as one without; the mechanism observer's numbers are the statistics of exactly
// what it was shown (the block's input, the normed Q and K, the attention inputs).
namespace {
struct Recorder final : omn::model::ForwardObserver {
  std::vector<std::pair<int, omn::model::Intermediate>> seen;
  std::vector<at::Tensor> values, keys;
  omn::model::Intermediate only = omn::model::Intermediate::BlockOutput;
  bool everything = true;
  bool wants(omn::model::Intermediate what, int) const override { return everything || what == only; }
  void observe(const omn::model::Announcement& a) override {
    seen.emplace_back(a.layer, a.what);
    values.push_back(a.value);
    keys.push_back(a.keys ? *a.keys : at::Tensor());
  }
};
}  // namespace

TEST(ForwardObserver, AnnouncesEachIntermediateInOrderAndChangesNothing) {
  using omn::model::Intermediate;
  c10::InferenceMode inference;
  omn::train::TrainConfig cfg;
  cfg.model.n_layers = 2;
  auto tm = omn::train::initModel(cfg, 50, 5, at::Device(at::kCPU));
  const auto& m = *tm.model;
  at::manual_seed(2);
  const at::Tensor tokens = at::randint(50, {2, 12}, at::kLong);
  at::Tensor doc = at::zeros({2, 12}, at::kLong);
  doc[1].narrow(0, 5, 7).fill_(1);
  const auto layout = omn::model::documentLayout(doc);
  const auto path = omn::model::AttentionPath::Masked;
  const at::Tensor bare = m.run(m.embed(tokens), 0, layout, path);

  Recorder all;
  omn::eval::MechanismObserver mech(cfg.model.n_layers);
  omn::model::ObserverSet set;
  set.add(&all);
  set.add(&mech);
  set.add(nullptr);
  const at::Tensor watched = m.run(m.embed(tokens), 0, layout, path, &set);
  EXPECT_TRUE(at::equal(bare, watched));
  const std::vector<Intermediate> order{Intermediate::BlockInput,      Intermediate::QNormed,         Intermediate::KNormed,
                                        Intermediate::AttentionInputs, Intermediate::AttentionOutput, Intermediate::BlockOutput};
  ASSERT_EQ(all.seen.size(), 2 * order.size() + 1);
  // last, after the final norm: what run() returns, the head's input
  EXPECT_EQ(all.seen.back(), std::make_pair(2, Intermediate::FinalHidden));
  EXPECT_TRUE(at::equal(all.values.back(), bare));
  EXPECT_STREQ(omn::model::intermediateName(Intermediate::FinalHidden), "final_hidden");
  all.seen.pop_back();
  const std::int64_t hd = cfg.model.head_dim;
  for (std::size_t k = 0; k < all.seen.size(); ++k) {
    EXPECT_EQ(all.seen[k].first, static_cast<int>(k / order.size()));
    EXPECT_EQ(all.seen[k].second, order[k % order.size()]) << omn::model::intermediateName(all.seen[k].second);
  }
  EXPECT_EQ(all.values[1].sizes().vec(), (std::vector<std::int64_t>{2, 12, cfg.model.n_heads, hd}));
  EXPECT_EQ(all.values[2].sizes().vec(), (std::vector<std::int64_t>{2, 12, cfg.model.n_kv_heads, hd}));
  EXPECT_EQ(all.keys[3].sizes().vec(), (std::vector<std::int64_t>{2, 12, cfg.model.n_heads, hd}));  // K repeated to the query heads
  EXPECT_TRUE(at::equal(all.values[0], m.embed(tokens)));  // layer 0's input is the embedding
  EXPECT_TRUE(at::equal(all.values[6], all.values[5]));    // layer 1's input is layer 0's output
  // the statistics are those of what was announced
  for (int l = 0; l < 2; ++l) {
    const std::size_t base = static_cast<std::size_t>(l) * order.size();
    const auto& got = mech.layers()[static_cast<std::size_t>(l)];
    EXPECT_EQ(got.input_kurtosis, omn::eval::activationKurtosis(all.values[base]));
    EXPECT_EQ(got.q_rms, all.values[base + 1].pow(2).mean().sqrt().item<double>());
    const auto st = omn::eval::attentionStats(all.values[base + 3], all.keys[base + 3], layout);
    EXPECT_EQ(got.max_attention_logit, st.max_attention_logit);
    EXPECT_EQ(got.attention_entropy, st.attention_entropy);
    EXPECT_GT(got.k_rms, 0.0);
  }
  // an observer that wants one intermediate is told only that one
  Recorder one;
  one.everything = false;
  one.only = Intermediate::QNormed;
  m.run(m.embed(tokens), 1, layout, path, &one);  // from layer 1: layer 0 is not run
  ASSERT_EQ(one.seen.size(), 1u);
  EXPECT_EQ(one.seen[0], std::make_pair(1, Intermediate::QNormed));
}

// An intervention's gains reach the forward pass as an overlay (model/gain_overlay.h): the pass
// equals one whose weights were written in place, bit for bit; the model's own gains are untouched;
// bypassing every layer's Q and K normalisation equals the same weights without QK-norm.
TEST(GainOverlay, APassWithTheOverlayEqualsWritingTheWeights) {
  c10::InferenceMode inference;
  omn::train::TrainConfig cfg;
  cfg.model.n_layers = 2;
  auto tm = omn::train::initModel(cfg, 40, 9, at::Device(at::kCPU));
  auto& m = *tm.model;
  at::manual_seed(4);
  const at::Tensor tokens = at::randint(40, {2, 10}, at::kLong);
  const auto layout = omn::model::documentLayout(at::zeros({2, 10}, at::kLong));
  const auto path = omn::model::AttentionPath::Masked;
  const at::Tensor own_q1 = m.weights().layers[1].q_norm.clone();
  const at::Tensor new_q1 = at::rand_like(own_q1) * 3;

  omn::model::GainOverlay overlay(cfg.model.n_layers);
  overlay.set(1, true, new_q1, false);
  const at::Tensor with_overlay = m.run(m.embed(tokens), 0, layout, path, nullptr, &overlay);
  EXPECT_TRUE(at::equal(m.weights().layers[1].q_norm, own_q1));  // the model's gain was not written
  EXPECT_FALSE(at::equal(with_overlay, m.run(m.embed(tokens), 0, layout, path)));
  overlay.clear();
  EXPECT_TRUE(at::equal(m.run(m.embed(tokens), 0, layout, path, nullptr, &overlay), m.run(m.embed(tokens), 0, layout, path)));

  omn::model::Weights written = m.weights();
  written.layers[1].q_norm = new_q1;
  const omn::model::Transformer in_place(m.config(), written);
  EXPECT_TRUE(at::equal(with_overlay, in_place.run(in_place.embed(tokens), 0, layout, path)));

  omn::model::GainOverlay bypass(cfg.model.n_layers);
  for (int l = 0; l < 2; ++l)
    for (bool q : {true, false}) bypass.set(l, q, at::Tensor(), true);
  omn::model::ModelConfig no_qk = m.config();
  no_qk.qk_norm = false;
  const omn::model::Transformer without(no_qk, m.weights());
  EXPECT_TRUE(at::equal(m.run(m.embed(tokens), 0, layout, path, nullptr, &bypass), without.run(without.embed(tokens), 0, layout, path)));
}
