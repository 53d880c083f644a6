#include "omn/eval/scorer.h"

#include <algorithm>

namespace omn::eval {

std::vector<RowScore> scoreRows(const model::Transformer& m, const at::Tensor& final_hidden, const at::Tensor& tokens,
                                const at::Tensor& doc, std::int64_t chunk_tokens) {
  const std::int64_t B = final_hidden.size(0), T = final_hidden.size(1), D = final_hidden.size(2);
  const std::int64_t V = m.head().size(0);
  // The default chunk: 2^21 / V tokens in bf16 (8 MiB of float32 logits: the conversion and the
  // log-sum-exp then run from cache), 2^23 / V in fp32 (32 MiB: fp32 writes the logits straight
  // from the product, where taller products pay more); at least 16, at most 1,024 tokens.
  // Measured in docs/PERFORMANCE.md.
  const bool f32 = m.head().scalar_type() == at::kFloat;
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
  // one float32 buffer for every chunk: a fresh tensor per chunk would cost page faults each time
  at::Tensor buf = at::empty({std::min(chunk_tokens, std::max<std::int64_t>(n, 1)), V},
                             at::TensorOptions().dtype(at::kFloat).device(dev));
  for (std::int64_t s = 0; s < n; s += chunk_tokens) {
    const std::int64_t len = std::min(chunk_tokens, n - s);
    at::Tensor z = buf.narrow(0, 0, len);  // the logits of this chunk, float32 [len, V]
    if (f32) at::mm_out(z, h.narrow(0, s, len), m.head().t());
    else z.copy_(at::linear(h.narrow(0, s, len), m.head()));
    // −log softmax(z)[y] = logsumexp(z) − z[y], computed in place: max, exp(z − max), sum
    const at::Tensor target_logit = z.gather(1, target.narrow(0, s, len).unsqueeze(1)).squeeze(1);
    const at::Tensor mx = std::get<0>(z.max(-1, /*keepdim=*/true));
    const at::Tensor lse = z.sub_(mx).exp_().sum(-1).log_() + mx.squeeze(1);
    nll_per_row.index_add_(0, row.narrow(0, s, len), (lse - target_logit).to(at::kDouble));
  }
  const at::Tensor counts = valid.view({B, T - 1}).sum(1).to(at::kLong).cpu();
  const at::Tensor sums = nll_per_row.cpu();
  std::vector<RowScore> out(static_cast<std::size_t>(B));
  for (std::int64_t b = 0; b < B; ++b) {
    out[static_cast<std::size_t>(b)].nll = sums[b].item<double>();
    out[static_cast<std::size_t>(b)].tokens = counts[b].item<std::int64_t>();
  }
  return out;
}

}  // namespace omn::eval
