#include "omn/eval/mechanism.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "omn/model/attention.h"

namespace omn::eval {

double activationKurtosis(const at::Tensor& h) {
  const at::Tensor x2 = h.to(at::kDouble).pow(2);
  const at::Tensor m2 = x2.mean(-1), m4 = x2.pow(2).mean(-1);  // per token, over the features
  return (m4 / m2.pow(2)).mean().item<double>();
}

namespace {
double rms(const at::Tensor& x) { return x.to(at::kFloat).pow(2).mean().sqrt().item<double>(); }
}  // namespace

bool MechanismObserver::wants(model::Intermediate what, int layer) const {
  using model::Intermediate;
  return layer >= 0 && static_cast<std::size_t>(layer) < layers_.size() &&
         (what == Intermediate::BlockInput || what == Intermediate::QNormed || what == Intermediate::KNormed ||
          what == Intermediate::AttentionInputs);
}

AttentionStats attentionStats(const at::Tensor& q, const at::Tensor& k, const model::DocumentLayout& l, std::int64_t block_bytes) {
  const double scale = 1.0 / std::sqrt(static_cast<double>(q.size(-1)));
  const at::Tensor qf = q.to(at::kFloat).transpose(1, 2), kf = k.to(at::kFloat).transpose(1, 2);  // [B, H, T, hd]
  const std::int64_t B = qf.size(0), H = qf.size(1), T = qf.size(2);
  const at::Tensor doc = l.doc.to(q.device());
  // Blocks of query rows, so the scores never exist as [B, H, T, T]: at 32,768 tokens and 12 heads
  // that would be 48 GiB; a block is [B, H, rows, T] float32 within block_bytes.
  const std::int64_t rows = std::clamp<std::int64_t>(block_bytes / std::max<std::int64_t>(1, B * H * T * 4), 1, T);
  double max_logit = -std::numeric_limits<double>::infinity(), entropy_sum = 0;
  for (std::int64_t r0 = 0; r0 < T; r0 += rows) {
    const std::int64_t n = std::min(rows, T - r0);
    at::Tensor s = at::matmul(qf.narrow(2, r0, n), kf.transpose(-2, -1)).mul_(scale);  // [B, H, n, T]
    const at::Tensor hidden = model::documentCausalMask(doc, r0, n).logical_not().unsqueeze(1);  // [B, 1, n, T]
    s.masked_fill_(hidden, -std::numeric_limits<float>::infinity());
    max_logit = std::max(max_logit, s.max().item<double>());  // every query sees at least itself
    // entropy = -sum p log p = lse - sum p s (sum p = 1), p = exp(s - lse): 0 on hidden keys
    const at::Tensor lse = at::logsumexp(s, -1, /*keepdim=*/true);
    const at::Tensor p = (s - lse).exp_();
    const at::Tensor ps = (p * s.masked_fill_(hidden, 0)).sum(-1);
    entropy_sum += (lse.squeeze(-1) - ps).to(at::kDouble).sum().item<double>();
  }
  AttentionStats st;
  st.max_attention_logit = max_logit;
  st.attention_entropy = entropy_sum / static_cast<double>(B * H * T);  // every query sees at least itself
  return st;
}

void MechanismObserver::observe(const model::Announcement& a) {
  LayerMechanism& m = layers_[static_cast<std::size_t>(a.layer)];
  switch (a.what) {
    case model::Intermediate::BlockInput: m.input_kurtosis = activationKurtosis(a.value); break;
    case model::Intermediate::QNormed: m.q_rms = rms(a.value); break;
    case model::Intermediate::KNormed: m.k_rms = rms(a.value); break;
    case model::Intermediate::AttentionInputs: {
      const AttentionStats st = attentionStats(a.value, *a.keys, a.layout);
      m.attention_entropy = st.attention_entropy;
      m.max_attention_logit = st.max_attention_logit;
      break;
    }
    default: break;
  }
}

}  // namespace omn::eval
