#include "omn/output/provenance.h"

#include <ctime>
#include <thread>

#include "omn/embedded.h"
#include "omn_git_revision.h"  // generated at every build (tools/cmake/GitRevision.cmake)

#ifndef OMN_VERSION
#define OMN_VERSION "0.0.0"
#endif
#ifndef OMN_LIBTORCH_VERSION
#define OMN_LIBTORCH_VERSION "unknown"
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

nlohmann::json provenance(const ProvenanceInfo& info) {
  nlohmann::json inputs = nlohmann::json::array();
  for (const auto& in : info.inputs)
    inputs.push_back({{"role", in.role}, {"path", in.path}, {"sha256", in.sha256}, {"verified", in.verified}});
  return {
      {"tool", "omn-audit"},
      {"version", OMN_VERSION},
      {"git_revision", OMN_GIT_REVISION},
      {"model_code_fingerprint", modelCodeFingerprint()},
      {"libtorch", OMN_LIBTORCH_VERSION},
      {"device", info.device},
      {"host_threads", std::thread::hardware_concurrency()},
      {"inputs", inputs},
      {"started_utc", info.started_utc},
      {"finished_utc", info.finished_utc},
  };
}

}  // namespace omn::output
