#include "omn/eval/scorer.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "omn/model/products.h"

namespace omn::eval {

namespace {

// log Σ exp of each row of z [n, V], computed in place (z becomes exp(z − max)): the one definition
// the NLL and the divergence share
at::Tensor logSumExpInPlace(at::Tensor& z) {
  const at::Tensor mx = std::get<0>(z.max(-1, /*keepdim=*/true));
  return z.sub_(mx).exp_().sum(-1).log_() + mx.squeeze(1);
}

// One chunk's logits [len, V] from hidden states [len, D]: the head product, into `z`; `head` from
// model::products::weight (widened once per call where bf16 products run in float32)
void chunkLogits(const at::Tensor& head, const at::Tensor& h, at::Tensor& z) { model::products::linearInto(z, h, head); }

}  // namespace

std::vector<RowScore> scoreRows(const model::Transformer& m, const at::Tensor& final_hidden, const at::Tensor& tokens,
                                const at::Tensor& doc, std::int64_t chunk_tokens, const at::Tensor& reference_hidden,
                                std::vector<float>* kl_tokens) {
  const std::int64_t B = final_hidden.size(0), T = final_hidden.size(1), D = final_hidden.size(2);
  const std::int64_t V = m.head().size(0);
  // The default chunk: 2^21 / V tokens in bf16 (8 MiB of float32 logits: the conversion and the
  // log-sum-exp then run from cache), 2^23 / V in fp32 (32 MiB: fp32 writes the logits straight
  // from the product, where taller products pay more); at least 16, at most 1,024 tokens.
  // Measured in docs/PERFORMANCE.md.
  const at::Tensor head = model::products::weight(m.head());
  const bool f32 = head.scalar_type() == at::kFloat;
  if (chunk_tokens <= 0) chunk_tokens = std::clamp<std::int64_t>((std::int64_t{f32 ? 8 : 2} << 20) / V, 16, 1024);
  const at::Device dev = final_hidden.device();
  // which positions predict a next token of the same document
  const at::Tensor docs = doc.to(dev), toks = tokens.to(dev);
  const at::Tensor valid = (docs.narrow(1, 1, T - 1) == docs.narrow(1, 0, T - 1)).reshape({-1});
  const at::Tensor idx = valid.nonzero().reshape({-1});                               // into [B·(T−1)]
  const at::Tensor h = final_hidden.narrow(1, 0, T - 1).reshape({B * (T - 1), D}).index_select(0, idx);
  const at::Tensor target = toks.narrow(1, 1, T - 1).reshape({-1}).index_select(0, idx);
  const at::Tensor row = at::floor_divide(idx, T - 1);
  const auto dbl = at::TensorOptions().dtype(at::kDouble).device(dev);
  at::Tensor nll_per_row = at::zeros({B}, dbl);
  const bool compare = reference_hidden.defined();
  if (compare && reference_hidden.sizes() != final_hidden.sizes())
    throw std::logic_error("scoreRows: reference_hidden " + std::to_string(reference_hidden.numel()) + " values for " +
                           std::to_string(final_hidden.numel()));  // a caller's bug
  at::Tensor kl_per_row = at::zeros({B}, dbl), agree_per_row = at::zeros({B}, dbl), dp_per_row = at::zeros({B}, dbl);
  const at::Tensor h_ref = compare ? reference_hidden.to(dev).narrow(1, 0, T - 1).reshape({B * (T - 1), D}).index_select(0, idx) : at::Tensor();
  const std::int64_t n = idx.size(0);
  // float32 buffers for every chunk, allocated once: a fresh [chunk, V] tensor per chunk costs its
  // page faults every time (at the default chunk, 32 MiB is above glibc's mmap threshold: each one is
  // mapped and faulted in anew, which made a --kl pass 6x a plain one on a 4,096-token vocabulary)
  const std::int64_t rows_max = std::min(chunk_tokens, std::max<std::int64_t>(n, 1));
  at::Tensor buf = at::empty({rows_max, V}, at::TensorOptions().dtype(at::kFloat).device(dev));
  at::Tensor ref_buf = compare ? at::empty({rows_max, V}, buf.options()) : at::Tensor();
  at::Tensor keep_buf = compare ? at::empty({rows_max, V}, buf.options()) : at::Tensor();
  for (std::int64_t s = 0; s < n; s += chunk_tokens) {
    const std::int64_t len = std::min(chunk_tokens, n - s);
    at::Tensor z = buf.narrow(0, 0, len);  // the logits of this chunk, float32 [len, V]
    chunkLogits(head, h.narrow(0, s, len), z);
    const at::Tensor y = target.narrow(0, s, len).unsqueeze(1);
    const at::Tensor rows_here = row.narrow(0, s, len);
    at::Tensor logp = compare ? keep_buf.narrow(0, 0, len).copy_(z) : at::Tensor();  // kept: z is consumed below
    // −log softmax(z)[y] = logsumexp(z) − z[y], computed in place: max, exp(z − max), sum
    const at::Tensor target_logit = z.gather(1, y).squeeze(1);
    const at::Tensor lse = logSumExpInPlace(z);
    nll_per_row.index_add_(0, rows_here, (lse - target_logit).to(at::kDouble));
    if (!compare) continue;
    // the reference's log-probabilities by the same head and the same log-sum-exp (on a copy in z's
    // buffer, free now); then every [len, V] step in place or into a buffer
    at::Tensor logp_ref = ref_buf.narrow(0, 0, len);
    chunkLogits(head, h_ref.narrow(0, s, len), logp_ref);
    at::Tensor scratch = z.copy_(logp_ref);
    const at::Tensor lse_ref = logSumExpInPlace(scratch);
    logp.sub_(lse.unsqueeze(1));
    logp_ref.sub_(lse_ref.unsqueeze(1));
    const at::Tensor agree = logp.argmax(-1).eq(logp_ref.argmax(-1));
    const at::Tensor dp = logp.gather(1, y).squeeze(1).exp() - logp_ref.gather(1, y).squeeze(1).exp();
    // KL(reference || this) = Σ p_ref · (log p_ref − log p) in nats, >= 0: a negative sum is float32
    // rounding between two nearly equal distributions, clamped (NaN stays NaN)
    at::sub_out(scratch, logp_ref, logp);
    scratch.mul_(at::exp_out(logp, logp_ref));  // logp is no longer needed: it holds p_ref now
    const at::Tensor kl = scratch.sum(-1).clamp_min_(0);
    kl_per_row.index_add_(0, rows_here, kl.to(at::kDouble));
    agree_per_row.index_add_(0, rows_here, agree.to(at::kDouble));
    dp_per_row.index_add_(0, rows_here, dp.to(at::kDouble));
    if (kl_tokens) {
      const at::Tensor k = kl.contiguous().cpu();
      kl_tokens->insert(kl_tokens->end(), k.data_ptr<float>(), k.data_ptr<float>() + k.numel());
    }
  }
  const at::Tensor counts = valid.view({B, T - 1}).sum(1).to(at::kLong).cpu();
  const at::Tensor sums = nll_per_row.cpu(), kls = kl_per_row.cpu(), agrees = agree_per_row.cpu(), dps = dp_per_row.cpu();
  std::vector<RowScore> out(static_cast<std::size_t>(B));
  for (std::int64_t b = 0; b < B; ++b) {
    RowScore& r = out[static_cast<std::size_t>(b)];
    r.nll = sums[b].item<double>();
    r.tokens = counts[b].item<std::int64_t>();
    r.kl = kls[b].item<double>();
    r.top1_agree = static_cast<std::int64_t>(agrees[b].item<double>());
    r.dp_correct = dps[b].item<double>();
  }
  return out;
}

}  // namespace omn::eval
