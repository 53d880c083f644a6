#include "plugin_loader.h"

#include <dlfcn.h>
#include <strings.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <utility>

#include "omn/errors.h"
#include "omn/io/terminal_text.h"

namespace omn::cli {

namespace {

// OpenBLAS (libtorch's fp32 matrix products on Debian) reads OPENBLAS_CORETYPE once, when it is
// loaded -- with the plugin, below. On CPUs it does not recognise (virtualised "Intel Xeon
// Processor" models) it falls back to its Prescott kernels: fp32 products at ~30 GFLOP/s on the
// project's machine instead of ~140 with the SkylakeX kernels the CPU supports (docs/PERFORMANCE.md).
// The kernels this CPU runs best: SkylakeX with AVX-512, Haswell with AVX2 and FMA, else none known.
const char* bestBlasKernels() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
      __builtin_cpu_supports("avx512vl"))
    return "SkylakeX";
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "Haswell";
  return nullptr;
}

// How wide the vector kernels of an OpenBLAS x86 core type are: 3 AVX-512, 2 AVX2, 1 AVX, 0 SSE;
// -1 for a name not listed (OpenBLAS compares names case-insensitively).
int blasKernelLevel(const char* name) {
  static const std::pair<const char*, int> kLevels[] = {
      {"SkylakeX", 3},  {"Cooperlake", 3},  {"SapphireRapids", 3}, {"Haswell", 2},    {"Zen", 2},
      {"Sandybridge", 1}, {"Bulldozer", 1}, {"Piledriver", 1},     {"Steamroller", 1}, {"Excavator", 1},
      {"Prescott", 0},  {"Core2", 0},       {"Penryn", 0},         {"Dunnington", 0},  {"Nehalem", 0},
      {"Atom", 0},      {"Opteron", 0},     {"Opteron_SSE3", 0},   {"Barcelona", 0},   {"Bobcat", 0},
      {"Katmai", 0},    {"Coppermine", 0},  {"Northwood", 0},      {"Banias", 0},      {"Athlon", 0},
      {"Nano", 0}};
  for (const auto& [n, level] : kLevels)
    if (::strcasecmp(n, name) == 0) return level;
  return -1;
}

// Sets OPENBLAS_CORETYPE to this CPU's best kernels unless it is set already or OMN_AUDIT_KEEP_BLAS=1.
// When the environment set it to kernels narrower than the CPU's, that choice stands (it may be
// deliberate: the AVX2 parity tests run the other CPU kind's kernels so) and the plugin warns.
PluginHost chooseBlasKernels() {
  PluginHost host{nullptr, nullptr};
  const char* best = bestBlasKernels();
  if (std::getenv("OMN_AUDIT_KEEP_BLAS")) return host;
  if (const char* set = std::getenv("OPENBLAS_CORETYPE")) {
    const int level = blasKernelLevel(set);
    if (best && level >= 0 && level < blasKernelLevel(best)) host.blas_coretype_below_cpu = best;
    return host;
  }
  if (best) ::setenv("OPENBLAS_CORETYPE", best, 0);  // OpenBLAS reads only its environment
  host.blas_coretype_chosen = best;
  return host;
}

}  // namespace

int runPlugin(const Plugin& plugin, int argc, char** argv) {
  const PluginHost host = chooseBlasKernels();
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
