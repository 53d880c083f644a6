// A training run's directory (what `omn-audit train` writes: config.json is its train config, the
// weights are final.pt and checkpoints/*.pt) given where a model is expected. io/ reads a folder as
// a Hugging Face model folder and knows nothing of omn-audit's runs; the commands that take a model
// (profile, eval, intervene) ask here first, so the message points at the run's checkpoints and at
// `track`, which reads a run whole. No libtorch.
#pragma once
#include <string>

namespace omn::audit {

// FormatError naming the directory, a checkpoint to give instead and `omn-audit track DIR`, when
// `path` is a directory whose config.json declares an omn-audit schema; nothing otherwise (a file,
// a model folder, or a folder the model-folder reader will describe).
void refuseRunDirectory(const std::string& path);

}  // namespace omn::audit
