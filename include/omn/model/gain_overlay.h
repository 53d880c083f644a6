// Q/K gains that stand in for the model's during a pass -- an intervention's condition -- so the
// weights themselves are never written (they may be views of the checkpoint's mapping, and the
// evaluator reads them as const). Per layer and role: a replacement gain (the working dtype, on the
// model's device) or none, and whether the normalisation is bypassed (no RMS division and no gain:
// the projection goes to RoPE as it is). The forward pass reads it (Transformer::block); nothing
// of it outlives the pass that was given it.
#pragma once
#include <ATen/ATen.h>

#include <vector>

namespace omn::model {

class GainOverlay {
 public:
  explicit GainOverlay(int n_layers = 0) : entries_(2 * static_cast<std::size_t>(n_layers)) {}
  void set(int layer, bool q, at::Tensor gain, bool bypassed) { entries_.at(slot(layer, q)) = {std::move(gain), bypassed}; }
  void clear() {
    for (Entry& e : entries_) e = {};
  }
  // The gain the pass uses for this layer and role: the replacement, or the model's own.
  const at::Tensor& gain(int layer, bool q, const at::Tensor& own) const {
    const Entry& e = entries_.at(slot(layer, q));
    return e.gain.defined() ? e.gain : own;
  }
  bool bypassed(int layer, bool q) const { return entries_.at(slot(layer, q)).bypassed; }

 private:
  struct Entry {
    at::Tensor gain;  // undefined: the model's own
    bool bypassed = false;
  };
  static std::size_t slot(int layer, bool q) { return 2 * static_cast<std::size_t>(layer) + (q ? 0 : 1); }
  std::vector<Entry> entries_;
};

}  // namespace omn::model
