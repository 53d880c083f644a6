#include "omn/output/provenance.h"

#include <dlfcn.h>
#include <sys/utsname.h>

#include <ctime>
#include <optional>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "omn/embedded.h"
#include "omn_git_revision.h"  // generated at every build (tools/cmake/GitRevision.cmake)

#ifndef OMN_VERSION
#define OMN_VERSION "0.0.0"
#endif
#ifndef OMN_LIBTORCH_VERSION
#define OMN_LIBTORCH_VERSION "unknown"
#endif
#ifndef OMN_COMPILER
#define OMN_COMPILER "unknown"
#endif
#ifndef OMN_CXX_FLAGS
#define OMN_CXX_FLAGS ""
#endif
#ifndef OMN_BUILD_TYPE
#define OMN_BUILD_TYPE ""
#endif

namespace omn::output {

std::string utcNow() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string toolVersion() { return OMN_VERSION; }
std::string gitRevision() { return OMN_GIT_REVISION; }

namespace {

// "key: value" lines of a /proc or /etc file: the first value of `key`
std::string firstValue(const char* file, const std::string& key, char sep) {
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(key, 0) == 0) {
      const auto p = line.find(sep);
      if (p == std::string::npos) continue;
      std::string v = line.substr(p + 1);
      v.erase(0, v.find_first_not_of(" \t\""));
      while (!v.empty() && (v.back() == '"' || v.back() == ' ')) v.pop_back();
      return v;
    }
  return "";
}

std::optional<std::string> orNull(const std::string& s) { return s.empty() ? std::nullopt : std::optional<std::string>(s); }

// The CPU's vector extensions that decide which kernels (and so which roundings) run
std::vector<std::string> simdFlags() {
  std::string listed = firstValue("/proc/cpuinfo", "flags", ':');   // x86
  if (listed.empty()) listed = firstValue("/proc/cpuinfo", "Features", ':');  // aarch64
  std::istringstream all(listed);
  const std::vector<std::string> wanted = {"sse4_2", "avx", "avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512vl", "avx512_vnni",
                                           "avx512_bf16", "avx512_fp16", "amx_tile", "amx_bf16", "amx_int8", "asimd", "sve"};
  std::vector<std::string> out;
  std::string f;
  while (all >> f)
    for (const auto& w : wanted)
      if (f == w) out.push_back(f);
  return out;
}

// Libraries found in the process (loaded with libtorch by the model commands): OpenBLAS's build
// configuration and oneDNN's version, looked up by symbol, so the core needs neither to link
documents::LibraryVersions libraries() {
  documents::LibraryVersions l;
  l.libtorch = OMN_LIBTORCH_VERSION;
  if (auto* f = reinterpret_cast<char* (*)()>(dlsym(RTLD_DEFAULT, "openblas_get_config"))) l.openblas = f();
  struct DnnlVersion {
    int major, minor, patch;
    const char* hash;
  };
  if (auto* f = reinterpret_cast<const DnnlVersion* (*)()>(dlsym(RTLD_DEFAULT, "dnnl_version"))) {
    const DnnlVersion* v = f();
    l.onednn = std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch) + (v->hash ? std::string(" ") + v->hash : "");
  }
  return l;
}

documents::HostInfo host() {
  utsname u{};
  uname(&u);
  return {std::string(u.sysname) + " " + u.release + " " + u.machine, orNull(firstValue("/etc/os-release", "PRETTY_NAME", '=')),
          orNull(firstValue("/proc/cpuinfo", "model name", ':')), simdFlags(), std::thread::hardware_concurrency()};
}

}  // namespace

std::string cpuModel() {
  const std::string m = firstValue("/proc/cpuinfo", "model name", ':');
  return m.empty() ? "unknown CPU" : m;
}

documents::Provenance provenanceRecord(const ProvenanceInfo& info) {
  documents::Provenance p;
  p.tool = "omn-audit";
  p.version = OMN_VERSION;
  p.git_revision = OMN_GIT_REVISION;
  p.model_code_fingerprint = modelCodeFingerprint();
  p.libtorch = OMN_LIBTORCH_VERSION;
  p.device = info.device;
  p.host_threads = std::thread::hardware_concurrency();
  p.build = documents::BuildInfo{OMN_COMPILER, OMN_CXX_FLAGS, OMN_BUILD_TYPE};
  p.host = host();
  p.libraries = libraries();
  for (const auto& in : info.inputs) p.inputs.push_back({in.role, in.path, in.sha256, in.verified});
  p.started_utc = info.started_utc;
  p.finished_utc = info.finished_utc;
  return p;
}

nlohmann::json provenance(const ProvenanceInfo& info) { return provenanceRecord(info); }

}  // namespace omn::output
