#include "omn/train/optimizers.h"

#include <cmath>

namespace omn::train {

double globalGradNorm(const std::vector<at::Tensor>& grads) {
  if (grads.empty()) return 0.0;
  std::vector<at::Tensor> sums;
  sums.reserve(grads.size());
  for (const at::Tensor& g : grads) sums.push_back(g.to(at::kDouble).pow(2).sum());
  return at::stack(sums).sum().sqrt().item<double>();  // the one read back
}

double globalGradNormPerParameter(const std::vector<at::Tensor>& grads) {
  double s = 0;
  for (const at::Tensor& g : grads) s += g.to(at::kDouble).pow(2).sum().item<double>();
  return std::sqrt(s);
}

double clipGradNorm(const std::vector<at::Tensor>& grads, double max_norm) {
  const double norm = globalGradNorm(grads);
  if (max_norm > 0 && norm > max_norm) {
    at::NoGradGuard ng;
    for (const at::Tensor& g : grads) at::Tensor(g).mul_(max_norm / (norm + 1e-6));
  }
  return norm;
}

at::Tensor newtonSchulz5(const at::Tensor& g, int steps) {
  const double a = 3.4445, b = -4.7750, c = 2.0315;
  const bool tall = g.size(0) > g.size(1);
  at::Tensor x = g.to(at::kFloat);
  if (tall) x = x.t();
  x = x / (x.norm() + 1e-7);  // spectral norm at most 1
  for (int i = 0; i < steps; ++i) {
    const at::Tensor A = at::matmul(x, x.t());
    const at::Tensor B = b * A + c * at::matmul(A, A);
    x = a * x + at::matmul(B, x);
  }
  return tall ? x.t() : x;
}

void AdamW::step(const std::vector<at::Tensor>& params, const std::vector<double>& weight_decay,
                 const std::vector<double>& lr_scale, double peak) {
  at::NoGradGuard no_grad;
  if (state_.empty())
    for (const auto& p : params) state_.push_back({at::zeros_like(p), at::zeros_like(p)});
  ++t_;
  const double bc1 = 1.0 - std::pow(b1_, static_cast<double>(t_));
  const double bc2 = 1.0 - std::pow(b2_, static_cast<double>(t_));
  for (std::size_t i = 0; i < params.size(); ++i) {
    at::Tensor p = params[i];
    const at::Tensor& g = p.grad();
    AdamWState& s = state_[i];
    const double lr = peak * lr_scale[i];
    p.mul_(1.0 - lr * weight_decay[i]);
    s.exp_avg.lerp_(g, 1.0 - b1_);
    s.exp_avg_sq.mul_(b2_).addcmul_(g, g, 1.0 - b2_);
    const at::Tensor denom = (s.exp_avg_sq.sqrt() / std::sqrt(bc2)).add_(eps_);
    p.addcdiv_(s.exp_avg, denom, -lr / bc1);
  }
}

void Muon::step(const std::vector<at::Tensor>& params, double lr) {
  at::NoGradGuard no_grad;
  if (momentum_.empty())
    for (const auto& p : params) momentum_.push_back(at::zeros_like(p));
  for (std::size_t i = 0; i < params.size(); ++i) {
    at::Tensor p = params[i];
    const at::Tensor& g = p.grad();
    at::Tensor& m = momentum_[i];
    m.lerp_(g, 1.0 - beta_);
    const at::Tensor nesterov = at::lerp(g, m, beta_);
    at::Tensor u = newtonSchulz5(nesterov, ns_);
    u.mul_(std::sqrt(std::max(1.0, static_cast<double>(p.size(0)) / static_cast<double>(p.size(1)))));
    p.mul_(1.0 - lr * wd_);
    p.add_(u, -lr);
  }
}

}  // namespace omn::train
