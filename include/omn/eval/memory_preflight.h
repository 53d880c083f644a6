// The memory an evaluation will hold at its peak, estimated from the model's dimensions, the rows
// and the attention path before any weight is loaded, and the check that it fits: what cannot fit
// is a UsageError with the figures and the option that fixes it, never an allocator's exception
// half-way through a run.
#pragma once
#include <cstdint>
#include <string>

#include <ATen/ATen.h>

#include "omn/model/attention.h"
#include "omn/model/config.h"

namespace omn::eval {

struct MemoryEstimate {
  std::int64_t weights = 0;      // every parameter in the working dtype
  std::int64_t activations = 0;  // one block's intermediates for a pass of `batch` rows
  std::int64_t attention = 0;    // the scores one layer of the path holds (float32), with its mask
  std::int64_t logits = 0;       // the head's float32 copy and the scorer's logit chunks
  std::int64_t total() const { return weights + activations + attention + logits; }
};

MemoryEstimate estimateEvalMemory(const model::ModelConfig& c, at::ScalarType dtype, model::AttentionPath path,
                                  const model::AttentionShape& shape);

// What this process may still allocate, in bytes: OMN_MEMORY_AVAILABLE when set (bytes; for a
// machine shared with other work), else the smaller of /proc/meminfo's MemAvailable and the cgroup's
// memory.max less memory.current. `source` names where the figure came from. -1 when unknown.
std::int64_t availableMemory(std::string* source = nullptr);

// The flags (or a manifest's pointers) that size a pass, for the message.
struct SizingNames {
  std::string attention = "--attention", batch = "--batch", seq_len = "--seq-len";
};

// Throws UsageError when `estimate` passes `available` (nothing is checked when it is unknown),
// naming each part and the option that brings it within reach: the blockwise path when the scores
// dominate, a smaller batch, then a shorter row.
void requireMemory(const model::ModelConfig& c, at::ScalarType dtype, model::AttentionPath path,
                   const model::AttentionShape& shape, std::int64_t available, const std::string& available_source,
                   const SizingNames& names);

}  // namespace omn::eval
