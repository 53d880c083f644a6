// The hints every model command (eval, intervene, train, study) logs at its start about the machine
// it runs on: the default thread count on a busy machine (model::busyMachineHint), and OpenBLAS held
// by the environment to kernels narrower than the CPU's (PluginHost::blas_coretype_below_cpu).
#pragma once
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <thread>

#include "omn/model/threads.h"
#include "../plugin_loader.h"

namespace omn::cli {

// When `requested` (--threads, /model/threads) leaves the count to the default.
inline void warnIfBusy(int requested) {
  if (!model::threadsByDefault(requested)) return;
  const int cpus = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const std::string hint = model::busyMachineHint(model::otherTasksRunning(), cpus, cpus, true);
  if (!hint.empty()) spdlog::warn("{}", hint);
}

// When the environment's OPENBLAS_CORETYPE keeps the fp32 products on narrower kernels than the CPU
// runs (docs/eval.md "Speed on the CPU": SkylakeX's kernels ~2x Haswell's on an AVX-512 AMD EPYC).
inline void warnIfBlasBelowCpu(const PluginHost& host) {
  const char* set = std::getenv("OPENBLAS_CORETYPE");
  if (!host.blas_coretype_below_cpu || !set) return;
  spdlog::warn("OPENBLAS_CORETYPE={} (from the environment) holds fp32 matrix products to kernels narrower than this "
               "CPU's ({}), which can run them at half the speed (docs/eval.md \"Speed on the CPU\"); unset "
               "OPENBLAS_CORETYPE to let omn-audit choose, or set OMN_AUDIT_KEEP_BLAS=1 to keep it without this warning",
               set, host.blas_coretype_below_cpu);
}

// Both, as every model command logs them at its start.
inline void warnAboutMachine(int requested_threads, const PluginHost& host) {
  warnIfBusy(requested_threads);
  warnIfBlasBelowCpu(host);
}

}  // namespace omn::cli
