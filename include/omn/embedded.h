// Files compiled into the binary (tools/cmake/Embed.cmake): presets, the OMN-1 reference profile and the
// example manifests, so the tool works from any directory; and the model-code fingerprint.
#pragma once
#include <map>
#include <string>

namespace omn {

// Text of configs/<path>, keyed by the path relative to configs/ ("presets/omn-1.json").
const std::map<std::string, std::string>& embeddedConfigs();

// SHA-256 over (path, SHA-256) of every src/model and include/omn/model file, fixed at configure time.
const char* modelCodeFingerprint();

}  // namespace omn
