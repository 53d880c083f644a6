// Tensor descriptions over mapped bytes: what every reader yields and everything else consumes.
// No libtorch here: profile, the parsers and their fuzz targets compile without it.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace omn::io {

enum class DType { BF16, F16, F32, F64, I64, I32, I16, I8, U8, BOOL };

std::size_t dtypeSize(DType d);
const char* dtypeName(DType d);  // safetensors spelling: "BF16", "F32", ...
bool dtypeFromName(const std::string& name, DType* out);  // safetensors spelling
inline bool isFloatingPoint(DType d) { return d == DType::BF16 || d == DType::F16 || d == DType::F32 || d == DType::F64; }

struct TensorRef {
  std::string name;
  DType dtype = DType::F32;
  std::vector<std::int64_t> shape;
  std::vector<std::int64_t> strides;  // in elements
  std::int64_t storage_offset = 0;    // in elements, into the storage
  std::string storage_key;            // torch: the record key; safetensors: "<file>#<name>"
  const std::uint8_t* storage_data = nullptr;  // first byte of the storage in the mapped file
  std::uint64_t storage_file_offset = 0;       // byte offset of the storage in its file
  std::uint64_t storage_bytes = 0;             // size of the storage record
  std::size_t file_index = 0;                  // which file of the checkpoint (sharded sets)
  bool big_endian = false;                     // torch 'byteorder' record said "big"

  std::int64_t numel() const;
  bool contiguous() const;
  std::size_t itemSize() const { return dtypeSize(dtype); }
  // Raw bytes of element `flat` in logical row-major order, honouring strides (itemSize() bytes).
  const std::uint8_t* elementPtr(std::int64_t flat) const;
};

// Whether two tensors hold the same values bit for bit: the same dtype and shape, and equal bytes in
// logical order. One memcmp over each storage span where both are contiguous in one byte order
// (OMN-1's head is a separate copy of its 400 MB embedding: element-wise that was 205M calls).
bool sameBytes(const TensorRef& a, const TensorRef& b);

// "[2048, 128]": shapes in error messages.
std::string shapeString(const std::vector<std::int64_t>& shape);

// The values of a tensor as float64, in logical row-major order, exactly (BF16/F16 widen exactly).
std::vector<double> readAsDouble(const TensorRef& t);
// The raw bytes of a tensor, in logical row-major order, little-endian.
std::vector<std::uint8_t> readBytes(const TensorRef& t);

// Checks `offset + Σ(size_i−1)·stride_i < numel` (and friends) without overflow; throws FormatError
// naming `where` (file and tensor) when the view leaves its storage.
void checkViewBounds(const TensorRef& t, std::uint64_t storage_numel, const std::string& where);

// Name → tensor, in the file's order.
class TensorIndex {
 public:
  void add(TensorRef t);  // throws FormatError on a duplicate name
  const TensorRef* find(const std::string& name) const;
  const TensorRef& at(const std::string& name) const;  // throws FormatError
  const std::vector<TensorRef>& tensors() const { return tensors_; }
  std::size_t size() const { return tensors_.size(); }

 private:
  std::vector<TensorRef> tensors_;
  std::map<std::string, std::size_t> by_name_;
};

}  // namespace omn::io
