// Token files for the trainer's tests: documents "k, k+1, ..., k+L-1, EOS" (EOS 0, ids in [1, 63])
// as u16, learnable in a few steps, and a file written with its SHA-256 returned. Shared by
// test_train.cpp and test_study_run.cpp (one binary).
#pragma once
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "omn/io/sha256.h"

namespace omn::test {

inline std::string writeBytes(const std::filesystem::path& p, const std::string& bytes) {
  std::ofstream(p, std::ios::binary) << bytes;
  return omn::io::sha256File(p.string());
}

inline std::string tokenBytes(std::size_t n, unsigned seed) {
  std::string out;
  unsigned state = seed;
  while (out.size() < 2 * n) {
    state = state * 1103515245u + 12345u;
    const unsigned start = 1 + (state >> 16) % 40, len = 4 + (state >> 8) % 12;
    for (unsigned i = 0; i <= len && out.size() < 2 * n; ++i) {
      const std::uint16_t t = i == len ? 0 : static_cast<std::uint16_t>(1 + (start + i - 1) % 63);
      out.push_back(static_cast<char>(t & 0xff));
      out.push_back(static_cast<char>(t >> 8));
    }
  }
  return out;
}

}  // namespace omn::test
