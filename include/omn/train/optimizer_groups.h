// The run's optimizers and which parameter each one updates: under "muon+adamw" Muon takes the
// hidden matrices (wq, wk, wv, wo, w13, w2) and AdamW the rest; under "adamw" AdamW takes all.
// Within AdamW each parameter has its decoupled decay (matrices: weight_decay; the Q/K gains:
// qk_gain_weight_decay; other gains: none) and its rate scale (the Q/K gains: qk_gain_lr_scale).
// One object per run: made from the model's parameters, stepped once per training step, saved beside
// each checkpoint and restored from it on a resume.
#pragma once
#include <ATen/ATen.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "omn/train/optimizers.h"
#include "omn/train/parameters.h"
#include "omn/train/train_config.h"

namespace omn::train {

class OptimizerGroups {
 public:
  OptimizerGroups(const std::vector<Parameter>& params, const OptimizerConfig& c);

  // One update of every parameter from its .grad(): AdamW at lr × multiplier (× its scale), Muon at
  // muon_lr × multiplier.
  void step(double lr_multiplier);

  // The state beside a checkpoint (returns the file's SHA-256), and back on a resume.
  std::string save(const std::string& path, std::int64_t step);
  void restore(const std::string& path, std::int64_t step);

  bool usesMuon() const { return uses_muon_; }
  const std::vector<std::string>& adamwNames() const { return adamw_names_; }
  const std::vector<std::string>& muonNames() const { return muon_names_; }
  const std::vector<double>& adamwDecay() const { return adamw_decay_; }
  const std::vector<double>& adamwLrScale() const { return adamw_lr_scale_; }
  nlohmann::json toJson() const;  // {"adamw": names, "muon": names}: the record's /optimizer_groups

 private:
  const OptimizerConfig c_;
  const bool uses_muon_;
  std::vector<at::Tensor> adamw_params_, muon_params_;
  std::vector<std::string> adamw_names_, muon_names_;
  std::vector<double> adamw_decay_, adamw_lr_scale_;
  AdamW adamw_;
  Muon muon_;
};

}  // namespace omn::train
