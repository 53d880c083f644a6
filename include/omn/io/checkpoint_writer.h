// Writing checkpoints in torch.save's zip format (what `torch.save(obj, f)` writes with PyTorch
// >= 1.6): a pickle (protocol 2) of the envelope with each tensor's bytes in its own 64-byte
// aligned, stored (uncompressed) record. Python reads the result with
// `torch.load(path, weights_only=True)`; omn-audit reads it with its own reader. No libtorch.
//
// PyTorch 1.13's weights_only unpickler has no float opcode, so the envelope may hold objects,
// arrays, strings, integers, booleans and null, but no floating-point number: a caller stores
// such metadata as a JSON text (train::writeWeights, train/run_files.h). A float is refused, never rounded.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "omn/io/tensor_index.h"

namespace omn::io {

// One tensor of a state dict: contiguous, little-endian bytes in row-major order.
struct TensorRecord {
  std::string name;
  DType dtype = DType::F32;
  std::vector<std::int64_t> shape;
  const void* data = nullptr;
  std::size_t bytes = 0;  // must equal numel · dtypeSize(dtype)
};

// The archive's bytes: envelope[state_key] = OrderedDict(name → tensor) in the given order, every
// other key of `envelope` pickled as plain values. Throws UsageError for a float in the envelope,
// a tensor whose byte count does not match its shape, or an archive past 4 GiB (no ZIP64 here).
std::string torchCheckpointBytes(const std::vector<TensorRecord>& tensors, const nlohmann::json& envelope,
                                 const std::string& state_key = "model", const std::string& archive_name = "archive");

}  // namespace omn::io
