// Rotary position embedding, applied to Q and K *after* their RMSNorm. Angles in float64, rotation
// in float32, cast back. Positions are per token (they restart at each document start).
#pragma once
#include <ATen/ATen.h>

#include "omn/model/config.h"

namespace omn::model {

struct RopeTables {
  at::Tensor cos, sin;  // [max_positions, head_dim/2] float32, on the host
};

RopeTables ropeTables(std::int64_t max_positions, std::int64_t head_dim, double theta);

// The rotation of one batch: cos and sin of every token's angle, [B, T, 1, D/2] float32 on the
// device. Made once per forward pass (Transformer::run) and shared by the Q and K of every layer:
// one host-to-device copy per pass, not several per layer.
struct RopeRotation {
  at::Tensor cos, sin;
};
// positions [B, T] int64 (any device); the rotation lands on `device`.
RopeRotation ropeRotation(const at::Tensor& positions, std::int64_t head_dim, double theta, const at::Device& device);

// x [B, T, H, D] → x rotated, same dtype; the rotation in float32.
// rotate_half pairs (j, j + D/2); interleaved pairs (2j, 2j + 1).
at::Tensor applyRope(const at::Tensor& x, const RopeRotation& r, RopeStyle style);

}  // namespace omn::model
