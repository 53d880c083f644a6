#include "omn/model/config.h"

#include "omn/errors.h"

namespace omn::model {

namespace {

const io::TensorRef& need(const io::TensorIndex& index, const std::string& name, const std::string& role) {
  const io::TensorRef* t = index.find(name);
  if (!t) throw FormatError("tensor '" + name + "' (" + role + ") is missing from the checkpoint");
  return *t;
}

// A tensor the model reads: floating-point (an integer gain or weight is no model's: it was never
// trained as such) and of the shape the dimensions imply.
void expectTensor(const io::TensorRef& t, const std::vector<std::int64_t>& want) {
  if (!io::isFloatingPoint(t.dtype))
    throw FormatError("tensor '" + t.name + "': expected a floating-point tensor, got " + io::dtypeName(t.dtype));
  if (t.shape != want)
    throw FormatError("tensor '" + t.name + "': expected shape " + io::shapeString(want) + ", got " + io::shapeString(t.shape));
}

// What the tensors of `file` contradict, named with the file: FormatErrors from `check` get it as prefix.
template <class F>
auto inFile(const std::string& file, F&& check) {
  try {
    return check();
  } catch (const FormatError& e) {
    throw FormatError(file + ": " + e.what());
  }
}

void agree(const Preset& p, const char* key, std::int64_t inferred, const std::string& from) {
  if (auto v = p.archInt(key); v && *v != inferred)
    throw FormatError(p.archSource(key) + " says " + key + " = " + std::to_string(*v) + ", but " + from + " implies " +
                      std::to_string(inferred));
}

}  // namespace

std::string ModelConfig::name(const std::string& role, int layer) const {
  auto it = tensors.find(role);
  return it == tensors.end() ? "" : expandPattern(it->second, layer);
}

namespace {

// The architecture's conventions, from the preset: norm placement and casts, RoPE, FFN layout, a
// tied head; the tensors eval needs must be named.
ModelConfig conventionsFromPreset(const Preset& p, const io::TensorIndex& index) {
  ModelConfig c;
  c.preset = p.name;
  c.tensors = p.tensors;
  c.gain_param = p.parametrisation;
  c.qk_layout = p.layout;
  c.norm_eps = p.archDouble("norm_eps", 1e-6);
  c.qk_norm_eps = p.archDouble("qk_norm_eps", c.norm_eps);
  c.rope_theta = p.archDouble("rope_theta", 10000.0);
  c.rope_style = p.archString("rope_style", "rotate_half") == "interleaved" ? RopeStyle::Interleaved : RopeStyle::RotateHalf;
  const std::string qcast = p.archString("qk_norm_cast", "multiply_then_cast");
  c.qk_norm_cast = qcast == "cast_then_multiply" ? NormCast::CastThenMultiply : NormCast::MultiplyThenCast;
  c.norm_cast = p.archString("norm_cast", qcast) == "cast_then_multiply" ? NormCast::CastThenMultiply : NormCast::MultiplyThenCast;
  if (p.parametrisation == GainParametrisation::OnePlus)
    throw UsageError("preset " + p.name + ": eval does not implement this architecture (Gemma-style 1+w norms, "
                     "embedding scaling, GeLU, sliding windows); `profile` supports it");
  if (!p.forward_unsupported.empty()) {
    std::string what;
    for (const auto& u : p.forward_unsupported) what += (what.empty() ? "" : "; ") + u;
    throw UsageError("eval does not implement what the model's config asks: " + what + " (profile reads its gains regardless)");
  }
  const bool pre = p.has("attention_norm") && p.has("ffn_norm");
  const bool post = p.has("post_attention_norm") && p.has("post_ffn_norm");
  if (pre == post)
    throw UsageError("preset " + p.name + ": needs either attention_norm + ffn_norm (pre-norm) or "
                     "post_attention_norm + post_ffn_norm (post-norm) tensors");
  c.placement = pre ? NormPlacement::Pre : NormPlacement::Post;
  c.ffn_fused = p.has("w13");
  if (!c.ffn_fused && !(p.has("w1") && p.has("w3")))
    throw UsageError("preset " + p.name + ": needs w13 (fused gate+up) or w1 and w3");
  for (const char* r : {"embedding", "wq", "wk", "wv", "wo", "q_norm", "k_norm", "w2", "final_norm"})
    if (!p.has(r)) throw UsageError("preset " + p.name + ": /tensors/" + r + " is required for eval");
  c.tied_output = !p.has("output");
  if (auto tied = p.architecture.find("tied_output"); tied != p.architecture.end() && tied->get<bool>() && p.has("output"))
    // a preset's tied head: the embedding where the checkpoint has no head of its own; a model
    // folder's tie_word_embeddings: the embedding, as transformers ties it, whatever lm_head holds
    c.tied_output = p.architecture_from.count("tied_output") || index.find(p.tensorName("output", 0)) == nullptr;
  // a model folder's untied head (tie_word_embeddings false) needs a head of its own in the weights
  if (auto from = p.architecture_from.find("tied_output");
      from != p.architecture_from.end() && !c.tied_output && index.find(p.tensorName("output", 0)) == nullptr)
    throw UsageError(from->second + " is false (an output head of its own), and the weights have no '" + p.tensorName("output", 0) +
                     "': the config and the tensors disagree");
  return c;
}

// The dimensions, from the tensors' shapes (and the preset where a shape cannot say), each checked
// against what the preset or the checkpoint's recorded architecture states.
void dimensionsFromShapes(ModelConfig& c, const Preset& p, const io::TensorIndex& index) {
  const io::TensorRef& emb = need(index, c.name("embedding"), "embedding");
  if (emb.shape.size() != 2) throw FormatError("tensor '" + emb.name + "': expected a 2-D embedding, got " + io::shapeString(emb.shape));
  c.vocab_size = emb.shape[0];
  c.d_model = emb.shape[1];
  agree(p, "vocab_size", c.vocab_size, emb.name);
  agree(p, "d_model", c.d_model, emb.name);
  while (index.find(c.name("wq", c.n_layers))) ++c.n_layers;
  if (c.n_layers == 0) throw FormatError("no tensor '" + c.name("wq", 0) + "': no layers found");
  agree(p, "n_layers", c.n_layers, "the Q projections");
  const io::TensorRef& wq = need(index, c.name("wq", 0), "wq");
  const io::TensorRef& wk = need(index, c.name("wk", 0), "wk");
  // Q/K gains in every layer or in none (a model trained without QK-norm)
  c.qk_norm = index.find(c.name("q_norm", 0)) != nullptr;
  if (c.qk_norm && c.qk_layout == GainLayout::Head) {
    const io::TensorRef& qn = need(index, c.name("q_norm", 0), "q_norm");
    c.head_dim = qn.shape.size() == 1 ? qn.shape[0] : 0;
    agree(p, "head_dim", c.head_dim, qn.name);
  } else {
    c.head_dim = p.archInt("head_dim").value_or(0);
    if (c.head_dim == 0)
      throw FormatError("the checkpoint has no Q/K gains to give head_dim, and neither preset " + p.name +
                        " nor the checkpoint's recorded architecture states it");
  }
  if (c.head_dim <= 0 || c.head_dim % 2) throw FormatError("head_dim " + std::to_string(c.head_dim) + " must be positive and even");
  if (wq.shape.size() != 2 || wq.shape[0] % c.head_dim)
    throw FormatError("tensor '" + wq.name + "': expected [n_heads*" + std::to_string(c.head_dim) + ", " +
                      std::to_string(c.d_model) + "], got " + io::shapeString(wq.shape));
  if (wk.shape.size() != 2 || wk.shape[0] % c.head_dim)
    throw FormatError("tensor '" + wk.name + "': expected [n_kv_heads*" + std::to_string(c.head_dim) + ", " +
                      std::to_string(c.d_model) + "], got " + io::shapeString(wk.shape));
  c.n_heads = wq.shape[0] / c.head_dim;
  c.n_kv_heads = wk.shape[0] / c.head_dim;
  agree(p, "n_heads", c.n_heads, wq.name);
  agree(p, "n_kv_heads", c.n_kv_heads, wk.name);
  if (c.n_kv_heads == 0 || c.n_heads % c.n_kv_heads)
    throw FormatError("n_heads " + std::to_string(c.n_heads) + " is not a multiple of n_kv_heads " + std::to_string(c.n_kv_heads));
  const io::TensorRef& w2 = need(index, c.name("w2", 0), "w2");
  if (w2.shape.size() != 2) throw FormatError("tensor '" + w2.name + "': expected 2-D, got " + io::shapeString(w2.shape));
  c.ffn_hidden = w2.shape[1];
  agree(p, "ffn_hidden", c.ffn_hidden, w2.name);
}

}  // namespace

void checkStatedDimensions(const Preset& p, const io::TensorIndex& index, const std::string& file) {
  ModelConfig c;
  c.preset = p.name;
  c.tensors = p.tensors;
  c.qk_layout = p.layout;
  inFile(file, [&] { dimensionsFromShapes(c, p, index); });
}

namespace {

// Every tensor the model reads, in every layer, has the shape the dimensions imply.
void checkEveryTensor(const ModelConfig& c, const io::TensorIndex& index) {
  const std::int64_t D = c.d_model, hd = c.head_dim, Hq = c.n_heads, Hk = c.n_kv_heads, F = c.ffn_hidden;
  for (int i = 0; i < c.n_layers; ++i) {
    auto chk = [&](const char* role, std::vector<std::int64_t> shape) { expectTensor(need(index, c.name(role, i), role), shape); };
    if (c.placement == NormPlacement::Pre) {
      chk("attention_norm", {D});
      chk("ffn_norm", {D});
    } else {
      chk("post_attention_norm", {D});
      chk("post_ffn_norm", {D});
    }
    chk("wq", {Hq * hd, D});
    chk("wk", {Hk * hd, D});
    chk("wv", {Hk * hd, D});
    chk("wo", {D, Hq * hd});
    if (c.qk_norm) {
      chk("q_norm", {c.qk_layout == GainLayout::Head ? hd : Hq * hd});
      chk("k_norm", {c.qk_layout == GainLayout::Head ? hd : Hk * hd});
    } else {
      for (const char* role : {"q_norm", "k_norm"})
        if (index.find(c.name(role, i)))
          throw FormatError("tensor '" + c.name(role, i) + "' is present although layer 0 has no Q gain: Q/K gains in every layer or in none");
    }
    if (c.ffn_fused) chk("w13", {2 * F, D});
    else {
      chk("w1", {F, D});
      chk("w3", {F, D});
    }
    chk("w2", {D, F});
  }
  expectTensor(need(index, c.name("embedding"), "embedding"), {c.vocab_size, D});
  expectTensor(need(index, c.name("final_norm"), "final_norm"), {D});
  if (!c.tied_output) expectTensor(need(index, c.name("output"), "output"), {c.vocab_size, D});
}

}  // namespace

ModelConfig inferConfig(const Preset& p, const io::TensorIndex& index, const std::string& file) {
  ModelConfig c = conventionsFromPreset(p, index);
  inFile(file, [&] {
    dimensionsFromShapes(c, p, index);
    checkEveryTensor(c, index);
  });
  return c;
}

nlohmann::json toJson(const ModelConfig& c) {
  return {{"preset", c.preset},
          {"n_layers", c.n_layers},
          {"d_model", c.d_model},
          {"n_heads", c.n_heads},
          {"n_kv_heads", c.n_kv_heads},
          {"head_dim", c.head_dim},
          {"ffn_hidden", c.ffn_hidden},
          {"vocab_size", c.vocab_size},
          {"norm_eps", c.norm_eps},
          {"qk_norm_eps", c.qk_norm_eps},
          {"rope_theta", c.rope_theta},
          {"rope_style", c.rope_style == RopeStyle::RotateHalf ? "rotate_half" : "interleaved"},
          {"norm_cast", c.norm_cast == NormCast::MultiplyThenCast ? "multiply_then_cast" : "cast_then_multiply"},
          {"qk_norm_cast", c.qk_norm_cast == NormCast::MultiplyThenCast ? "multiply_then_cast" : "cast_then_multiply"},
          {"qk_layout", c.qk_layout == GainLayout::Head ? "head" : "projection"},
          {"norm_placement", c.placement == NormPlacement::Pre ? "pre" : "post"},
          {"ffn_fused", c.ffn_fused},
          {"tied_output", c.tied_output},
          {"qk_norm", c.qk_norm}};
}

}  // namespace omn::model
