#include "omn/train/optimizer_groups.h"

#include "omn/train/run_files.h"

namespace omn::train {

OptimizerGroups::OptimizerGroups(const std::vector<Parameter>& params, const OptimizerConfig& c)
    : c_(c),
      uses_muon_(c.kind == OptimizerKind::MuonAdamW),
      adamw_(c.beta1, c.beta2, c.eps),
      muon_(c.muon_momentum, c.ns_steps, c.muon_weight_decay) {
  for (const Parameter& p : params) {
    if (uses_muon_ && p.hidden_matrix) {
      muon_params_.push_back(p.value);
      muon_names_.push_back(p.name);
      continue;
    }
    adamw_params_.push_back(p.value);
    adamw_names_.push_back(p.name);
    adamw_decay_.push_back(p.qk_gain ? c.qk_gain_weight_decay : p.matrix ? c.weight_decay : 0.0);
    adamw_lr_scale_.push_back(p.qk_gain ? c.qk_gain_lr_scale : 1.0);
  }
}

void OptimizerGroups::step(double lr_multiplier) {
  adamw_.step(adamw_params_, adamw_decay_, adamw_lr_scale_, c_.lr * lr_multiplier);
  if (uses_muon_) muon_.step(muon_params_, c_.muon_lr * lr_multiplier);
}

std::string OptimizerGroups::save(const std::string& path, std::int64_t step) {
  return writeOptimizer(path, {&adamw_, uses_muon_ ? &muon_ : nullptr}, adamw_names_, muon_names_, step);
}

void OptimizerGroups::restore(const std::string& path, std::int64_t step) {
  readOptimizer(path, {&adamw_, uses_muon_ ? &muon_ : nullptr}, adamw_params_, adamw_names_, muon_params_, muon_names_, step);
}

nlohmann::json OptimizerGroups::toJson() const { return {{"adamw", adamw_names_}, {"muon", muon_names_}}; }

}  // namespace omn::train
