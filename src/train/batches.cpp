#include "omn/train/batches.h"

#include "omn/errors.h"
#include "omn/split_mix64.h"

namespace omn::train {

BatchRows sampleBatch(const std::vector<std::uint32_t>& stream, std::int64_t eos, std::uint64_t seed, std::int64_t step,
                      std::int64_t batch, std::int64_t seq_len) {
  const std::uint64_t n = stream.size(), T = static_cast<std::uint64_t>(seq_len);
  if (n < T)
    throw UsageError("the training stream holds " + std::to_string(n) + " tokens, fewer than one row of " + std::to_string(T));
  SplitMix64 rng(seed * 0x9E3779B97F4A7C15ull ^ (static_cast<std::uint64_t>(step) * 0xD1B54A32D192ED03ull));
  BatchRows b;
  b.tokens.resize(static_cast<std::size_t>(batch * seq_len));
  b.doc.resize(b.tokens.size());
  for (std::int64_t r = 0; r < batch; ++r) {
    const std::uint64_t off = rng.below(n - T + 1);
    b.offsets.push_back(off);
    std::int64_t d = 0;
    for (std::uint64_t t = 0; t < T; ++t) {
      const std::size_t i = static_cast<std::size_t>(r * seq_len) + t;
      b.tokens[i] = stream[off + t];
      b.doc[i] = d;
      if (static_cast<std::int64_t>(stream[off + t]) == eos) ++d;
    }
  }
  return b;
}

}  // namespace omn::train
