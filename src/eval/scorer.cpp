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
                                const at::Tensor& doc, std::int64_t chunk_tokens, ScoreObserver* observer) {
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
  at::Tensor nll_per_row = at::zeros({B}, at::TensorOptions().dtype(at::kDouble).device(dev));
  const std::int64_t n = idx.size(0);
  // float32 buffers for every chunk, allocated once: a fresh [chunk, V] tensor per chunk costs its
  // page faults every time (at the default chunk, 32 MiB is above glibc's mmap threshold: each one is
  // mapped and faulted in anew, which made a --kl pass 6x a plain one on a 4,096-token vocabulary)
  const std::int64_t rows_max = std::min(chunk_tokens, std::max<std::int64_t>(n, 1));
  at::Tensor buf = at::empty({rows_max, V}, at::TensorOptions().dtype(at::kFloat).device(dev));
  at::Tensor keep_buf = observer ? at::empty({rows_max, V}, buf.options()) : at::Tensor();
  if (observer) observer->beginBatch(B, T, rows_max);
  for (std::int64_t s = 0; s < n; s += chunk_tokens) {
    const std::int64_t len = std::min(chunk_tokens, n - s);
    at::Tensor z = buf.narrow(0, 0, len);  // the logits of this chunk, float32 [len, V]
    chunkLogits(head, h.narrow(0, s, len), z);
    const at::Tensor y = target.narrow(0, s, len).unsqueeze(1);
    const at::Tensor rows_here = row.narrow(0, s, len);
    at::Tensor logp = observer ? keep_buf.narrow(0, 0, len).copy_(z) : at::Tensor();  // kept: z is consumed below
    // −log softmax(z)[y] = logsumexp(z) − z[y], computed in place: max, exp(z − max), sum
    const at::Tensor target_logit = z.gather(1, y).squeeze(1);
    const at::Tensor lse = logSumExpInPlace(z);
    nll_per_row.index_add_(0, rows_here, (lse - target_logit).to(at::kDouble));
    if (!observer) continue;
    logp.sub_(lse.unsqueeze(1));
    observer->observe({logp, y, rows_here, idx.narrow(0, s, len)});
  }
  if (observer) observer->endBatch();
  const at::Tensor counts = valid.view({B, T - 1}).sum(1).to(at::kLong).cpu();
  const at::Tensor sums = nll_per_row.cpu();
  std::vector<RowScore> out(static_cast<std::size_t>(B));
  for (std::int64_t b = 0; b < B; ++b) {
    RowScore& r = out[static_cast<std::size_t>(b)];
    r.nll = sums[b].item<double>();
    r.tokens = counts[b].item<std::int64_t>();
  }
  return out;
}

DivergenceObserver::DivergenceObserver(const model::Transformer& m, const std::vector<at::Tensor>& reference, Divergence& out)
    : m_(m), reference_(reference), out_(out), head_(model::products::weight(m.head())) {}

void DivergenceObserver::beginBatch(std::int64_t B, std::int64_t T, std::int64_t max_chunk) {
  if (batch_ >= reference_.size() || reference_[batch_].size(0) != B || reference_[batch_].size(1) != T)
    throw std::logic_error("DivergenceObserver: batch " + std::to_string(batch_) + " of " + std::to_string(B) + " x " +
                           std::to_string(T) + " has no reference of that shape (" + std::to_string(reference_.size()) +
                           " reference batches)");  // a caller's bug
  const at::Tensor& r = reference_[batch_];
  const at::Device dev = head_.device();
  h_ref_ = r.to(dev).narrow(1, 0, T - 1).reshape({B * (T - 1), r.size(2)});
  if (!ref_buf_.defined() || ref_buf_.size(0) < max_chunk) {  // kept for the pass's next batches: faulted in once
    ref_buf_ = at::empty({max_chunk, m_.head().size(0)}, at::TensorOptions().dtype(at::kFloat).device(dev));
    scratch_buf_ = at::empty_like(ref_buf_);
  }
  const auto dbl = at::TensorOptions().dtype(at::kDouble).device(dev);
  kl_per_row_ = at::zeros({B}, dbl), agree_per_row_ = at::zeros({B}, dbl), dp_per_row_ = at::zeros({B}, dbl);
}

void DivergenceObserver::observe(const ScoredChunk& c) {
  const std::int64_t len = c.logp.size(0);
  // the reference's log-probabilities by the same head and the same log-sum-exp; then every [len, V]
  // step in place or into a buffer
  at::Tensor logp_ref = ref_buf_.narrow(0, 0, len);
  chunkLogits(head_, h_ref_.index_select(0, c.positions), logp_ref);
  at::Tensor scratch = scratch_buf_.narrow(0, 0, len).copy_(logp_ref);
  const at::Tensor lse_ref = logSumExpInPlace(scratch);
  logp_ref.sub_(lse_ref.unsqueeze(1));
  const at::Tensor agree = c.logp.argmax(-1).eq(logp_ref.argmax(-1));
  const at::Tensor dp = c.logp.gather(1, c.target).squeeze(1).exp() - logp_ref.gather(1, c.target).squeeze(1).exp();
  // KL(reference || this) = Σ p_ref · (log p_ref − log p) in nats, >= 0: a negative sum is float32
  // rounding between two nearly equal distributions, clamped (NaN stays NaN)
  at::sub_out(scratch, logp_ref, c.logp);
  scratch.mul_(logp_ref.exp_());  // logp_ref is no longer needed: it holds p_ref now
  const at::Tensor kl = scratch.sum(-1).clamp_min_(0);
  kl_per_row_.index_add_(0, c.rows, kl.to(at::kDouble));
  agree_per_row_.index_add_(0, c.rows, agree.to(at::kDouble));
  dp_per_row_.index_add_(0, c.rows, dp.to(at::kDouble));
  const at::Tensor k = kl.contiguous().cpu();
  out_.kl_tokens.insert(out_.kl_tokens.end(), k.data_ptr<float>(), k.data_ptr<float>() + k.numel());
}

void DivergenceObserver::endBatch() {
  const at::Tensor kls = kl_per_row_.cpu(), agrees = agree_per_row_.cpu(), dps = dp_per_row_.cpu();
  for (std::int64_t b = 0; b < kls.size(0); ++b) {
    out_.kl_sum.push_back(kls[b].item<double>());
    out_.top1_agree.push_back(static_cast<std::int64_t>(agrees[b].item<double>()));
    out_.dp_correct_sum.push_back(dps[b].item<double>());
  }
  ++batch_;
}

}  // namespace omn::eval
