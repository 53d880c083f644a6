// Interventions on the Q/K gains only. Each condition's steps compute new *effective* gains in
// float32, each step from the values the one before left (the first from the checkpoint's stored
// values); the result is cast once to the parameter's stored dtype — what `param.fill_(c)` /
// `param.copy_(x)` does in PyTorch — then to the model's working dtype, and put in an overlay the
// forward pass reads in place of the model's gains (model/gain_overlay.h). The model's weights are
// never written: restore() empties the overlay, and digest() shows the model's gains unchanged.
#pragma once
#include <ATen/ATen.h>

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "omn/documents/intervention_document.h"
#include "omn/intervene/manifest.h"
#include "omn/io/checkpoint.h"
#include "omn/model/transformer.h"

namespace omn::intervene {

// What apply() wrote: the checkpoint names of the tensors it changed and, per written vector,
// {layer, role, bypassed, coordinates (how many the steps chose), changed (how many now differ from
// the checkpoint's stored values), mean, min, max (of the effective gain as written)}.
struct AppliedGains {
  std::vector<std::string> touched;
  std::vector<documents::AppliedVector> vectors;  // each vector written, as the result records it
};

class GainState {
 public:
  GainState(const model::Transformer& model, const io::Checkpoint& ck);

  // transplant's sources: every distinct checkpoint the conditions name, hashed and verified
  // (IntegrityError on a mismatch), its Q/K gains read by the model's tensor names (UsageError
  // naming the pointer when one is missing or of another length). Call before check()/apply().
  void loadSources(const std::vector<Condition>& conditions);

  // Applies the condition. Throws UsageError naming the manifest pointer for impossible requests
  // (a layer past the last, swap_qk on unequal lengths, a coordinate past a vector's end,
  // rescale_pattern of a vector whose mean is 0).
  AppliedGains apply(const Condition& c);
  // What the next pass reads in place of the model's gains (empty after restore()).
  const model::GainOverlay& overlay() const { return overlay_; }
  // The same computation and checks, without changing anything: a sweep validates every
  // condition before it starts.
  void check(const Condition& c) const;
  void restore();

  // SHA-256 over the gains a pass uses now, the overlay's where it has one and the model's elsewhere
  // (layer-major, Q then K, raw bytes of the working dtype).
  std::string digest() const;
  const std::string& originalDigest() const { return original_digest_; }
  // SHA-256 over the same gains' bytes as stored in the checkpoint file.
  const std::string& checkpointDigest() const { return checkpoint_digest_; }
  int firstLayer(const Condition& c) const;  // the first layer the condition touches

 private:
  // float32 effective gains, one per vector: index 2 * layer + (Q ? 0 : 1)
  using Vectors = std::vector<at::Tensor>;
  struct Computed {
    Vectors values;
    std::vector<bool> written;
    std::vector<bool> bypassed;  // bypass: the normalisation removed (the gain then unused)
    std::vector<std::int64_t> chosen;  // coordinates chosen, summed over the steps
  };
  Computed compute(const Condition& c) const;
  void applyStep(const Step& s, Computed& cur) const;
  at::Tensor chooseCoordinates(const Step& s, const at::Tensor& g) const;  // ascending indices

  const at::Tensor& own(int layer, bool q) const;  // the model's working gain
  // the dtype the model computes in (the working copy's), which a written gain must also fit
  at::ScalarType workingType(int layer, bool q) const { return own(layer, q).scalar_type(); }
  const at::Tensor& stored(int layer, bool q) const { return (q ? stored_q_ : stored_k_)[static_cast<std::size_t>(layer)]; }
  at::Tensor effective(const at::Tensor& stored) const;  // float32 effective gain
  at::Tensor storedFrom(const at::Tensor& effective_f32, const at::Tensor& like) const;

  const model::Transformer& model_;
  const model::ModelConfig& config_;
  std::vector<at::Tensor> stored_q_, stored_k_;  // the checkpoint's values, in its dtype
  model::GainOverlay overlay_;
  std::map<std::string, Vectors> sources_;       // transplant: effective float32 gains per sourceKey
  static std::string sourceKey(const Step& s);
  std::string original_digest_, checkpoint_digest_;
};

}  // namespace omn::intervene
