// What --mechanism and the trainer record for one layer: attention entropy, the largest
// pre-softmax logit, the RMS of the Q and K entering RoPE (after the gain), and the activation
// kurtosis of the block's input. Measured by a forward-pass observer (model/forward_observer.h):
// a pass without it computes none of these and never waits on the device for them.
#pragma once
#include <ATen/ATen.h>

#include <vector>

#include "omn/documents/layer_metrics.h"
#include "omn/model/attention.h"
#include "omn/model/forward_observer.h"

namespace omn::eval {

// One layer's statistics: the one metric type (documents/layer_metrics.h), whose table names each
// and says how a pass's batches fold into it (documents::foldBatch). A new statistic is a field and
// a row there and its computation in MechanismObserver::observe (mechanism.cpp).
using LayerMechanism = documents::LayerMetrics;
using documents::foldBatch;

// Activation kurtosis in IMU-1's form: the mean over tokens of m4 / m2² over the features, with no
// mean subtraction (3 for Gaussian features; large when a few features dominate). h [..., D].
double activationKurtosis(const at::Tensor& h);

// The per-head softmax statistics of one layer, from its reference scores: the mean attention
// entropy (nats) and the largest pre-softmax logit. Computed a block of query rows at a time
// ([B, H, rows, T] float32 within block_bytes, default 64 MiB), never [B, H, T, T], so it works at
// training length (32,768 tokens); tests pass a small block to exercise the loop. q, k [B, T, H, D].
struct AttentionStats {
  double attention_entropy = 0, max_attention_logit = 0;
};
AttentionStats attentionStats(const at::Tensor& q, const at::Tensor& k, const model::DocumentLayout& layout,
                              std::int64_t block_bytes = std::int64_t{64} << 20);

// One pass's statistics, per layer (layers the pass did not run stay zero).
class MechanismObserver final : public model::ForwardObserver {
 public:
  explicit MechanismObserver(int n_layers) : layers_(static_cast<std::size_t>(n_layers)) {}
  bool wants(model::Intermediate what, int layer) const override;
  void observe(const model::Announcement& a) override;
  const std::vector<LayerMechanism>& layers() const { return layers_; }

 private:
  std::vector<LayerMechanism> layers_;
};

}  // namespace omn::eval
