// The OMN decoder: pre-norm (or OLMo2 post-norm) blocks with Q/K RMSNorm before RoPE, GQA with
// explicit KV repetition, SwiGLU FFN. The forward pass reads like the maths (transformer.cpp).
#pragma once
#include <ATen/ATen.h>

#include "omn/model/attention.h"
#include "omn/model/config.h"
#include "omn/model/forward_observer.h"
#include "omn/model/gain_overlay.h"
#include "omn/model/rotary.h"
#include "omn/model/weights.h"

namespace omn::model {

class Transformer {
 public:
  Transformer(ModelConfig config, Weights weights);

  const ModelConfig& config() const { return config_; }
  Weights& weights() { return weights_; }
  const Weights& weights() const { return weights_; }

  at::Tensor embed(const at::Tensor& tokens) const;  // [B, T] int64 → [B, T, D]
  // One block: h → h', with the batch's RoPE rotation (made once per pass by run()). `observer`
  // (optional) is told each named intermediate it wants (forward_observer.h); `gains` (optional)
  // stands in for the Q/K gains it replaces (gain_overlay.h: intervene's conditions).
  at::Tensor block(int layer, const at::Tensor& h, const DocumentLayout& layout, const RopeRotation& rope, AttentionPath path,
                   ForwardObserver* observer = nullptr, const GainOverlay* gains = nullptr) const;
  // Blocks [from, n_layers) from hidden state h, then the final norm (announced as FinalHidden).
  at::Tensor run(at::Tensor h, int from, const DocumentLayout& layout, AttentionPath path, ForwardObserver* observer = nullptr,
                 const GainOverlay* gains = nullptr) const;
  const at::Tensor& head() const { return weights_.output; }  // [V, D]
  at::Tensor logits(const at::Tensor& final_hidden) const;     // float32 [B, T, V]

 private:
  at::Tensor norm(const at::Tensor& x, const at::Tensor& gain) const;

  ModelConfig config_;
  Weights weights_;
};

}  // namespace omn::model
