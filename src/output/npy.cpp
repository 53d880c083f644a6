#include "omn/output/npy.h"

#include <cstring>

#include "omn/output/json_file.h"

namespace omn::output {

void writeNpyFloat32(const std::string& path, const float* data, const std::vector<std::int64_t>& shape) {
  std::string dims;
  std::int64_t n = 1;
  for (auto d : shape) {
    dims += std::to_string(d) + ",";
    n *= d;
  }
  if (shape.size() > 1) dims.pop_back();
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + dims + "), }";
  header.append(64 - (10 + header.size() + 1) % 64, ' ');  // pad so the data starts 64-byte aligned
  header += '\n';
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xFF);
  out += static_cast<char>(header.size() >> 8);
  out += header;
  const std::size_t at = out.size();
  out.resize(at + static_cast<std::size_t>(n) * 4);
  std::memcpy(&out[at], data, static_cast<std::size_t>(n) * 4);
  writeFileAtomic(path, out);
}

}  // namespace omn::output
