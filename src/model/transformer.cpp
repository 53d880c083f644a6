#include "omn/model/transformer.h"

#include "omn/model/products.h"
#include "omn/model/rms_norm.h"

namespace omn::model {

Transformer::Transformer(ModelConfig config, Weights weights) : config_(std::move(config)), weights_(std::move(weights)) {}

at::Tensor Transformer::embed(const at::Tensor& tokens) const {
  return weights_.embedding.index_select(0, tokens.reshape({-1}).to(weights_.embedding.device()))
      .view({tokens.size(0), tokens.size(1), config_.d_model});
}

at::Tensor Transformer::norm(const at::Tensor& x, const at::Tensor& gain) const {
  return rmsNorm(x, gain, config_.norm_eps, config_.norm_cast);
}

at::Tensor Transformer::block(int i, const at::Tensor& h, const DocumentLayout& layout, const RopeRotation& rope,
                              AttentionPath path, ForwardObserver* observer, const GainOverlay* gains) const {
  const LayerWeights& w = weights_.layers[static_cast<std::size_t>(i)];
  const ModelConfig& c = config_;
  const std::int64_t B = h.size(0), T = h.size(1), hd = c.head_dim;
  const bool pre = c.placement == NormPlacement::Pre;
  auto announce = [&](Intermediate what, const at::Tensor& value, const at::Tensor* keys = nullptr) {
    if (observer && observer->wants(what, i)) observer->observe({what, i, value, layout, keys});
  };
  announce(Intermediate::BlockInput, h);

  // --- attention -------------------------------------------------------------------------------
  const at::Tensor u = pre ? norm(h, w.attention_norm) : h;
  at::Tensor q = products::linear(u, w.wq);  // [B, T, Hq·hd]
  at::Tensor k = products::linear(u, w.wk);  // [B, T, Hkv·hd]
  const at::Tensor v = products::linear(u, w.wv).view({B, T, c.n_kv_heads, hd});
  // QK-Norm, before RoPE: over each head (one gain shared by the heads) or the whole projection,
  // with the gain an intervention's overlay puts in place of the model's; a model trained without
  // it, or a normalisation the overlay bypasses, uses the projection as it is
  auto qkNorm = [&](const at::Tensor& x, bool is_q, std::int64_t heads) {
    const at::Tensor& own = is_q ? w.q_norm : w.k_norm;
    const at::Tensor& gain = gains ? gains->gain(i, is_q, own) : own;
    if (!c.qk_norm || (gains && gains->bypassed(i, is_q))) return x.view({B, T, heads, hd});
    if (c.qk_layout == GainLayout::Head) return rmsNorm(x.view({B, T, heads, hd}), gain, c.qk_norm_eps, c.qk_norm_cast);
    return rmsNorm(x, gain, c.qk_norm_eps, c.qk_norm_cast).view({B, T, heads, hd});
  };
  q = qkNorm(q, true, c.n_heads);
  k = qkNorm(k, false, c.n_kv_heads);
  announce(Intermediate::QNormed, q);
  announce(Intermediate::KNormed, k);
  // RoPE after the norm; positions restart at every document
  q = applyRope(q, rope, c.rope_style);
  k = applyRope(k, rope, c.rope_style);
  // GQA: each KV head explicitly repeated to its group of query heads
  const std::int64_t group = c.n_heads / c.n_kv_heads;
  const at::Tensor kr = group == 1 ? k : k.repeat_interleave(group, /*dim=*/2);
  const at::Tensor vr = group == 1 ? v : v.repeat_interleave(group, /*dim=*/2);
  announce(Intermediate::AttentionInputs, q, &kr);
  const at::Tensor a = attend(path, q, kr, vr, layout).reshape({B, T, c.n_heads * hd});
  announce(Intermediate::AttentionOutput, a);
  const at::Tensor o = products::linear(a, w.wo);
  at::Tensor x = h + (pre ? o : norm(o, w.post_attention_norm));

  // --- SwiGLU feed-forward ---------------------------------------------------------------------
  const at::Tensor u2 = pre ? norm(x, w.ffn_norm) : x;
  at::Tensor gate, up;
  if (c.ffn_fused) {
    const at::Tensor gu = products::linear(u2, w.w13);  // gate rows first, then up
    gate = gu.narrow(-1, 0, c.ffn_hidden);
    up = gu.narrow(-1, c.ffn_hidden, c.ffn_hidden);
  } else {
    gate = products::linear(u2, w.w1);
    up = products::linear(u2, w.w3);
  }
  const at::Tensor f = products::linear(at::silu(gate) * up, w.w2);
  const at::Tensor out = x + (pre ? f : norm(f, w.post_ffn_norm));
  announce(Intermediate::BlockOutput, out);
  return out;
}

at::Tensor Transformer::run(at::Tensor h, int from, const DocumentLayout& layout, AttentionPath path, ForwardObserver* observer,
                            const GainOverlay* gains) const {
  const RopeRotation rope = ropeRotation(layout.positions, config_.head_dim, config_.rope_theta, h.device());
  for (int i = from; i < config_.n_layers; ++i) h = block(i, h, layout, rope, path, observer, gains);
  at::Tensor out = norm(h, weights_.final_norm);
  if (observer && observer->wants(Intermediate::FinalHidden, config_.n_layers))
    observer->observe({Intermediate::FinalHidden, config_.n_layers, out, layout});
  return out;
}

at::Tensor Transformer::logits(const at::Tensor& final_hidden) const {
  return products::linear(final_hidden, weights_.output).to(at::kFloat);
}

}  // namespace omn::model
