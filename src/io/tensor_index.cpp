#include "omn/io/tensor_index.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <utility>

#include "omn/errors.h"

namespace omn::io {

namespace {
struct DTypeInfo {
  DType d;
  const char* name;
  std::size_t size;
};
constexpr DTypeInfo kDTypes[] = {
    {DType::BF16, "BF16", 2}, {DType::F16, "F16", 2}, {DType::F32, "F32", 4}, {DType::F64, "F64", 8},
    {DType::I64, "I64", 8},   {DType::I32, "I32", 4}, {DType::I16, "I16", 2}, {DType::I8, "I8", 1},
    {DType::U8, "U8", 1},     {DType::BOOL, "BOOL", 1},
};

double bf16ToDouble(std::uint16_t b) {
  std::uint32_t u = static_cast<std::uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

double f16ToDouble(std::uint16_t h) {
  const int sign = (h >> 15) & 1, exp = (h >> 10) & 31, frac = h & 1023;
  double v;
  if (exp == 0) v = std::ldexp(static_cast<double>(frac), -24);
  else if (exp == 31) v = frac ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  else v = std::ldexp(static_cast<double>(frac | 1024), exp - 25);
  return sign ? -v : v;
}

template <typename T>
T load(const std::uint8_t* p, bool swap) {
  std::uint8_t b[sizeof(T)];
  std::memcpy(b, p, sizeof(T));
  if (swap)
    for (std::size_t i = 0; i < sizeof(T) / 2; ++i) std::swap(b[i], b[sizeof(T) - 1 - i]);
  T v;
  std::memcpy(&v, b, sizeof(T));
  return v;
}
}  // namespace

std::size_t dtypeSize(DType d) {
  for (const auto& i : kDTypes)
    if (i.d == d) return i.size;
  return 0;
}

const char* dtypeName(DType d) {
  for (const auto& i : kDTypes)
    if (i.d == d) return i.name;
  return "?";
}

bool dtypeFromName(const std::string& name, DType* out) {
  for (const auto& i : kDTypes)
    if (name == i.name) {
      *out = i.d;
      return true;
    }
  return false;
}

std::string shapeString(const std::vector<std::int64_t>& s) {
  std::string out = "[";
  for (std::size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

std::int64_t TensorRef::numel() const {
  std::int64_t n = 1;
  for (auto s : shape) n *= s;
  return n;
}

bool TensorRef::contiguous() const {
  std::int64_t expect = 1;
  for (std::size_t i = shape.size(); i-- > 0;) {
    if (shape[i] != 1 && strides[i] != expect) return false;
    expect *= shape[i];
  }
  return true;
}

const std::uint8_t* TensorRef::elementPtr(std::int64_t flat) const {
  std::int64_t off = storage_offset;
  for (std::size_t i = shape.size(); i-- > 0;) {
    const std::int64_t idx = flat % shape[i];
    flat /= shape[i];
    off += idx * strides[i];
  }
  return storage_data + static_cast<std::uint64_t>(off) * itemSize();
}

bool sameBytes(const TensorRef& a, const TensorRef& b) {
  if (a.dtype != b.dtype || a.shape != b.shape) return false;
  const std::size_t item = a.itemSize();
  const std::int64_t n = a.numel();
  if (a.contiguous() && b.contiguous() && a.big_endian == b.big_endian)
    return n == 0 || std::memcmp(a.storage_data + static_cast<std::uint64_t>(a.storage_offset) * item,
                                 b.storage_data + static_cast<std::uint64_t>(b.storage_offset) * item,
                                 static_cast<std::size_t>(n) * item) == 0;
  for (std::int64_t i = 0; i < n; ++i) {  // views, or two byte orders: element by element, in logical order
    const std::uint8_t *p = a.elementPtr(i), *q = b.elementPtr(i);
    for (std::size_t k = 0; k < item; ++k)
      if (p[a.big_endian ? item - 1 - k : k] != q[b.big_endian ? item - 1 - k : k]) return false;
  }
  return true;
}

std::vector<double> readAsDouble(const TensorRef& t) {
  const std::int64_t n = t.numel();
  std::vector<double> out(static_cast<std::size_t>(n));
  const bool sw = t.big_endian;
  for (std::int64_t i = 0; i < n; ++i) {
    const std::uint8_t* p = t.elementPtr(i);
    double v = 0;
    switch (t.dtype) {
      case DType::BF16: v = bf16ToDouble(load<std::uint16_t>(p, sw)); break;
      case DType::F16: v = f16ToDouble(load<std::uint16_t>(p, sw)); break;
      case DType::F32: v = load<float>(p, sw); break;
      case DType::F64: v = load<double>(p, sw); break;
      case DType::I64: v = static_cast<double>(load<std::int64_t>(p, sw)); break;
      case DType::I32: v = load<std::int32_t>(p, sw); break;
      case DType::I16: v = load<std::int16_t>(p, sw); break;
      case DType::I8: v = static_cast<std::int8_t>(*p); break;
      case DType::U8: v = *p; break;
      case DType::BOOL: v = *p != 0; break;
    }
    out[static_cast<std::size_t>(i)] = v;
  }
  return out;
}

std::vector<std::uint8_t> readBytes(const TensorRef& t) {
  const std::size_t item = t.itemSize();
  const std::int64_t n = t.numel();
  std::vector<std::uint8_t> out(static_cast<std::size_t>(n) * item);
  for (std::int64_t i = 0; i < n; ++i) {
    const std::uint8_t* p = t.elementPtr(i);
    std::uint8_t* q = out.data() + static_cast<std::size_t>(i) * item;
    for (std::size_t b = 0; b < item; ++b) q[b] = t.big_endian ? p[item - 1 - b] : p[b];
  }
  return out;
}

void checkViewBounds(const TensorRef& t, std::uint64_t storage_numel, const std::string& where) {
  auto fail = [&](const std::string& what) {
    throw FormatError(where + ": tensor '" + t.name + "': " + what);
  };
  if (t.shape.size() != t.strides.size())
    fail("size has " + std::to_string(t.shape.size()) + " dimensions but stride has " +
         std::to_string(t.strides.size()));
  if (t.storage_offset < 0) fail("negative storage offset " + std::to_string(t.storage_offset));
  std::int64_t numel = 1;
  unsigned __int128 last = static_cast<std::uint64_t>(t.storage_offset);
  for (std::size_t i = 0; i < t.shape.size(); ++i) {
    if (t.shape[i] < 0) fail("negative size in dimension " + std::to_string(i));
    if (t.strides[i] < 0) fail("negative stride in dimension " + std::to_string(i));
    if (__builtin_mul_overflow(numel, t.shape[i], &numel)) fail("element count overflows");
    if (t.shape[i] > 0) last += static_cast<unsigned __int128>(t.shape[i] - 1) * static_cast<std::uint64_t>(t.strides[i]);
  }
  if (numel == 0) return;
  if (last >= storage_numel)
    fail("view (offset " + std::to_string(t.storage_offset) + ") reaches element " +
         std::to_string(static_cast<std::uint64_t>(last)) + ", expected < storage size " +
         std::to_string(storage_numel));
}

void TensorIndex::add(TensorRef t) {
  if (by_name_.count(t.name)) throw FormatError("duplicate tensor name '" + t.name + "'");
  by_name_.emplace(t.name, tensors_.size());
  tensors_.push_back(std::move(t));
}

const TensorRef* TensorIndex::find(const std::string& name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : &tensors_[it->second];
}

const TensorRef& TensorIndex::at(const std::string& name) const {
  const TensorRef* t = find(name);
  if (!t) throw FormatError("no tensor named '" + name + "' in the checkpoint");
  return *t;
}

}  // namespace omn::io
