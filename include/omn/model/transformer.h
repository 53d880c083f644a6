// The OMN decoder: pre-norm (or OLMo2 post-norm) blocks with Q/K RMSNorm before RoPE, GQA with
// explicit KV repetition, SwiGLU FFN. The forward pass reads like the maths (transformer.cpp).
#pragma once
#include <ATen/ATen.h>

#include <functional>

#include "omn/model/attention.h"
#include "omn/model/config.h"
#include "omn/model/rotary.h"
#include "omn/model/weights.h"

namespace omn::model {

// What --mechanism and the trainer record for one layer: attention entropy, the largest
// pre-softmax logit, the RMS of the Q and K entering RoPE (after the gain), and the activation
// kurtosis of the block's input.
struct LayerMechanism {
  double mean_entropy = 0, max_logit = 0, q_rms = 0, k_rms = 0, input_kurtosis = 0;
};

// Activation kurtosis in IMU-1's form: the mean over tokens of m4 / m2² over the features, with no
// mean subtraction (3 for Gaussian features; large when a few features dominate). h [..., D].
double activationKurtosis(const at::Tensor& h);

class Transformer {
 public:
  Transformer(ModelConfig config, Weights weights);

  const ModelConfig& config() const { return config_; }
  Weights& weights() { return weights_; }
  const Weights& weights() const { return weights_; }

  at::Tensor embed(const at::Tensor& tokens) const;  // [B, T] int64 → [B, T, D]
  // One block: h → h', with the batch's RoPE rotation (made once per pass by run()). `mech`
  // (optional) receives the layer's attention statistics.
  at::Tensor block(int layer, const at::Tensor& h, const DocumentLayout& layout, const RopeRotation& rope, AttentionPath path,
                   LayerMechanism* mech = nullptr) const;
  // Blocks [from, n_layers) from hidden state h, then the final norm.
  at::Tensor run(at::Tensor h, int from, const DocumentLayout& layout, AttentionPath path,
                 std::vector<LayerMechanism>* mech = nullptr,
                 const std::function<void(int, const at::Tensor&)>& after_block = {}) const;
  const at::Tensor& head() const { return weights_.output; }  // [V, D]
  at::Tensor logits(const at::Tensor& final_hidden) const;     // float32 [B, T, V]

 private:
  at::Tensor norm(const at::Tensor& x, const at::Tensor& gain) const;

  ModelConfig config_;
  Weights weights_;
};

}  // namespace omn::model
