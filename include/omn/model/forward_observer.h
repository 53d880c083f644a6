// The intermediates a forward pass names, as llama.cpp's graph names them (cb(cur, "Qcur_normed",
// il)): each block announces each one once, as it is made, to the observer its caller passes, and
// whoever wants one subscribes -- the mechanism statistics (eval/mechanism.h), the activation cache
// (eval/evaluator.cpp), a probe. The forward pass computes nothing for an observer: what is not
// wanted is not announced, and without an observer a pass is exactly the bare arithmetic (no
// statistic, no host synchronisation).
#pragma once
#include <ATen/ATen.h>

#include <array>
#include <vector>

#include "omn/model/attention.h"

namespace omn::model {

enum class Intermediate {
  BlockInput,      // h [B, T, D]: the residual stream entering the block
  QNormed,         // q [B, T, Hq, hd]: after QK-Norm (the gain applied), before RoPE
  KNormed,         // k [B, T, Hkv, hd]: likewise
  AttentionInputs, // q [B, T, Hq, hd] with `keys` [B, T, Hq, hd]: after RoPE, K repeated to the query heads
  AttentionOutput, // [B, T, Hq·hd]: the heads' output before wo
  BlockOutput,     // h' [B, T, D]: the residual stream leaving the block
  FinalHidden,     // [B, T, D]: after the last block and the final norm, what the head reads (announced by
                   // Transformer::run with layer = n_layers)
};
inline constexpr std::array<const char*, 7> kIntermediateNames{"block_input",      "q_normed",         "k_normed",     "attention_inputs",
                                                               "attention_output", "block_output",     "final_hidden"};
inline const char* intermediateName(Intermediate i) { return kIntermediateNames[static_cast<std::size_t>(i)]; }

struct Announcement {
  Intermediate what;
  int layer;
  const at::Tensor& value;
  const DocumentLayout& layout;
  const at::Tensor* keys = nullptr;  // AttentionInputs only
};

class ForwardObserver {
 public:
  virtual ~ForwardObserver() = default;
  // Asked before each announcement: false, and the intermediate is not announced.
  virtual bool wants(Intermediate what, int layer) const = 0;
  virtual void observe(const Announcement& a) = 0;
};

// Several observers as one: each is asked and told in the order added (null entries skipped).
class ObserverSet final : public ForwardObserver {
 public:
  void add(ForwardObserver* o) {
    if (o) observers_.push_back(o);
  }
  bool empty() const { return observers_.empty(); }
  bool wants(Intermediate what, int layer) const override {
    for (const ForwardObserver* o : observers_)
      if (o->wants(what, layer)) return true;
    return false;
  }
  void observe(const Announcement& a) override {
    for (ForwardObserver* o : observers_)
      if (o->wants(a.what, a.layer)) o->observe(a);
  }

 private:
  std::vector<ForwardObserver*> observers_;
};

}  // namespace omn::model
