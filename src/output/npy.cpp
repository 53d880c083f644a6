#include "omn/output/npy.h"

#include <cstring>

#include "omn/output/json_file.h"

namespace omn::output {

std::string npyBytes(const void* data, const std::vector<std::int64_t>& shape, const char* descr, std::size_t item) {
  std::string dims;
  std::int64_t n = 1;
  for (auto d : shape) {
    dims += std::to_string(d) + ",";
    n *= d;
  }
  if (shape.size() > 1) dims.pop_back();
  std::string header = std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': (" + dims + "), }";
  const std::size_t unpadded = 10 + header.size() + 1;  // magic, version, length, header, newline
  header.append((64 - unpadded % 64) % 64, ' ');          // the data starts 64-byte aligned
  header += '\n';
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xFF);
  out += static_cast<char>(header.size() >> 8);
  out += header;
  const std::size_t at = out.size();
  out.resize(at + static_cast<std::size_t>(n) * item);
  if (n > 0) std::memcpy(&out[at], data, static_cast<std::size_t>(n) * item);  // little-endian hosts only (x86-64, aarch64)
  return out;
}

void writeNpyFloat32(const std::string& path, const float* data, const std::vector<std::int64_t>& shape) {
  writeFileAtomic(path, npyBytes(data, shape, "<f4", 4));
}

}  // namespace omn::output
