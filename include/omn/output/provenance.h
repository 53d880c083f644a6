// The one function that builds every JSON output's "provenance" block (DESIGN.md contracts).
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "omn/documents/provenance.h"

namespace omn::output {

struct InputHash {
  std::string role;    // "checkpoint", "tokens", "manifest", ...
  std::string path;
  std::string sha256;  // lower-case hex
  bool verified = false;  // matched a digest the user supplied
};

struct ProvenanceInfo {
  std::vector<InputHash> inputs;
  std::string device = "cpu";
  std::string started_utc, finished_utc;  // utcNow() at the start and the end of the command
};

std::string utcNow();  // "2026-11-30T07:01:02Z"
std::string toolVersion();
std::string gitRevision();
std::string cpuModel();  // /proc/cpuinfo's model name ("AMD EPYC"), or "unknown CPU"

// {tool, version, git_revision, model_code_fingerprint, libtorch, device, host_threads, build, host,
//  libraries, inputs, started_utc, finished_utc}: the block as its struct, and as JSON (its to_json)
documents::Provenance provenanceRecord(const ProvenanceInfo& info);
nlohmann::json provenance(const ProvenanceInfo& info);

}  // namespace omn::output
