// The trainable model: owned fp32 weights that the shared model::Transformer reads, each with its
// checkpoint name and optimizer group, made by OMN's initialisation or taken from a checkpoint.
#pragma once
#include <ATen/ATen.h>

#include <memory>
#include <string>
#include <vector>

#include "omn/io/checkpoint_writer.h"
#include "omn/model/transformer.h"
#include "omn/train/train_config.h"

namespace omn::train {

struct Parameter {
  std::string name;
  at::Tensor value;  // the same tensor the Transformer reads (requires_grad)
  bool hidden_matrix = false;  // wq, wk, wv, wo, w13, w2: Muon's under "muon+adamw"
  bool matrix = false;         // 2-D (weight decay applies to matrices only)
  bool qk_gain = false;        // q_norm, k_norm (their own AdamW rate and decay: qk_gain_lr_scale, qk_gain_weight_decay)
};

struct TrainableModel {
  model::ModelConfig config;
  std::unique_ptr<model::Transformer> model;
  std::vector<Parameter> params;  // state-dict order
  std::int64_t count() const;     // parameters
};

// The OMN-style architecture of a run: the "omn" preset's names and conventions, the config's shape.
model::ModelConfig modelConfig(const ModelShape& s, std::int64_t vocab_size);

// Every norm gain (RMSNorm and Q/K) 1.0; matrices N(0, std²), the residual projections wo and w2
// N(0, std²/(2·n_layers)) (GPT-2's scheme); seeded, the same on every machine with this libtorch.
// The parameters initModel makes for this shape and vocabulary, counted without allocating (as a
// double: a config may describe more than an integer holds). Equal to initModel(...).count().
double parameterCount(const ModelShape& s, std::int64_t vocab_size);

TrainableModel initModel(const TrainConfig& c, std::int64_t vocab_size, std::uint64_t seed, const at::Device& device);

// Weights from a checkpoint (owned fp32 copies); its architecture must equal the config's.
TrainableModel loadModel(const std::string& checkpoint, const TrainConfig& c, std::int64_t vocab_size, const at::Device& device);

// The parameters as contiguous CPU fp32 tensors (kept alive by `keep`) for the checkpoint writer.
std::vector<io::TensorRecord> tensorRecords(const std::vector<Parameter>& params, std::vector<at::Tensor>& keep);

}  // namespace omn::train
