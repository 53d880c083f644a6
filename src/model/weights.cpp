#include "omn/model/weights.h"

#include <cstring>

#include "omn/errors.h"

namespace omn::model {

at::ScalarType scalarType(io::DType d) {
  switch (d) {
    case io::DType::BF16: return at::kBFloat16;
    case io::DType::F16: return at::kHalf;
    case io::DType::F32: return at::kFloat;
    case io::DType::F64: return at::kDouble;
    case io::DType::I64: return at::kLong;
    case io::DType::I32: return at::kInt;
    case io::DType::I16: return at::kShort;
    case io::DType::I8: return at::kChar;
    case io::DType::U8: return at::kByte;
    case io::DType::BOOL: return at::kBool;
  }
  return at::kFloat;
}

at::ScalarType workingDtype(DtypeRequest d, io::DType checkpoint_dtype) {
  switch (d) {
    case DtypeRequest::BF16: return at::kBFloat16;
    case DtypeRequest::FP16: return at::kHalf;
    case DtypeRequest::FP32: return at::kFloat;
    case DtypeRequest::Auto: break;
  }
  const at::ScalarType t = scalarType(checkpoint_dtype);
  if (t == at::kBFloat16 || t == at::kHalf || t == at::kFloat) return t;
  return at::kFloat;
}

at::Tensor toTensor(const io::TensorRef& ref, at::ScalarType want, const at::Device& device, bool owned, bool* zero_copy) {
  const at::ScalarType stored = scalarType(ref.dtype);
  if (zero_copy) *zero_copy = false;
  if (!owned && stored == want && device.is_cpu() && ref.contiguous() && !ref.big_endian) {
    if (zero_copy) *zero_copy = true;
    // The mapped file is read-only: a write through this tensor would fault, never reach the file.
    return at::from_blob(const_cast<std::uint8_t*>(ref.storage_data) + ref.storage_offset * ref.itemSize(), ref.shape,
                         at::TensorOptions().dtype(stored));
  }
  const std::vector<std::uint8_t> bytes = io::readBytes(ref);  // logical order, little-endian
  at::Tensor t = at::empty(ref.shape, at::TensorOptions().dtype(stored));
  if (!bytes.empty()) std::memcpy(t.data_ptr(), bytes.data(), bytes.size());
  return t.to(device, want);
}

namespace {

Weights load(const io::Checkpoint& ck, const ModelConfig& c, at::ScalarType dtype, const at::Device& device, bool all_owned) {
  Weights w;
  w.dtype = dtype;
  auto get = [&](const std::string& role, int layer, bool owned = false) {
    bool zc = false;
    at::Tensor t = toTensor(ck.index.at(c.name(role, layer)), dtype, device, owned || all_owned, &zc);
    (zc ? w.zero_copy : w.copied)++;
    return t;
  };
  w.embedding = get("embedding", -1);
  w.final_norm = get("final_norm", -1);
  if (c.tied_output) {
    w.output = w.embedding;
  } else {
    w.output = get("output", -1);
    w.head_identical_to_embedding = io::sameBytes(ck.index.at(c.name("embedding")), ck.index.at(c.name("output")));
  }
  for (int i = 0; i < c.n_layers; ++i) {
    LayerWeights l;
    if (c.placement == NormPlacement::Pre) {
      l.attention_norm = get("attention_norm", i);
      l.ffn_norm = get("ffn_norm", i);
    } else {
      l.post_attention_norm = get("post_attention_norm", i);
      l.post_ffn_norm = get("post_ffn_norm", i);
    }
    l.wq = get("wq", i);
    l.wk = get("wk", i);
    l.wv = get("wv", i);
    l.wo = get("wo", i);
    if (c.qk_norm) {
      l.q_norm = get("q_norm", i, /*owned=*/true);
      l.k_norm = get("k_norm", i, /*owned=*/true);
    }
    if (c.ffn_fused) l.w13 = get("w13", i);
    else {
      l.w1 = get("w1", i);
      l.w3 = get("w3", i);
    }
    l.w2 = get("w2", i);
    w.layers.push_back(std::move(l));
  }
  return w;
}

}  // namespace

Weights loadWeights(std::shared_ptr<const io::Checkpoint> ck, const ModelConfig& c, at::ScalarType dtype,
                    const at::Device& device) {
  Weights w = load(*ck, c, dtype, device, /*all_owned=*/false);
  if (w.zero_copy > 0) w.mapping = std::move(ck);
  return w;
}

Weights loadOwnedWeights(const io::Checkpoint& ck, const ModelConfig& c, at::ScalarType dtype, const at::Device& device) {
  return load(ck, c, dtype, device, /*all_owned=*/true);
}

std::vector<std::pair<std::string, at::Tensor*>> namedTensors(Weights& w, const ModelConfig& c) {
  std::vector<std::pair<std::string, at::Tensor*>> out;
  out.emplace_back(c.name("embedding"), &w.embedding);
  for (int i = 0; i < c.n_layers; ++i) {
    LayerWeights& l = w.layers[static_cast<std::size_t>(i)];
    auto add = [&](const char* role, at::Tensor& t) { out.emplace_back(c.name(role, i), &t); };
    if (c.placement == NormPlacement::Pre) add("attention_norm", l.attention_norm);
    else add("post_attention_norm", l.post_attention_norm);
    add("wq", l.wq), add("wk", l.wk), add("wv", l.wv), add("wo", l.wo);
    if (c.qk_norm) add("q_norm", l.q_norm), add("k_norm", l.k_norm);
    if (c.placement == NormPlacement::Pre) add("ffn_norm", l.ffn_norm);
    else add("post_ffn_norm", l.post_ffn_norm);
    if (c.ffn_fused) add("w13", l.w13);
    else add("w1", l.w1), add("w3", l.w3);
    add("w2", l.w2);
  }
  out.emplace_back(c.name("final_norm"), &w.final_norm);
  if (!c.tied_output) out.emplace_back(c.name("output"), &w.output);
  return out;
}

}  // namespace omn::model
