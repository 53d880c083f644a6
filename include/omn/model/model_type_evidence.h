// A Hugging Face config.json's model_type against the tensors' own evidence: the preset detection
// (preset.h detectPreset) decides when it finds one family; a model_type naming another family is
// refused (a Qwen3 folder saying gemma3 was profiled as 1 + w, every gain off by one). No libtorch.
#pragma once
#include "omn/io/tensor_index.h"
#include "omn/model/hf_config.h"
#include "omn/model/preset.h"

namespace omn::model {

// FormatError naming config.json and /model_type when the tensors match exactly one built-in
// preset (not a generic fallback) and it is not `chosen` (the preset model_type named). Tensors
// that match none or several say nothing against model_type.
void requireModelTypeAgreesWithTensors(const Preset& chosen, const io::TensorIndex& index, const HfArchitecture& hf);

}  // namespace omn::model
