// A small deterministic generator (splitmix64): same seed, same numbers on every platform (std::
// distributions are implementation-defined). Below every layer: eval's row selection and
// bootstrap, intervene's permute and noise ops, and the trainer's batch offsets all draw from it.
#pragma once
#include <cstdint>

namespace omn {

class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t seed) : s_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (s_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // uniform in [0, n), unbiased (rejection of the top partial block)
  std::uint64_t below(std::uint64_t n) {
    const std::uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    for (;;) {
      const std::uint64_t v = next();
      if (v < limit) return v % n;
    }
  }

 private:
  std::uint64_t s_;
};

}  // namespace omn
