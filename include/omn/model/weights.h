// Tensor descriptions become at::Tensors: zero-copy views of the mapped checkpoint where the dtype,
// layout and device allow (read-only memory: the model never writes a weight), owned copies
// otherwise. The Q/K gains are always owned copies: interventions mutate them.
#pragma once
#include <ATen/ATen.h>

#include <memory>
#include <vector>

#include "omn/io/checkpoint.h"
#include "omn/model/config.h"
#include "omn/model/model_options.h"

namespace omn::model {

at::ScalarType scalarType(io::DType d);
// The working dtype for a request; auto: the checkpoint's bf16/fp16/fp32, else fp32.
at::ScalarType workingDtype(DtypeRequest d, io::DType checkpoint_dtype);

// A tensor of dtype `want` on `device`. `owned`: always a private copy.
at::Tensor toTensor(const io::TensorRef& ref, at::ScalarType want, const at::Device& device, bool owned, bool* zero_copy = nullptr);

struct LayerWeights {
  at::Tensor attention_norm, ffn_norm, post_attention_norm, post_ffn_norm;
  at::Tensor wq, wk, wv, wo, q_norm, k_norm;
  at::Tensor w13, w1, w3, w2;
};

struct Weights {
  at::Tensor embedding, final_norm, output;  // output aliases embedding when tied
  std::vector<LayerWeights> layers;
  at::ScalarType dtype = at::kFloat;
  bool head_identical_to_embedding = false;  // a separate head whose bytes equal the embedding's
  std::size_t zero_copy = 0, copied = 0;     // how the tensors were made
  // A zero-copy tensor views the checkpoint's mapped file: the weights hold the checkpoint, so the
  // mapping outlives every view by construction, whatever the order their owners are destroyed in.
  std::shared_ptr<const io::Checkpoint> mapping;
};

// Zero-copy views where possible (evaluation); the weights keep `ck` alive.
Weights loadWeights(std::shared_ptr<const io::Checkpoint> ck, const ModelConfig& c, at::ScalarType dtype,
                    const at::Device& device);
// Every tensor a private, writable copy (training): nothing refers to `ck` afterwards.
Weights loadOwnedWeights(const io::Checkpoint& ck, const ModelConfig& c, at::ScalarType dtype, const at::Device& device);

// Every tensor of the model with its checkpoint name, in state-dict order (embedding, each layer's
// tensors, final norm, head; no head when tied). The pointers are into `w`.
std::vector<std::pair<std::string, at::Tensor*>> namedTensors(Weights& w, const ModelConfig& c);

}  // namespace omn::model
