// Matrix products of the forward pass, with the one choice of how bf16 products run on a CPU:
//  * native: libtorch's bf16 kernels (oneDNN's avx512_core_bf16 / AMX: bf16 inputs, float32
//    accumulation, the output rounded to bf16);
//  * fp32-accumulate: the same arithmetic built from float32 kernels (bf16 inputs widened exactly,
//    multiplied and accumulated in float32, the output rounded to bf16), as GPU bf16 GEMMs compute.
// Both give bf16 results (they differ only in the order of the float32 sums); the second runs at
// float32 speed where the CPU has no bf16 product instructions (libtorch 1.13 then falls back to a
// scalar loop, ~4 GFLOP/s against ~78 in float32 on an AVX2 EPYC). Chosen once per process from the
// CPU's features, oneDNN's ISA limit and OMN_BF16_PRODUCTS; every result records it with the reason
// (productsJson). Other dtypes and CUDA tensors always take libtorch's kernels.
#pragma once
#include <ATen/ATen.h>
#include <nlohmann/json.hpp>

#include <array>
#include <string>

#include "omn/io/choice.h"

namespace omn::model {

enum class Bf16Products { Native, Fp32Accumulate };
inline constexpr std::array<io::Named<Bf16Products>, 2> kBf16Products{
    {{"native", Bf16Products::Native}, {"fp32-accumulate", Bf16Products::Fp32Accumulate}}};

// What decides the choice, read once from the CPU (cpuid) and the environment.
struct ProductFacts {
  bool avx512_bf16 = false, amx_bf16 = false;  // the CPU's bf16 product instructions
  bool avx512_core = false;  // avx512f/bw/vl/dq: libtorch 1.13 then hands every bf16 product to oneDNN
  std::string onednn_max_isa;                  // ONEDNN_MAX_CPU_ISA, else DNNL_MAX_CPU_ISA ("" unset)
  std::string onednn_max_isa_variable;         // which of the two set it
  std::string requested;                       // OMN_BF16_PRODUCTS: "", auto, native, fp32-accumulate
};

struct ProductChoice {
  Bf16Products bf16 = Bf16Products::Fp32Accumulate;
  std::string reason;  // one sentence: why, naming the feature or variable that decided
};

// The rule, a pure function (unit-tested): OMN_BF16_PRODUCTS native / fp32-accumulate wins; else
// native where the CPU has avx512_bf16 or amx_bf16 and oneDNN's ISA limit, if set, still allows
// them; else fp32-accumulate. An unknown OMN_BF16_PRODUCTS is a UsageError naming it, and so is
// native where it cannot run (nativeBf16Runs).
ProductChoice chooseBf16Products(const ProductFacts& facts);
// Whether libtorch's own bf16 products run at all: not on an AVX-512 CPU whose oneDNN is held below
// AVX-512 (ONEDNN_MAX_CPU_ISA=AVX2: libtorch still calls oneDNN, which has no bf16 kernel there and
// throws "could not create a primitive descriptor iterator").
bool nativeBf16Runs(const ProductFacts& facts);
ProductFacts readProductFacts();
// This process's choice (read and decided once, on first use; commands call it at the edge, so a
// bad OMN_BF16_PRODUCTS is exit 2 before any work).
const ProductChoice& bf16Products();
// {"bf16": "native" | "fp32-accumulate" | "not used", "reason": ...}: what every result records, for
// the run's working dtype and device (fp32 runs multiply no bf16; CUDA uses libtorch's own).
nlohmann::json productsJson(at::ScalarType dtype, const at::Device& device);

// The products themselves, called qualified (products::linear) so they never meet at::linear.
namespace products {

// x [..., K] · w [N, K]^T → [..., N], in x's dtype.
at::Tensor linear(const at::Tensor& x, const at::Tensor& w);
// a [..., M, K] · b [..., K, N] → [..., M, N], in a's dtype.
at::Tensor matmul(const at::Tensor& a, const at::Tensor& b);

// For a weight used many times (the output head, chunk after chunk): `w` as the products read it,
// widened to float32 once where bf16 products accumulate in float32, else `w` itself.
at::Tensor weight(const at::Tensor& w);
// z (float32 [n, N]) = x [n, K] · w^T with w from weight(): the values linear(x, w) gives,
// rounded to x's dtype, then widened into z.
void linearInto(at::Tensor& z, const at::Tensor& x, const at::Tensor& w_product);

}  // namespace products

}  // namespace omn::model
