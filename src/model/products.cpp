#include "omn/model/products.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "omn/errors.h"

namespace omn::model {

namespace {

std::string upper(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return s;
}

// oneDNN's ISA limits (dnnl_cpu_isa_t, names as ONEDNN_MAX_CPU_ISA spells them) under which its
// bf16 product kernels still run; any other value, known or not, stops them.
bool isaAllowsBf16(const std::string& isa) {
  static const char* const kAllow[] = {"ALL",         "AVX512_CORE_BF16",     "AVX512_CORE_FP16",     "AVX512_CORE_AMX",
                                       "AVX512_CORE_AMX_FP16", "AVX10_1_512", "AVX10_1_512_AMX", "AVX10_1_512_AMX_FP16",
                                       "AVX10_2_512", "AVX10_2_512_AMX_2"};
  const std::string u = upper(isa);
  return std::any_of(std::begin(kAllow), std::end(kAllow), [&](const char* a) { return u == a; });
}

// ...and the limits below AVX-512, under which oneDNN 2.x has no bf16 product at all.
bool isaBelowAvx512(const std::string& isa) {
  const std::string u = upper(isa);
  return u == "SSE41" || u == "AVX" || u.rfind("AVX2", 0) == 0;
}

#if defined(__x86_64__) || defined(__i386__)
unsigned long long xcr0() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 27))) return 0;  // OSXSAVE
  unsigned lo = 0, hi = 0;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (static_cast<unsigned long long>(hi) << 32) | lo;
}
#endif

bool fromEnv(const char* name, std::string& value) {  // an empty value counts as unset
  const char* v = std::getenv(name);
  if (!v || !*v) return false;
  value = v;
  return true;
}

}  // namespace

ProductFacts readProductFacts() {
  ProductFacts f;
#if defined(__x86_64__) || defined(__i386__)
  const unsigned long long x = xcr0();
  const bool zmm = (x & 0xE6) == 0xE6;          // SSE, AVX, opmask and both ZMM states enabled by the OS
  const bool tiles = (x & (3ull << 17)) == (3ull << 17);  // XTILECFG and XTILEDATA
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (__get_cpuid_count(7, 1, &a, &b, &c, &d)) f.avx512_bf16 = zmm && (a & (1u << 5));
  if (__get_cpuid_count(7, 0, &a, &b, &c, &d)) {
    f.amx_bf16 = tiles && (d & (1u << 22));
    const unsigned core = (1u << 16) | (1u << 17) | (1u << 30) | (1u << 31);  // avx512f, dq, bw, vl
    f.avx512_core = zmm && (b & core) == core;
  }
#endif
  if (fromEnv("ONEDNN_MAX_CPU_ISA", f.onednn_max_isa)) f.onednn_max_isa_variable = "ONEDNN_MAX_CPU_ISA";
  else if (fromEnv("DNNL_MAX_CPU_ISA", f.onednn_max_isa)) f.onednn_max_isa_variable = "DNNL_MAX_CPU_ISA";
  fromEnv("OMN_BF16_PRODUCTS", f.requested);
  return f;
}

bool nativeBf16Runs(const ProductFacts& f) {
  return !(f.avx512_core && !f.onednn_max_isa.empty() && isaBelowAvx512(f.onednn_max_isa));
}

ProductChoice chooseBf16Products(const ProductFacts& f) {
  if (!f.requested.empty() && f.requested != "auto") {
    const Bf16Products p = io::parseChoice(kBf16Products, f.requested, "OMN_BF16_PRODUCTS");
    if (p == Bf16Products::Native && !nativeBf16Runs(f))
      throw UsageError("OMN_BF16_PRODUCTS=native: " + f.onednn_max_isa_variable + "=" + f.onednn_max_isa +
                       " holds oneDNN below AVX-512, where it has no bf16 products, and libtorch hands them to oneDNN on "
                       "this CPU; unset one of the two (fp32-accumulate gives the same bf16 arithmetic)");
    return {p, "OMN_BF16_PRODUCTS=" + f.requested};
  }
  const std::string isa = f.avx512_bf16 && f.amx_bf16 ? "avx512_bf16 and amx_bf16" : f.avx512_bf16 ? "avx512_bf16" : "amx_bf16";
  if (!f.avx512_bf16 && !f.amx_bf16)
    return {Bf16Products::Fp32Accumulate, "the CPU has no bf16 product instructions (no avx512_bf16, no amx_bf16)"};
  if (!f.onednn_max_isa.empty() && !isaAllowsBf16(f.onednn_max_isa))
    return {Bf16Products::Fp32Accumulate,
            "the CPU has " + isa + " but " + f.onednn_max_isa_variable + "=" + f.onednn_max_isa + " stops oneDNN's bf16 kernels"};
  return {Bf16Products::Native, "the CPU has " + isa};
}

const ProductChoice& bf16Products() {
  static const ProductChoice choice = chooseBf16Products(readProductFacts());
  return choice;
}

nlohmann::json productsJson(at::ScalarType dtype, const at::Device& device) {
  const ProductChoice& c = bf16Products();
  if (dtype != at::kBFloat16) {  // named as --dtype spells it
    const std::string name = dtype == at::kFloat ? "fp32" : dtype == at::kHalf ? "fp16" : c10::toString(dtype);
    return {{"bf16", "not used"}, {"reason", "the working dtype is " + name + ": no bf16 products"}};
  }
  if (!device.is_cpu()) return {{"bf16", "native"}, {"reason", device.str() + ": libtorch's own bf16 products"}};
  return {{"bf16", io::choiceName(kBf16Products, c.bf16)}, {"reason", c.reason}};
}

namespace products {

namespace {
bool emulated(const at::Tensor& x) {
  return x.scalar_type() == at::kBFloat16 && x.device().is_cpu() && bf16Products().bf16 == Bf16Products::Fp32Accumulate;
}
}  // namespace

at::Tensor linear(const at::Tensor& x, const at::Tensor& w) {
  if (!emulated(x)) return at::linear(x, w);
  return at::linear(x.to(at::kFloat), w.to(at::kFloat)).to(at::kBFloat16);
}

at::Tensor matmul(const at::Tensor& a, const at::Tensor& b) {
  if (!emulated(a)) return at::matmul(a, b);
  return at::matmul(a.to(at::kFloat), b.to(at::kFloat)).to(at::kBFloat16);
}

at::Tensor weight(const at::Tensor& w) { return emulated(w) ? w.to(at::kFloat) : w; }

void linearInto(at::Tensor& z, const at::Tensor& x, const at::Tensor& w_product) {
  if (w_product.scalar_type() != at::kFloat) {  // native bf16 (or another dtype's own kernels)
    z.copy_(at::linear(x, w_product));
    return;
  }
  at::mm_out(z, x.to(at::kFloat), w_product.t());
  if (x.scalar_type() != at::kFloat) z.copy_(z.to(x.scalar_type()));  // the rounding a bf16 product makes
}

}  // namespace products

}  // namespace omn::model
