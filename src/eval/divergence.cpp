#include "omn/eval/divergence.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace omn::eval {

using nlohmann::json;

json divergenceRaw(const Divergence& d) {
  // quantiles over the finite values (a non-finite one would make the sort undefined), the others counted
  std::vector<float> k;
  k.reserve(d.kl_tokens.size());
  for (float v : d.kl_tokens)
    if (std::isfinite(v)) k.push_back(v);
  const std::size_t non_finite = d.kl_tokens.size() - k.size();
  std::sort(k.begin(), k.end());
  auto rank = [&](double q) -> json {  // nearest rank: the smallest value with at least q of them at or below
    if (k.empty()) return nullptr;
    const auto i = static_cast<std::size_t>(std::max(1.0, std::ceil(q * static_cast<double>(k.size())))) - 1;
    return static_cast<double>(k[std::min(i, k.size() - 1)]);
  };
  auto finite = [](const std::vector<double>& v) {  // NaN/inf as null, as the NLL sums are journaled
    json a = json::array();
    for (double x : v) a.push_back(std::isfinite(x) ? json(x) : json(nullptr));
    return a;
  };
  return {{"kl_sum", finite(d.kl_sum)},
          {"top1_agree", d.top1_agree},
          {"dp_correct_sum", finite(d.dp_correct_sum)},
          {"kl_quantiles", {{"p50", rank(0.5)}, {"p90", rank(0.9)}, {"p99", rank(0.99)}, {"max", rank(1.0)}}},
          {"non_finite_tokens", non_finite}};
}

json divergenceSummary(const json& raw, const std::vector<std::int64_t>& tokens) {
  const double n = static_cast<double>(std::accumulate(tokens.begin(), tokens.end(), std::int64_t{0}));
  auto total = [&](const char* key) {  // a non-finite sequence (null) makes the total non-finite
    double t = 0;
    for (const json& v : raw.at(key)) t += v.is_null() ? std::nan("") : v.get<double>();
    return t;
  };
  auto per = [&](double v) -> json { return n > 0 && std::isfinite(v) ? json(v / n) : json(nullptr); };
  return {{"kl_per_token", per(total("kl_sum"))},
          {"top1_agreement", per(total("top1_agree"))},
          {"delta_p_correct", per(total("dp_correct_sum"))},
          {"kl_quantiles", raw.at("kl_quantiles")},
          {"method", "per token against the control on the same positions: KL(control || condition) in nats over the full "
                     "vocabulary (float32 log-softmax), argmax agreement, p(correct) - p_control(correct); means over scored "
                     "tokens, quantiles by nearest rank"}};
}

}  // namespace omn::eval
