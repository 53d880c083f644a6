// Interventions on the Q/K gains only. Each op computes the new *effective* gains in float32 from
// the checkpoint's stored values and writes them back with one cast to the parameter's stored
// dtype — what `param.fill_(c)` / `param.copy_(x)` does in PyTorch — then into the model's working
// copy. restore() copies the saved values back; digest() lets the caller verify it bitwise.
#pragma once
#include <ATen/ATen.h>

#include <string>
#include <vector>

#include "omn/intervene/manifest.h"
#include "omn/io/checkpoint.h"
#include "omn/model/transformer.h"

namespace omn::intervene {

class GainState {
 public:
  GainState(model::Transformer& model, const io::Checkpoint& ck);

  // Applies the condition; returns the checkpoint names of the tensors it changed. Throws
  // UsageError for impossible requests (a layer past the last, swap_qk on unequal lengths).
  std::vector<std::string> apply(const Condition& c);
  // The same checks, without changing anything: a sweep validates every condition before it starts.
  void check(const Condition& c) const;
  void restore();

  // SHA-256 over the model's live gain tensors (layer-major, Q then K, raw bytes).
  std::string digest() const;
  const std::string& originalDigest() const { return original_digest_; }
  // SHA-256 over the same gains' bytes as stored in the checkpoint file.
  const std::string& checkpointDigest() const { return checkpoint_digest_; }
  int firstLayer(const Condition& c) const;  // the first layer the condition touches

 private:
  at::Tensor& live(int layer, bool q);
  at::Tensor effective(const at::Tensor& stored) const;  // float32 effective gain
  at::Tensor storedFrom(const at::Tensor& effective_f32, const at::Tensor& like) const;

  model::Transformer& model_;
  const model::ModelConfig& config_;
  std::vector<at::Tensor> stored_q_, stored_k_;  // the checkpoint's values, in its dtype
  std::vector<at::Tensor> saved_q_, saved_k_;    // the model's working copies as loaded
  std::string original_digest_, checkpoint_digest_;
};

}  // namespace omn::intervene
