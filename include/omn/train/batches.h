// Training batches: B rows of T consecutive tokens at seeded random offsets of the training stream,
// with document ids (a document ends with, and includes, its EOS token). The offsets depend only on
// (seed, step), so a resumed run draws exactly the batches an uninterrupted one draws. No libtorch.
#pragma once
#include <cstdint>
#include <vector>

namespace omn::train {

struct BatchRows {
  std::vector<std::uint64_t> offsets;  // per row, index of its first token in the stream
  std::vector<std::int64_t> tokens;    // B·T, row-major
  std::vector<std::int64_t> doc;       // B·T, document id per token (restarting per row)
};

// Throws UsageError when the stream is shorter than one row.
BatchRows sampleBatch(const std::vector<std::uint32_t>& stream, std::int64_t eos, std::uint64_t seed, std::int64_t step,
                      std::int64_t batch, std::int64_t seq_len);

}  // namespace omn::train
