// The two optimizers OMN trains with, each one step per call, in place, without autograd:
//  - AdamW (torch.optim.AdamW's update: decoupled decay p ← p·(1 − lr·wd), bias-corrected moments,
//    denominator √v̂ + eps) for the embedding, the head and every gain;
//  - Muon (KellerJordan/Muon's muon_update) for the hidden matrices: momentum m ← β·m + (1−β)·g,
//    Nesterov update u = (1−β)·g + β·m, orthogonalised by 5 Newton–Schulz steps with coefficients
//    (3.4445, −4.7750, 2.0315) on u/(‖u‖_F + 1e-7) (transposed when rows > cols), scaled by
//    √max(1, rows/cols); p ← p·(1 − lr·wd) − lr·u. The iteration runs in float32 here (the
//    reference runs it in bfloat16 on GPUs; on this CPU fp32 products are the faster ones).
// Both are checked against Python references (tests/parity/check_train.py).
#pragma once
#include <ATen/ATen.h>

#include <string>
#include <vector>

#include "omn/io/checkpoint_writer.h"

namespace omn::train {

// The global gradient norm ‖(g_1, …, g_P)‖₂ the clip reads, each gradient's sum of squares taken
// in float64. In one reduction: the P sums stay on the device and one stacked sum is read back, one
// host sync per step as llm.c takes it (the reference below reads each sum back: P syncs). The two
// differ only in the order of the P float64 additions (tests/unit/test_train.cpp, GradientClip).
double globalGradNorm(const std::vector<at::Tensor>& grads);
double globalGradNormPerParameter(const std::vector<at::Tensor>& grads);  // the reference
// torch.nn.utils.clip_grad_norm_(max_norm): past max_norm (> 0), every gradient is multiplied in
// place by max_norm / (norm + 1e-6). Returns the norm before clipping.
double clipGradNorm(const std::vector<at::Tensor>& grads, double max_norm);

// Newton–Schulz orthogonalisation of a 2-D tensor (float32 result).
at::Tensor newtonSchulz5(const at::Tensor& g, int steps);

struct AdamWState {
  at::Tensor exp_avg, exp_avg_sq;
};

class AdamW {
 public:
  AdamW(double beta1, double beta2, double eps) : b1_(beta1), b2_(beta2), eps_(eps) {}
  // One step for every parameter (their .grad() must be defined); parameter i at rate
  // lr × lr_scale[i] with decoupled decay weight_decay[i] (torch.optim.AdamW's parameter groups).
  void step(const std::vector<at::Tensor>& params, const std::vector<double>& weight_decay,
            const std::vector<double>& lr_scale, double lr);
  std::int64_t steps() const { return t_; }
  std::vector<AdamWState>& state() { return state_; }
  void setState(std::vector<AdamWState> s, std::int64_t t) { state_ = std::move(s), t_ = t; }

 private:
  double b1_, b2_, eps_;
  std::int64_t t_ = 0;
  std::vector<AdamWState> state_;
};

class Muon {
 public:
  Muon(double momentum, int ns_steps, double weight_decay) : beta_(momentum), ns_(ns_steps), wd_(weight_decay) {}
  void step(const std::vector<at::Tensor>& params, double lr);
  std::vector<at::Tensor>& momentum() { return momentum_; }
  void setMomentum(std::vector<at::Tensor> m) { momentum_ = std::move(m); }

 private:
  double beta_;
  int ns_;
  double wd_;
  std::vector<at::Tensor> momentum_;
};

}  // namespace omn::train
