#include "omn/eval/divergence.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace omn::eval {

namespace {
// NaN/inf as empty (null), as the NLL sums are journaled
std::vector<std::optional<double>> finiteSums(const std::vector<double>& v) {
  std::vector<std::optional<double>> out;
  out.reserve(v.size());
  for (double x : v) out.push_back(std::isfinite(x) ? std::optional<double>(x) : std::nullopt);
  return out;
}
}  // namespace

documents::DivergenceSums divergenceSums(const Divergence& d) {
  // quantiles over the finite values (a non-finite one would make the sort undefined), the others counted
  std::vector<float> k;
  k.reserve(d.kl_tokens.size());
  for (float v : d.kl_tokens)
    if (std::isfinite(v)) k.push_back(v);
  std::sort(k.begin(), k.end());
  auto rank = [&](double q) -> std::optional<double> {  // nearest rank: the smallest value with at least q of them at or below
    if (k.empty()) return std::nullopt;
    const auto i = static_cast<std::size_t>(std::max(1.0, std::ceil(q * static_cast<double>(k.size())))) - 1;
    return static_cast<double>(k[std::min(i, k.size() - 1)]);
  };
  documents::DivergenceSums s;
  s.kl_sum = finiteSums(d.kl_sum);
  s.top1_agree = d.top1_agree;
  s.dp_correct_sum = finiteSums(d.dp_correct_sum);
  s.kl_quantiles = {rank(0.5), rank(0.9), rank(0.99), rank(1.0)};
  s.non_finite_tokens = static_cast<std::int64_t>(d.kl_tokens.size() - k.size());
  return s;
}

documents::DivergenceSummary divergenceSummary(const documents::DivergenceSums& raw, const std::vector<std::int64_t>& tokens) {
  const double n = static_cast<double>(std::accumulate(tokens.begin(), tokens.end(), std::int64_t{0}));
  auto total = [](const std::vector<std::optional<double>>& sums) {  // a non-finite sequence (null) makes the total non-finite
    double t = 0;
    for (const auto& v : sums) t += v ? *v : std::nan("");
    return t;
  };
  double agree = 0;
  for (const std::int64_t v : raw.top1_agree) agree += static_cast<double>(v);
  auto per = [&](double v) -> std::optional<double> { return n > 0 && std::isfinite(v) ? std::optional<double>(v / n) : std::nullopt; };
  documents::DivergenceSummary s;
  s.kl_per_token = per(total(raw.kl_sum));
  s.top1_agreement = per(agree);
  s.delta_p_correct = per(total(raw.dp_correct_sum));
  s.kl_quantiles = raw.kl_quantiles;
  s.method = "per token against the control on the same positions: KL(control || condition) in nats over the full "
             "vocabulary (float32 log-softmax), argmax agreement, p(correct) - p_control(correct); means over scored "
             "tokens, quantiles by nearest rank";
  return s;
}

}  // namespace omn::eval
