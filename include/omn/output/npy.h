// Writing .npy arrays (NumPy format 1.0, little-endian float32, C order) for raw dumps that
// Python checks read back (logits in parity tests).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace omn::output {

void writeNpyFloat32(const std::string& path, const float* data, const std::vector<std::int64_t>& shape);

}  // namespace omn::output
