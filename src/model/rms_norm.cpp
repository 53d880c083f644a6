#include "omn/model/rms_norm.h"

namespace omn::model {

at::Tensor rmsNorm(const at::Tensor& x, const at::Tensor& gain, double eps, NormCast cast) {
  const at::Tensor xf = x.to(at::kFloat);
  // normalise in float32 over the last dimension
  const at::Tensor normed = xf * at::rsqrt(xf.pow(2).mean(-1, /*keepdim=*/true) + eps);
  if (cast == NormCast::MultiplyThenCast) return (normed * gain.to(at::kFloat)).to(x.scalar_type());
  return normed.to(x.scalar_type()) * gain.to(x.scalar_type());
}

}  // namespace omn::model
