#include "omn/model/rotary.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace omn::model {

RopeTables ropeTables(std::int64_t max_positions, std::int64_t head_dim, double theta) {
  const std::int64_t half = head_dim / 2;
  std::vector<float> c(static_cast<std::size_t>(max_positions * half)), s(c.size());
  for (std::int64_t j = 0; j < half; ++j) {
    const double inv_freq = 1.0 / std::pow(theta, static_cast<double>(2 * j) / static_cast<double>(head_dim));
    for (std::int64_t p = 0; p < max_positions; ++p) {
      const double angle = static_cast<double>(p) * inv_freq;
      c[static_cast<std::size_t>(p * half + j)] = static_cast<float>(std::cos(angle));
      s[static_cast<std::size_t>(p * half + j)] = static_cast<float>(std::sin(angle));
    }
  }
  RopeTables t;
  t.cos = at::tensor(c).view({max_positions, half});
  t.sin = at::tensor(s).view({max_positions, half});
  return t;
}

RopeRotation ropeRotation(const at::Tensor& positions, std::int64_t head_dim, double theta, const at::Device& device) {
  const std::int64_t B = positions.size(0), T = positions.size(1);
  // positions restart at each document, so T rows of the table cover every one of them
  const RopeTables t = ropeTables(std::max<std::int64_t>(T, 1), head_dim, theta);
  const at::Tensor flat = positions.reshape({-1}).to(device);
  RopeRotation r;  // cos/sin for every token, broadcast over heads: [B, T, 1, D/2]
  r.cos = t.cos.to(device).index_select(0, flat).view({B, T, 1, head_dim / 2});
  r.sin = t.sin.to(device).index_select(0, flat).view({B, T, 1, head_dim / 2});
  return r;
}

at::Tensor applyRope(const at::Tensor& x, const RopeRotation& r, RopeStyle style) {
  const std::int64_t D = x.size(-1);
  const at::Tensor &cos = r.cos, &sin = r.sin;
  const at::Tensor xf = x.to(at::kFloat);
  at::Tensor out;
  if (style == RopeStyle::RotateHalf) {
    const at::Tensor a = xf.narrow(-1, 0, D / 2), b = xf.narrow(-1, D / 2, D / 2);
    out = at::cat({a * cos - b * sin, b * cos + a * sin}, -1);
  } else {
    const at::Tensor pairs = xf.unflatten(-1, {D / 2, 2});
    const at::Tensor a = pairs.select(-1, 0), b = pairs.select(-1, 1);
    out = at::stack({a * cos - b * sin, b * cos + a * sin}, -1).flatten(-2);
  }
  return out.to(x.scalar_type());
}

}  // namespace omn::model
