// The provenance block every omn-audit document carries (docs/schema/provenance.schema.json), typed:
// which build wrote it, on what, from which inputs, when. Written by output/provenance.h; read here
// by every document kind. No libtorch.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace omn::documents {

struct ProvenanceInput {
  std::string role;                   // "checkpoint", "tokens", "manifest", ...
  std::string path;
  std::optional<std::string> sha256;  // null: read without hashing
  bool verified = false;              // checked against an expected digest
};

struct BuildInfo {
  std::string compiler, cxx_flags, build_type;
};

struct HostInfo {
  std::string os;
  std::optional<std::string> os_release, cpu;
  std::vector<std::string> cpu_vector_extensions;
  std::int64_t host_threads = 0;
};

struct LibraryVersions {
  std::string libtorch;
  std::optional<std::string> openblas, onednn;  // null: not loaded in the process
};

struct Provenance {
  std::string tool, version, git_revision, model_code_fingerprint, libtorch, device;
  std::int64_t host_threads = 0;
  std::optional<BuildInfo> build;            // absent in documents written before they were recorded
  std::optional<HostInfo> host;
  std::optional<LibraryVersions> libraries;
  std::vector<ProvenanceInput> inputs;
  std::string started_utc, finished_utc;
};

// nlohmann's conversions (found by ADL): every document kind's reader and writer uses them.
void from_json(const nlohmann::json& j, ProvenanceInput& v);
void to_json(nlohmann::json& j, const ProvenanceInput& v);
void from_json(const nlohmann::json& j, BuildInfo& v);
void to_json(nlohmann::json& j, const BuildInfo& v);
void from_json(const nlohmann::json& j, HostInfo& v);
void to_json(nlohmann::json& j, const HostInfo& v);
void from_json(const nlohmann::json& j, LibraryVersions& v);
void to_json(nlohmann::json& j, const LibraryVersions& v);
void from_json(const nlohmann::json& j, Provenance& v);
void to_json(nlohmann::json& j, const Provenance& v);

}  // namespace omn::documents
