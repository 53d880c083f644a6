// Writing .npy arrays (NumPy format 1.0, little-endian float32, C order) for raw dumps that
// Python checks read back (logits in parity tests).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace omn::output {

// The bytes of a C-order array of `shape` with NumPy's `descr` ("<f4", "<u2", "<u4", "<i8"), `item`
// bytes an element, its data 64-byte aligned: the one .npy encoder (logits, token sets, offsets).
std::string npyBytes(const void* data, const std::vector<std::int64_t>& shape, const char* descr, std::size_t item);

void writeNpyFloat32(const std::string& path, const float* data, const std::vector<std::int64_t>& shape);

}  // namespace omn::output
