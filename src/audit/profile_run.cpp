#include "omn/audit/profile_run.h"

#include <future>

#include "omn/audit/gain_set.h"
#include "omn/io/checkpoint.h"
#include "omn/io/sha256.h"
#include "omn/model/preset.h"
#include "omn/report/progress.h"
#include "omn/report/provenance.h"

namespace omn::audit {

using nlohmann::json;

json profileCheckpoint(const ProfileRequest& req) {
  report::ProvenanceInfo prov;
  prov.started_utc = report::utcNow();
  const std::string expected = req.expected_sha256.empty() ? "" : io::normaliseSha256(req.expected_sha256, "--sha256");

  // The hash streams the whole file while the parser touches only the directory, the pickle and
  // the gain records: run it beside the parse, and release nothing until it is checked.
  std::unique_ptr<report::ProgressBar> bar;  // made and used on the hashing thread only
  const bool hash = req.hash || !expected.empty();
  auto hashing = std::async(hash ? std::launch::async : std::launch::deferred, [&]() -> std::string {
    if (!hash) return "";
    return io::sha256File(req.checkpoint, [&](std::uint64_t done, std::uint64_t total) {
      if (!bar) bar = std::make_unique<report::ProgressBar>("sha256", total, req.progress && total >= (256u << 20));
      bar->update(done);
    });
  });
  std::unique_ptr<io::Checkpoint> ck;
  json doc;
  try {
    io::OpenOptions oo;
    oo.state_key = req.state_key;
    ck = io::openCheckpoint(req.checkpoint, oo);
    const bool detected = req.preset.empty();
    const model::Preset preset = model::resolvePreset(req.preset, ck->index, ck->metadata, req.checkpoint);
    const GainSet gains = loadGains(*ck, preset);
    const model::TensorMatch match = model::matchTensors(preset, ck->index, gains.n_layers);
    doc = computeProfile(gains, req.options);
    doc["preset"] = {{"name", preset.name}, {"source", preset.source}, {"detected", detected}};
    doc["tensors"] = {{"matched", match.matched}, {"unmatched", match.unmatched}, {"missing", match.missing}};
  } catch (...) {
    // never leave the hashing thread running past an error, and let a wrong digest outrank
    // the parse error it may have caused
    const std::string digest = hashing.get();
    if (!expected.empty()) io::requireSha256(req.checkpoint, expected, digest);
    throw;
  }
  const std::string digest = hashing.get();
  if (bar) bar->finish();
  if (!expected.empty()) io::requireSha256(req.checkpoint, expected, digest);
  // the digest was read by path beside the parse of the mapping: both describe one file only if
  // it did not change meanwhile
  io::requireUnchanged(*ck, "after profiling");

  json extra_files = json::array();
  for (std::size_t i = 1; i < ck->files.size(); ++i)
    extra_files.push_back({{"path", ck->files[i]->path()}, {"sha256", hash ? json(io::sha256File(ck->files[i]->path())) : json(nullptr)}});
  if (hash) prov.inputs.push_back({"checkpoint", req.checkpoint, digest, !expected.empty()});
  if (hash)
    for (const auto& f : extra_files) prov.inputs.push_back({"checkpoint-shard", f["path"], f["sha256"], false});
  prov.finished_utc = report::utcNow();

  json out = {{"schema", "omn-audit/profile@1"}, {"provenance", report::provenance(prov)}};
  out["checkpoint"] = {{"path", req.checkpoint},
                       {"sha256", hash ? json(digest) : json(nullptr)},
                       {"sha256_verified", !expected.empty()},
                       {"format", ck->format},
                       {"size_bytes", ck->files[0]->size()},
                       {"shards", extra_files},
                       {"tensor_count", ck->index.size()},
                       {"state_key", ck->state_key},
                       {"shared_storage", ck->shared_storage},
                       {"metadata", ck->metadata}};
  for (auto it = doc.begin(); it != doc.end(); ++it) out[it.key()] = it.value();
  return out;
}

}  // namespace omn::audit
