#include "omn/train/parameters.h"

#include <ATen/CPUGeneratorImpl.h>

#include <cmath>
#include <set>

#include "omn/errors.h"
#include "omn/io/checkpoint.h"
#include "omn/model/preset.h"
#include "omn/model/weights.h"

namespace omn::train {

std::int64_t TrainableModel::count() const {
  std::int64_t n = 0;
  for (const auto& p : params) n += p.value.numel();
  return n;
}

model::ModelConfig modelConfig(const ModelShape& s, std::int64_t vocab) {
  const model::Preset p = model::loadPreset("omn");
  model::ModelConfig c;
  c.preset = p.name;
  c.tensors = p.tensors;
  c.n_layers = s.n_layers;
  c.d_model = s.d_model;
  c.n_heads = s.n_heads;
  c.n_kv_heads = s.n_kv_heads;
  c.head_dim = s.head_dim;
  c.ffn_hidden = s.ffn_hidden;
  c.vocab_size = vocab;
  c.norm_eps = s.norm_eps;
  c.qk_norm_eps = s.qk_norm_eps;
  c.rope_theta = s.rope_theta;
  c.ffn_fused = true;
  c.tied_output = false;
  c.qk_norm = s.qk_norm;
  return c;
}

namespace {

TrainableModel wrap(model::ModelConfig config, model::Weights w) {
  static const std::set<std::string> hidden = {"wq", "wk", "wv", "wo", "w13", "w2"};
  TrainableModel m;
  m.config = std::move(config);
  std::vector<Parameter> params;
  for (const auto& [name, t] : model::namedTensors(w, m.config)) {
    t->set_requires_grad(true);
    Parameter p{name, *t, false, t->dim() == 2};
    for (int i = 0; i < m.config.n_layers; ++i) {
      for (const auto& role : hidden) p.hidden_matrix = p.hidden_matrix || name == m.config.name(role, i);
      if (m.config.qk_norm) p.qk_gain = p.qk_gain || name == m.config.name("q_norm", i) || name == m.config.name("k_norm", i);
    }
    params.push_back(std::move(p));
  }
  m.params = std::move(params);
  m.model = std::make_unique<model::Transformer>(m.config, std::move(w));
  return m;
}

}  // namespace

double parameterCount(const ModelShape& s, std::int64_t vocab) {
  const double D = static_cast<double>(s.d_model), hd = static_cast<double>(s.head_dim), F = static_cast<double>(s.ffn_hidden);
  const double q = static_cast<double>(s.n_heads) * hd, kv = static_cast<double>(s.n_kv_heads) * hd;
  const double layer = 2 * D                              // attention_norm, ffn_norm
                       + q * D + 2 * kv * D + D * q          // wq, wk, wv, wo
                       + (s.qk_norm ? 2 * hd : 0)            // q_norm, k_norm
                       + 2 * F * D + D * F;                  // w13, w2
  return 2 * static_cast<double>(vocab) * D + D + static_cast<double>(s.n_layers) * layer;  // embedding, output, final_norm
}

TrainableModel initModel(const TrainConfig& c, std::int64_t vocab, std::uint64_t seed, const at::Device& device) {
  const model::ModelConfig cfg = modelConfig(c.model, vocab);
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  const double std = c.init_std, residual_std = c.init_std / std::sqrt(2.0 * cfg.n_layers);
  auto normal = [&](std::vector<std::int64_t> shape, double s) {
    return at::normal(0.0, s, shape, gen, at::TensorOptions().dtype(at::kFloat)).to(device);
  };
  auto ones = [&](std::int64_t n) { return at::ones({n}, at::TensorOptions().dtype(at::kFloat).device(device)); };
  const std::int64_t D = cfg.d_model, hd = cfg.head_dim, Hq = cfg.n_heads, Hk = cfg.n_kv_heads, F = cfg.ffn_hidden;
  model::Weights w;
  w.dtype = at::kFloat;
  w.embedding = normal({vocab, D}, std);
  for (int i = 0; i < cfg.n_layers; ++i) {
    model::LayerWeights l;
    l.attention_norm = ones(D);
    l.wq = normal({Hq * hd, D}, std);
    l.wk = normal({Hk * hd, D}, std);
    l.wv = normal({Hk * hd, D}, std);
    l.wo = normal({D, Hq * hd}, residual_std);
    if (cfg.qk_norm) {
      l.q_norm = ones(hd);
      l.k_norm = ones(hd);
    }
    l.ffn_norm = ones(D);
    l.w13 = normal({2 * F, D}, std);
    l.w2 = normal({D, F}, residual_std);
    w.layers.push_back(std::move(l));
  }
  w.final_norm = ones(D);
  w.output = normal({vocab, D}, std);
  w.copied = model::namedTensors(w, cfg).size();
  return wrap(cfg, std::move(w));
}

TrainableModel loadModel(const std::string& path, const TrainConfig& c, std::int64_t vocab, const at::Device& device) {
  const auto ck = io::openCheckpoint(path);
  model::Preset p = model::resolvePreset("omn", ck->index, ck->metadata, path);
  // what neither the tensors nor a recorded architecture say (a checkpoint from elsewhere), the
  // config says; every value is then compared with the config's below
  const nlohmann::json from_config = {{"head_dim", c.model.head_dim}, {"rope_theta", c.model.rope_theta},
                                      {"norm_eps", c.model.norm_eps}, {"qk_norm_eps", c.model.qk_norm_eps}};
  for (auto it = from_config.begin(); it != from_config.end(); ++it)
    if (!p.architecture.contains(it.key())) p.architecture[it.key()] = it.value();
  const model::ModelConfig got = model::inferConfig(p, ck->index, path);
  const model::ModelConfig want = modelConfig(c.model, vocab);
  const nlohmann::json a = model::toJson(got), b = model::toJson(want);
  for (auto it = b.begin(); it != b.end(); ++it)
    if (a[it.key()] != it.value())
      throw UsageError("training config " + c.path + ": /init/from " + path + ": the checkpoint's " + it.key() + " is " +
                       a[it.key()].dump() + ", the config's model says " + it.value().dump());
  return wrap(want, model::loadOwnedWeights(*ck, want, at::kFloat, device));
}

std::vector<io::TensorRecord> tensorRecords(const std::vector<Parameter>& params, std::vector<at::Tensor>& keep) {
  std::vector<io::TensorRecord> out;
  keep.clear();
  for (const auto& p : params) {
    keep.push_back(p.value.detach().to(at::kCPU, at::kFloat).contiguous());
    const at::Tensor& t = keep.back();
    out.push_back({p.name, io::DType::F32, t.sizes().vec(), t.data_ptr(), static_cast<std::size_t>(t.numel()) * 4});
  }
  return out;
}

}  // namespace omn::train
