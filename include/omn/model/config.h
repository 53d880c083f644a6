// The architecture of one checkpoint: the preset's conventions plus the dimensions its tensor
// shapes imply, checked tensor by tensor (a mismatch names the tensor, the expected and the actual
// shape). No libtorch.
#pragma once
#include <cstdint>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "omn/io/tensor_index.h"
#include "omn/model/preset.h"

namespace omn::model {

enum class NormCast { MultiplyThenCast, CastThenMultiply };  // order of gain multiply and cast back
enum class RopeStyle { RotateHalf, Interleaved };
enum class NormPlacement { Pre, Post };  // u = norm(h) before each sublayer, or h + norm(f(h)) (OLMo2)

struct ModelConfig {
  std::string preset;
  int n_layers = 0;
  std::int64_t d_model = 0, n_heads = 0, n_kv_heads = 0, head_dim = 0, ffn_hidden = 0, vocab_size = 0;
  double norm_eps = 1e-6, qk_norm_eps = 1e-6, rope_theta = 10000.0;
  NormCast norm_cast = NormCast::MultiplyThenCast, qk_norm_cast = NormCast::MultiplyThenCast;
  GainParametrisation gain_param = GainParametrisation::Direct;
  GainLayout qk_layout = GainLayout::Head;
  RopeStyle rope_style = RopeStyle::RotateHalf;
  NormPlacement placement = NormPlacement::Pre;
  bool ffn_fused = false;    // one [2F, D] tensor, gate rows first
  bool tied_output = false;  // the head is the embedding
  bool qk_norm = true;       // Q/K RMSNorm with gains; false: the checkpoint has no q_norm/k_norm
  std::map<std::string, std::string> tensors;  // role → name pattern

  std::string name(const std::string& role, int layer = -1) const;
  bool has(const std::string& role) const { return tensors.count(role) > 0; }
};

// Infers the dimensions from the tensors and checks every tensor the model uses (floating-point, of
// the shape the dimensions imply); throws FormatError naming `file` (the checkpoint the index was
// read from), the tensor, the expected and the actual shape or dtype; UsageError for a preset whose
// architecture eval does not implement.
ModelConfig inferConfig(const Preset& preset, const io::TensorIndex& index, const std::string& file);

// The dimensions the preset (or a model folder's config.json) states, checked against the tensors'
// shapes as inferConfig checks them, without the rest of inferConfig's demands (profile reads
// architectures eval does not run). FormatError naming who stated the value.
void checkStatedDimensions(const Preset& preset, const io::TensorIndex& index, const std::string& file);

nlohmann::json toJson(const ModelConfig& c);

}  // namespace omn::model
