// A training run's configuration (omn-audit/train-config@1), parsed once, strictly, into types:
// an unknown key, a wrong type or an impossible value is a UsageError naming the file and the JSON
// pointer. No libtorch. docs/train.md documents every key.
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include "omn/io/choice.h"

namespace omn::train {

struct ModelShape {
  int n_layers = 4;
  std::int64_t d_model = 128, n_heads = 4, n_kv_heads = 2, head_dim = 32, ffn_hidden = 384;
  bool qk_norm = true;
  double rope_theta = 10000.0, norm_eps = 1e-6, qk_norm_eps = 1e-6;
};

enum class OptimizerKind { MuonAdamW, AdamW };
inline constexpr std::array<io::Named<OptimizerKind>, 2> kOptimizerKinds{
    {{"muon+adamw", OptimizerKind::MuonAdamW}, {"adamw", OptimizerKind::AdamW}}};
enum class Decay { Cosine, Linear, Constant };
inline constexpr std::array<io::Named<Decay>, 3> kDecays{{{"cosine", Decay::Cosine}, {"linear", Decay::Linear}, {"constant", Decay::Constant}}};

struct OptimizerConfig {
  OptimizerKind kind = OptimizerKind::MuonAdamW;
  double lr = 3e-3;               // AdamW's (embedding, head, gains; every parameter for "adamw")
  double muon_lr = 0.02;          // Muon's (hidden matrices)
  double beta1 = 0.9, beta2 = 0.95, eps = 1e-8;
  double weight_decay = 0.0;      // AdamW, decoupled, on matrices only (embedding, head; hidden ones for "adamw")
  double muon_momentum = 0.95, muon_weight_decay = 0.0;
  int ns_steps = 5;
  // the QK-norm gains' own AdamW group (the routing experiment, docs/results.md): rate lr × this
  // scale, decoupled decay toward 0 at this rate (the other gains are never decayed)
  double qk_gain_lr_scale = 1.0, qk_gain_weight_decay = 0.0;
};

struct ScheduleConfig {
  std::int64_t warmup_steps = 0;
  Decay decay = Decay::Cosine;
  double min_lr_ratio = 0.1;  // the multiplier at the last step
};

struct TrainConfig {
  std::string path, sha256;  // the file and the SHA-256 of its exact bytes
  nlohmann::json raw;        // as parsed (recorded in train.json)
  std::string name;
  std::string corpus;        // a corpus directory or corpus.json, resolved against the config file
  std::optional<std::string> init_from;  // start from this checkpoint's weights instead of `init`
  double init_std = 0.02;
  ModelShape model;
  OptimizerConfig optimizer;
  ScheduleConfig schedule;
  double clip_grad_norm = 1.0;  // 0: no clipping
  std::int64_t steps = 100, batch_size = 8, seq_len = 128;
  std::uint64_t seed = 0;
  std::int64_t log_every = 10, eval_every = 50, eval_rows = 16, checkpoint_every = 0;  // 0: final only
  std::vector<double> loss_thresholds;
  std::string dtype = "fp32", device = "cpu";
};

TrainConfig loadTrainConfig(const std::string& path);
TrainConfig parseTrainConfig(const nlohmann::json& j, const std::string& path, const std::string& sha256);

inline const char* optimizerName(OptimizerKind k) { return io::choiceName(kOptimizerKinds, k); }
inline const char* decayName(Decay d) { return io::choiceName(kDecays, d); }

// The learning-rate multiplier at `step` (1-based): linear warm-up over warmup_steps, then the
// decay from 1 to min_lr_ratio at the last step.
double lrMultiplier(const ScheduleConfig& s, std::int64_t step, std::int64_t total_steps);

}  // namespace omn::train
