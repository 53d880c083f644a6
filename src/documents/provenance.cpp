#include "omn/documents/provenance.h"

#include "json_fields.h"

namespace omn::documents {

using fields::get;
using fields::write;
using nlohmann::json;

void from_json(const json& j, ProvenanceInput& v) {
  get(j, "role", v.role);
  get(j, "path", v.path);
  get(j, "sha256", v.sha256);
  get(j, "verified", v.verified);
}
void to_json(json& j, const ProvenanceInput& v) {
  j = {{"role", v.role}, {"path", v.path}, {"sha256", write(v.sha256)}, {"verified", v.verified}};
}

void from_json(const json& j, BuildInfo& v) {
  get(j, "compiler", v.compiler);
  get(j, "cxx_flags", v.cxx_flags);
  get(j, "build_type", v.build_type);
}
void to_json(json& j, const BuildInfo& v) { j = {{"compiler", v.compiler}, {"cxx_flags", v.cxx_flags}, {"build_type", v.build_type}}; }

void from_json(const json& j, HostInfo& v) {
  get(j, "os", v.os);
  get(j, "os_release", v.os_release);
  get(j, "cpu", v.cpu);
  get(j, "cpu_vector_extensions", v.cpu_vector_extensions);
  get(j, "host_threads", v.host_threads);
}
void to_json(json& j, const HostInfo& v) {
  j = {{"os", v.os}, {"os_release", write(v.os_release)}, {"cpu", write(v.cpu)}, {"cpu_vector_extensions", v.cpu_vector_extensions},
       {"host_threads", v.host_threads}};
}

void from_json(const json& j, LibraryVersions& v) {
  get(j, "libtorch", v.libtorch);
  get(j, "openblas", v.openblas);
  get(j, "onednn", v.onednn);
}
void to_json(json& j, const LibraryVersions& v) {
  j = {{"libtorch", v.libtorch}, {"openblas", write(v.openblas)}, {"onednn", write(v.onednn)}};
}

void from_json(const json& j, Provenance& v) {
  get(j, "tool", v.tool);
  get(j, "version", v.version);
  get(j, "git_revision", v.git_revision);
  get(j, "model_code_fingerprint", v.model_code_fingerprint);
  get(j, "libtorch", v.libtorch);
  get(j, "device", v.device);
  get(j, "host_threads", v.host_threads);
  get(j, "build", v.build);
  get(j, "host", v.host);
  get(j, "libraries", v.libraries);
  get(j, "inputs", v.inputs);
  get(j, "started_utc", v.started_utc);
  get(j, "finished_utc", v.finished_utc);
}
void to_json(json& j, const Provenance& v) {
  j = {{"tool", v.tool},
       {"version", v.version},
       {"git_revision", v.git_revision},
       {"model_code_fingerprint", v.model_code_fingerprint},
       {"libtorch", v.libtorch},
       {"device", v.device},
       {"host_threads", v.host_threads},
       {"inputs", write(v.inputs)},
       {"started_utc", v.started_utc},
       {"finished_utc", v.finished_utc}};
  fields::putIfSet(j, "build", v.build);
  fields::putIfSet(j, "host", v.host);
  fields::putIfSet(j, "libraries", v.libraries);
}

}  // namespace omn::documents
