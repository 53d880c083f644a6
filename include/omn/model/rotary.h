// Rotary position embedding, applied to Q and K *after* their RMSNorm. Angles in float64, rotation
// in float32, cast back. Positions are per token (they restart at each document start).
#pragma once
#include <ATen/ATen.h>

#include "omn/model/config.h"

namespace omn::model {

struct RopeTables {
  at::Tensor cos, sin;  // [max_positions, head_dim/2] float32
};

RopeTables ropeTables(std::int64_t max_positions, std::int64_t head_dim, double theta);

// x [B, T, H, D], positions [B, T] (int64) → x rotated, same dtype.
// rotate_half pairs (j, j + D/2); interleaved pairs (2j, 2j + 1).
at::Tensor applyRope(const at::Tensor& x, const at::Tensor& positions, const RopeTables& tables, RopeStyle style);

}  // namespace omn::model
