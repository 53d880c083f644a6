// safetensors, single files and sharded sets (*.safetensors.index.json), validated as the
// reference implementation does: header ≤ 100 MB and inside the file, UTF-8 JSON, known dtypes,
// offsets sorted without gap or overlap, end−begin == numel·size, the buffer exactly covered.
#pragma once
#include <cstddef>

#include <nlohmann/json.hpp>

#include "omn/io/checkpoint.h"

namespace omn::io {

// Parses one mapped safetensors file into `index` (storage keys "<file_index>:<name>") and returns
// its __metadata__ (an object of strings; empty when absent).
nlohmann::json parseSafetensors(const MappedFile& file, std::size_t file_index, TensorIndex& index);

void readSafetensors(Checkpoint& ck);       // ck.files[0]
void readSafetensorsIndex(Checkpoint& ck);  // ck.path is the index JSON; maps each shard

}  // namespace omn::io
