#include "omn/audit/profile_run.h"

#include <spdlog/spdlog.h>

#include <optional>
#include <set>
#include <tuple>

#include <filesystem>

#include "omn/audit/digest_list.h"
#include "omn/audit/gain_set.h"
#include "omn/audit/run_directory.h"
#include "omn/errors.h"
#include "omn/io/checkpoint.h"
#include "omn/io/hash_beside.h"
#include "omn/io/model_folder.h"
#include "omn/io/sha256.h"
#include "omn/model/config.h"
#include "omn/model/hf_config.h"
#include "omn/model/model_type_evidence.h"
#include "omn/model/preset.h"
#include "omn/output/progress.h"
#include "omn/output/provenance.h"

namespace omn::audit {

namespace {
// The model's size (every tensor of the state dict; names that view one storage region, tied
// weights, counted once) and whether its output head is a byte-for-byte copy of the embedding:
// what the sweep reports of a model, without loading it.
documents::ParameterSummary parameterSummary(const io::Checkpoint& ck, const model::Preset& preset) {
  std::int64_t count = 0;
  std::set<std::tuple<std::string, std::int64_t, std::int64_t>> seen;
  for (const auto& t : ck.index.tensors())
    if (seen.emplace(t.storage_key, t.storage_offset, t.numel()).second) count += t.numel();
  std::optional<bool> head;  // empty: the preset names no separate head (tied by construction) or a tensor is absent
  const std::string e = preset.tensorName("embedding", -1), o = preset.tensorName("output", -1);
  const io::TensorRef* ei = e.empty() ? nullptr : ck.index.find(e);
  const io::TensorRef* oi = o.empty() ? nullptr : ck.index.find(o);
  if (ei && oi) head = io::sameTensorBytes(ck, *ei, *oi);
  return {count, head};
}
}  // namespace

namespace fs = std::filesystem;

namespace {

// The --digests list as the rules in digest_list.h read it.
DigestList digestList(const ProfileRequest& req) { return {req.digests_path, req.digests, {}}; }

// config.json, where --digests pins it, checked before a byte of the weights is hashed: the pin, or "".
std::string checkedConfigPin(const ProfileRequest& req, const io::ModelLocation& loc) {
  const std::string config_pin = loc.isFolder() ? pinnedDigest(digestList(req), loc.config_path) : "";
  if (!config_pin.empty()) io::requireSha256(loc.config_path, config_pin, loc.config_sha256);
  return config_pin;
}

// -v: how the tool read the file, which -q and the default leave out
void logHowProfileRead(const ProfileRequest& req, const io::ModelLocation& loc, bool hf, const io::Checkpoint& ck,
                       const model::Preset& preset, const GainSet& gains, const model::TensorMatch& match) {
  spdlog::debug("{}: {} ({} tensors{}), preset {} ({})", req.checkpoint, ck.format, ck.index.size(),
                ck.state_key.empty() ? "" : ", state dict at '" + ck.state_key + "'", preset.name,
                !req.preset.empty() ? "named by --preset" : hf ? "chosen by " + loc.config_path + " /model_type" : "detected from tensor names");
  for (const auto& [key, from] : preset.architecture_from) spdlog::debug("architecture {} from {}", key, from);
  spdlog::debug("{} layers of Q/K gains ({} vectors, head_dim {}); tensors: {} matched by the preset, {} unmatched, {} missing",
                gains.n_layers, gains.vectors.size(), gains.head_dim, match.matched, match.unmatched.size(), match.missing.size());
  for (std::size_t i = 0; i < match.unmatched.size() && i < 20; ++i) spdlog::debug("unmatched tensor {}", match.unmatched[i]);
}

// The profile of the checkpoint's gains, with the preset that found them, how the tensors matched
// its patterns and (when asked) the model's size.
documents::ProfileDocument profileOfGains(const ProfileRequest& req, const io::ModelLocation& loc,
                                          const std::optional<model::HfArchitecture>& hf, const io::Checkpoint& ck) {
  const bool detected = req.preset.empty() && !hf;  // a model folder's model_type names it: not detected
  const model::Preset preset = model::resolvePreset(req.preset, ck.index, ck.metadata, req.checkpoint, hf ? &*hf : nullptr);
  if (hf && req.preset.empty()) model::requireModelTypeAgreesWithTensors(preset, ck.index, *hf);  // the tensors decide
  if (hf) model::checkStatedDimensions(preset, ck.index, ck.path);  // every size config.json states, against the tensors
  const GainSet gains = loadGains(ck, preset);
  const model::TensorMatch match = model::matchTensors(preset, ck.index, gains.n_layers);
  logHowProfileRead(req, loc, hf.has_value(), ck, preset, gains, match);
  documents::ProfileDocument doc = computeProfile(gains, req.options);
  doc.preset = {preset.name, preset.source, detected};
  doc.tensors = {static_cast<std::int64_t>(match.matched), match.unmatched, match.missing};
  if (req.parameters) doc.parameters = parameterSummary(ck, preset);
  return doc;
}

struct ProfiledShards {
  std::vector<documents::ShardFile> files;  // path, sha256 (empty when not hashed), sha256_verified
  std::size_t verified = 0;    // how many --digests pinned (and so checked)
};

// The shards of an index: hashed with the index, checked where --digests pins them (a mismatch is
// IntegrityError naming the shard); "verified" is never said of bytes that were not checked.
ProfiledShards profiledShards(const ProfileRequest& req, const io::Checkpoint& ck, bool hash) {
  ProfiledShards shards;
  for (std::size_t i = 1; i < ck.files.size(); ++i) {
    const std::string& path = ck.files[i]->path();
    const std::string want = pinnedDigest(digestList(req), path);
    const std::string got = hash || !want.empty() ? io::sha256File(path) : "";
    if (!want.empty()) io::requireSha256(path, want, got);
    shards.verified += !want.empty();
    shards.files.push_back({path, got.empty() ? std::nullopt : std::optional<std::string>(got), !want.empty()});
  }
  return shards;
}

// What a model folder adds to the checkpoint block: where its config is, and whether it was pinned.
documents::ModelFolder modelFolderRecord(const io::ModelLocation& loc, const std::string& config_pin, const model::HfArchitecture& hf) {
  return {loc.given, loc.config_path, loc.config_sha256, !config_pin.empty(), hf.model_type};
}

// The checkpoint parsed and its gains profiled while the hash streams the whole file beside it;
// nothing is released until the digest is checked, and a wrong digest outranks a parse error.
struct ParsedCheckpoint {
  std::unique_ptr<io::Checkpoint> ck;
  documents::ProfileDocument doc;
  std::string digest;  // "" when not hashed
};

ParsedCheckpoint parseBesideHash(const ProfileRequest& req, const io::ModelLocation& loc, const std::optional<model::HfArchitecture>& hf,
                                 const std::string& expected, bool hash) {
  std::unique_ptr<output::ProgressBar> bar;  // made and used on the hashing thread only
  io::HashBeside hashing(req.checkpoint, expected, hash, [&](std::uint64_t done, std::uint64_t total) {
    if (!bar) bar = std::make_unique<output::ProgressBar>("sha256", total, req.progress && total >= (256u << 20));
    bar->update(done);
  });
  ParsedCheckpoint out;
  try {
    io::OpenOptions oo;
    oo.state_key = req.state_key;
    out.ck = io::openCheckpoint(req.checkpoint, oo);
    out.doc = profileOfGains(req, loc, hf, *out.ck);
  } catch (...) {
    hashing.verify();  // a wrong digest outranks the parse error it may have caused, and so does a tampered shard
    requireListedBeforeParseError(digestList(req), loc);
    throw;
  }
  std::vector<std::string> files;
  for (const auto& f : out.ck->files) files.push_back(f->path());
  requireListNamesFiles(digestList(req), loc, files);
  out.digest = hashing.verify();
  if (bar) bar->finish();
  // the digest was read by path beside the parse of the mapping: both describe one file only if
  // it did not change meanwhile
  io::requireUnchanged(*out.ck, "after profiling");
  return out;
}

// The checkpoint block: the file, its digest and which bytes a pinned digest checked ("all",
// "partial": an index without its shards, "none"), its format, layout and metadata.
documents::ProfileCheckpoint checkpointRecord(const ProfileRequest& req, const io::Checkpoint& ck, const std::string& digest,
                                              bool pinned, ProfiledShards shards) {
  const std::size_t verified = shards.verified + (pinned ? 1u : 0u);
  documents::ProfileCheckpoint c;
  c.path = req.checkpoint;
  if (!digest.empty()) c.sha256 = digest;
  c.sha256_verified = pinned;
  c.verified = verified == ck.files.size() ? "all" : verified ? "partial" : "none";
  if (!req.digests_path.empty()) c.digests = req.digests_path;
  c.format = ck.format;
  c.size_bytes = static_cast<std::int64_t>(ck.files[0]->size());
  c.shards = std::move(shards.files);
  c.tensor_count = static_cast<std::int64_t>(ck.index.size());
  c.state_key = ck.state_key;
  c.shared_storage = ck.shared_storage;
  c.metadata = ck.metadata;
  return c;
}

// The inputs the provenance names: every file whose digest was computed.
std::vector<output::InputHash> hashedInputs(const documents::ProfileCheckpoint& c) {
  std::vector<output::InputHash> inputs;
  if (c.sha256) inputs.push_back({"checkpoint", c.path, *c.sha256, c.sha256_verified});
  if (c.folder) inputs.push_back({"model-config", c.folder->config, c.folder->config_sha256, c.folder->config_verified});
  for (const auto& f : c.shards)
    if (f.sha256) inputs.push_back({"checkpoint-shard", f.path, *f.sha256, f.sha256_verified});
  return inputs;
}

}  // namespace

documents::ProfileDocument profileCheckpoint(const ProfileRequest& request) {
  output::ProvenanceInfo prov;
  prov.started_utc = output::utcNow();
  validate(request.options);  // before the first byte is hashed
  // a Hugging Face model folder: its weights file is the checkpoint, its config.json the architecture
  refuseRunDirectory(request.checkpoint);
  const io::ModelLocation loc = io::locateModel(request.checkpoint);
  std::optional<model::HfArchitecture> hf;
  if (loc.isFolder()) hf = model::readHfConfig(loc.config, loc.config_path);
  ProfileRequest req = request;
  req.checkpoint = loc.weights;
  const std::string expected = expectedWeightsDigest(digestList(req), loc, req.expected_sha256, "--sha256");
  const std::string config_pin = checkedConfigPin(req, loc);

  const bool hash = req.hash || !expected.empty();
  ParsedCheckpoint parsed = parseBesideHash(req, loc, hf, expected, hash);
  documents::ProfileDocument& doc = parsed.doc;
  doc.checkpoint = checkpointRecord(req, *parsed.ck, hash ? parsed.digest : "", !expected.empty(), profiledShards(req, *parsed.ck, hash));
  if (loc.isFolder()) doc.checkpoint.folder = modelFolderRecord(loc, config_pin, *hf);
  prov.inputs = hashedInputs(doc.checkpoint);
  prov.finished_utc = output::utcNow();
  doc.provenance = output::provenanceRecord(prov);
  return std::move(doc);
}

}  // namespace omn::audit
