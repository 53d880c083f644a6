#include "omn/model/model_type_evidence.h"

#include <algorithm>

#include "omn/errors.h"

namespace omn::model {

void requireModelTypeAgreesWithTensors(const Preset& chosen, const io::TensorIndex& index, const HfArchitecture& hf) {
  Preset found;
  try {
    found = detectPreset(index);
  } catch (const FormatError&) {
    return;  // no single family in the tensor names: model_type stands
  }
  const auto& types = found.hf_model_types;
  if (found.detect_fallback || found.name == chosen.name || std::find(types.begin(), types.end(), hf.model_type) != types.end()) return;
  throw FormatError(hf.path + " /model_type: \"" + hf.model_type + "\" names preset " + chosen.name +
                    ", but the tensors' names are preset " + found.name + "'s (" + found.tensorName("q_norm", 0) +
                    ", ...): the gains would be read as another family's; correct config.json or name the preset with --preset");
}

}  // namespace omn::model
