#include "omn/intervene/ops.h"

#include <cstring>

#include "omn/errors.h"
#include "omn/eval/token_set.h"
#include "omn/io/sha256.h"
#include "omn/model/weights.h"

namespace omn::intervene {

namespace {
std::string sha256OfTensors(const std::vector<const at::Tensor*>& ts) {
  std::string bytes;
  for (const at::Tensor* t : ts) {
    const at::Tensor c = t->contiguous().cpu();
    bytes.append(static_cast<const char*>(c.data_ptr()), c.numel() * c.element_size());
  }
  return io::sha256Bytes(bytes.data(), bytes.size());
}
}  // namespace

GainState::GainState(model::Transformer& model, const io::Checkpoint& ck) : model_(model), config_(model.config()) {
  if (!config_.qk_norm)
    throw UsageError(ck.path + ": the model has no Q/K gains (trained without QK-norm): intervene has no gain to change");
  std::string file_bytes;
  for (int i = 0; i < config_.n_layers; ++i)
    for (bool q : {true, false}) {
      const std::string name = config_.name(q ? "q_norm" : "k_norm", i);
      const io::TensorRef& ref = ck.index.at(name);
      // an integer gain would take every new value rounded to an integer ("constant 1.5" would be 1)
      if (!io::isFloatingPoint(ref.dtype))
        throw FormatError(ck.path + ": tensor '" + name + "': expected a floating-point gain, got " + io::dtypeName(ref.dtype) +
                          ": an intervention could not write its values");
      const std::vector<std::uint8_t> b = io::readBytes(ref);
      file_bytes.append(reinterpret_cast<const char*>(b.data()), b.size());
      (q ? stored_q_ : stored_k_).push_back(model::toTensor(ref, model::scalarType(ref.dtype), at::kCPU, /*owned=*/true));
      (q ? saved_q_ : saved_k_).push_back(live(i, q).clone());
    }
  checkpoint_digest_ = io::sha256Bytes(file_bytes.data(), file_bytes.size());
  original_digest_ = digest();
}

at::Tensor& GainState::live(int layer, bool q) {
  auto& l = model_.weights().layers[static_cast<std::size_t>(layer)];
  return q ? l.q_norm : l.k_norm;
}

at::Tensor GainState::effective(const at::Tensor& stored) const {
  const at::Tensor f = stored.to(at::kFloat);
  return config_.gain_param == model::GainParametrisation::OnePlus ? f + 1.0 : f;
}

at::Tensor GainState::storedFrom(const at::Tensor& eff, const at::Tensor& like) const {
  const at::Tensor w = config_.gain_param == model::GainParametrisation::OnePlus ? eff - 1.0 : eff;
  return w.to(like.scalar_type());  // the one rounding, as param.copy_/fill_ would
}

void GainState::check(const Condition& c) const {
  const std::vector<int> layers = c.layers.resolve(config_.n_layers, c.pointer);
  if (c.op == Op::CopyLayer && (c.source_layer < 0 || c.source_layer >= config_.n_layers))
    throw UsageError("manifest: " + c.pointer + "/source_layers: layer " + std::to_string(c.source_layer) +
                     " does not exist (the model has " + std::to_string(config_.n_layers) + " layers)");
  if (c.op == Op::CopyLayer)
    for (int l : layers)
      for (const auto* stored : {&stored_q_, &stored_k_}) {
        if ((stored == &stored_q_ && c.target == Target::K) || (stored == &stored_k_ && c.target == Target::Q)) continue;
        if ((*stored)[static_cast<std::size_t>(l)].sizes() != (*stored)[static_cast<std::size_t>(c.source_layer)].sizes())
          throw UsageError("manifest: " + c.pointer + ": copy_layer between gains of different shapes");
      }
  if (c.op == Op::SwapQK)
    for (int l : layers)
      if (stored_q_[static_cast<std::size_t>(l)].sizes() != stored_k_[static_cast<std::size_t>(l)].sizes())
        throw UsageError("manifest: " + c.pointer + ": swap_qk needs Q and K gains of one length (this preset's differ)");
}

int GainState::firstLayer(const Condition& c) const {
  const auto layers = c.layers.resolve(config_.n_layers, c.pointer);
  return layers.empty() ? config_.n_layers : layers.front();
}

std::vector<std::string> GainState::apply(const Condition& c) {
  check(c);  // the one validation of source layers and shapes, before any gain is touched
  const std::vector<int> layers = c.layers.resolve(config_.n_layers, c.pointer);
  std::vector<bool> roles;
  if (c.target != Target::K) roles.push_back(true);
  if (c.target != Target::Q) roles.push_back(false);
  auto original = [&](int l, bool q) -> const at::Tensor& {
    return (q ? stored_q_ : stored_k_)[static_cast<std::size_t>(l)];
  };
  // global_mean: one mean over every targeted coordinate (float64)
  double global = 0;
  if (c.op == Op::GlobalMean) {
    double sum = 0;
    std::int64_t n = 0;
    for (int l : layers)
      for (bool q : roles) {
        sum += effective(original(l, q)).to(at::kDouble).sum().item<double>();
        n += original(l, q).numel();
      }
    global = sum / static_cast<double>(n);
  }
  std::vector<std::string> touched;
  for (int l : layers)
    for (bool q : roles) {
      const at::Tensor& orig = original(l, q);
      const at::Tensor g = effective(orig);
      at::Tensor out;
      switch (c.op) {
        case Op::Constant: out = at::full_like(g, c.value); break;
        case Op::Scale: out = g * c.value; break;
        case Op::VectorMean: out = at::full_like(g, g.to(at::kDouble).mean().item<double>()); break;
        case Op::GlobalMean: out = at::full_like(g, global); break;
        case Op::Permute: {
          // Fisher-Yates with SplitMix64, one stream per vector: seed ^ (layer << 32) ^ role
          eval::SplitMix64 rng(c.seed ^ (static_cast<std::uint64_t>(l) << 32) ^ (q ? 0u : 1u));
          std::vector<std::int64_t> perm(static_cast<std::size_t>(g.numel()));
          for (std::size_t i = 0; i < perm.size(); ++i) perm[i] = static_cast<std::int64_t>(i);
          for (std::size_t i = perm.size(); i-- > 1;) std::swap(perm[i], perm[rng.below(i + 1)]);
          out = g.index_select(0, at::tensor(perm, at::kLong));
          break;
        }
        case Op::SignFix: out = c.mode == "zero" ? g.clamp_min(0) : g.abs(); break;
        case Op::CopyLayer: out = effective(original(c.source_layer, q)); break;  // shapes equal: check()
        case Op::SwapQK: out = effective(original(l, !q)); break;  // lengths equal: check()
      }
      const at::Tensor stored = storedFrom(out, orig);
      live(l, q).copy_(stored);  // into the working dtype and device
      touched.push_back(config_.name(q ? "q_norm" : "k_norm", l));
    }
  return touched;
}

void GainState::restore() {
  for (int i = 0; i < config_.n_layers; ++i) {
    live(i, true).copy_(saved_q_[static_cast<std::size_t>(i)]);
    live(i, false).copy_(saved_k_[static_cast<std::size_t>(i)]);
  }
}

std::string GainState::digest() const {
  std::vector<const at::Tensor*> ts;
  for (const auto& l : model_.weights().layers) {
    ts.push_back(&l.q_norm);
    ts.push_back(&l.k_norm);
  }
  return sha256OfTensors(ts);
}

}  // namespace omn::intervene
