// Which device a model runs on, as written by a user: "cpu", "cuda" or "cuda:N" (N < 1000). One
// check for the CLI (--device), manifests (/model/device) and training configs (/device), before
// anything is read; whether a GPU is there is checked where the device is opened. No libtorch.
#pragma once
#include <regex>
#include <string>

#include "omn/errors.h"

namespace omn::model {

// Returns `text` when it names a device; throws UsageError "<where>: expected cpu, cuda or cuda:N, got ..."
inline const std::string& checkDeviceSpec(const std::string& text, const std::string& where) {
  static const std::regex re("cpu|cuda(:[0-9]{1,3})?");
  if (!std::regex_match(text, re)) throw UsageError(where + ": expected cpu, cuda or cuda:N, got \"" + text + "\"");
  return text;
}

}  // namespace omn::model
