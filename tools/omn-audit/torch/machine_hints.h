// The hint every model command (eval, intervene, train, study) logs at its start when it takes the
// default thread count on a busy machine (model::busyMachineHint).
#pragma once
#include <spdlog/spdlog.h>

#include <algorithm>
#include <string>
#include <thread>

#include "omn/model/threads.h"

namespace omn::cli {

// When `requested` (--threads, /model/threads) leaves the count to the default.
inline void warnIfBusy(int requested) {
  if (!model::threadsByDefault(requested)) return;
  const int cpus = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const std::string hint = model::busyMachineHint(model::otherTasksRunning(), cpus, cpus, true);
  if (!hint.empty()) spdlog::warn("{}", hint);
}

}  // namespace omn::cli
