#include "omn/eval/mechanism.h"

#include <algorithm>

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

void MechanismObserver::observe(const model::Announcement& a) {
  LayerMechanism& m = layers_[static_cast<std::size_t>(a.layer)];
  switch (a.what) {
    case model::Intermediate::BlockInput: m.input_kurtosis = activationKurtosis(a.value); break;
    case model::Intermediate::QNormed: m.q_rms = rms(a.value); break;
    case model::Intermediate::KNormed: m.k_rms = rms(a.value); break;
    case model::Intermediate::AttentionInputs: {
      const model::AttentionStats st = model::attentionStats(a.value, *a.keys, a.layout);
      m.attention_entropy = st.mean_entropy;
      m.max_attention_logit = st.max_logit;
      break;
    }
    default: break;
  }
}

}  // namespace omn::eval
