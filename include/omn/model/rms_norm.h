// RMSNorm: x / sqrt(mean(x²) + eps) · g, computed in float32 and cast back to x's dtype; whether
// the gain multiplies before or after the cast is the config's NormCast.
#pragma once
#include <ATen/ATen.h>

#include "omn/model/config.h"

namespace omn::model {

at::Tensor rmsNorm(const at::Tensor& x, const at::Tensor& gain, double eps, NormCast cast);

}  // namespace omn::model
