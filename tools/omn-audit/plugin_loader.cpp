#include "plugin_loader.h"

#include <dlfcn.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>

#include "omn/errors.h"
#include "omn/io/terminal_text.h"

namespace omn::cli {

namespace {

// OpenBLAS (libtorch's fp32 matrix products on Debian) reads OPENBLAS_CORETYPE once, when it is
// loaded -- with the plugin, below. On CPUs it does not recognise (virtualised "Intel Xeon
// Processor" models) it falls back to its Prescott kernels: fp32 products at ~30 GFLOP/s on the
// project's machine instead of ~140 with the SkylakeX kernels the CPU supports (docs/PERFORMANCE.md).
// An OPENBLAS_CORETYPE already set is respected; OMN_AUDIT_KEEP_BLAS=1 leaves OpenBLAS alone.
// Returns the kernels it chose, or nullptr.
const char* chooseBlasKernels() {
  if (std::getenv("OPENBLAS_CORETYPE") || std::getenv("OMN_AUDIT_KEEP_BLAS")) return nullptr;
  __builtin_cpu_init();
  const char* core = nullptr;
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
      __builtin_cpu_supports("avx512vl"))
    core = "SkylakeX";
  else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    core = "Haswell";
  if (core) ::setenv("OPENBLAS_CORETYPE", core, 0);  // OpenBLAS reads only its environment
  return core;
}

}  // namespace

int runPlugin(const Plugin& plugin, int argc, char** argv) {
  const PluginHost host{chooseBlasKernels()};
  std::string path, searched;
  const char* env = std::getenv(plugin.env);
  const bool from_env = env && *env;  // set but empty: as if unset
  if (from_env) {
    path = env;
    searched = path + " (from " + plugin.env + ")";
  } else {
    // beside the executable (a build tree), then ../lib/omn-audit/ (cmake --install)
    char exe[PATH_MAX];
    const ssize_t n = ::readlink("/proc/self/exe", exe, sizeof exe - 1);
    std::string dir = n > 0 ? std::string(exe, static_cast<std::size_t>(n)) : std::string(argv[0]);
    dir = dir.substr(0, dir.rfind('/') + 1);
    path = dir + plugin.file;
    searched = path;
    if (::access(path.c_str(), R_OK) != 0) {
      path = dir + "../lib/omn-audit/" + plugin.file;
      searched += " and " + path;
    }
  }
  void* h = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    // an installation problem, not a bug: exit 2 with the paths searched and the way to point elsewhere
    std::cerr << "omn-audit: error: '" << io::terminalSafe(argv[0]) << " " << "...' needs the plugin " << plugin.file
              << ", which could not be loaded from " << io::terminalSafe(searched) << " (build it, or set " << plugin.env
              << " to its path): " << io::terminalSafe(::dlerror()) << "\n";
    return kExitInvalidInput;
  }
  using Main = int (*)(int, char**, const PluginHost*);
  auto fn = reinterpret_cast<Main>(::dlsym(h, plugin.symbol));
  if (!fn) {
    // a loadable library that is not this plugin (a wrong path in the variable): exit 2, as above
    std::cerr << "omn-audit: error: " << io::terminalSafe(path) << (from_env ? std::string(" (from ") + plugin.env + ")" : "")
              << " is not the plugin " << plugin.file << ": it has no entry point " << plugin.symbol << " (build it, or set "
              << plugin.env << " to its path)\n";
    return kExitInvalidInput;
  }
  return fn(argc, argv, &host);  // the library stays loaded until exit
}

}  // namespace omn::cli
