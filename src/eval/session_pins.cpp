#include "session_pins.h"

#include <filesystem>
#include <tuple>

#include "omn/audit/digest_list.h"
#include "omn/data/token_set_writer.h"
#include "omn/errors.h"
#include "omn/io/sha256.h"
#include "omn/model/preset.h"

namespace omn::eval {

namespace {

// The digest list as the session reads it: its lines may pin the run's other inputs too (the
// tokens, their record, the offsets, a preset file: `sha256sum model/* tokens.*`).
audit::DigestList sessionDigestList(const SessionSpec& spec) {
  std::vector<std::string> run;
  for (const auto& f : sessionInputFiles(spec))  // not the checkpoint (the model's own rules), not the list
    if (f != spec.checkpoint && f != spec.digests_path) run.push_back(f);
  return {spec.digests_path, spec.digests, run};
}

// A pin the list gives for `path`, agreeing with the flag's (`flag_digest`, given by `flag`) where
// both pin it; "" when neither does.
std::string adoptPin(const audit::DigestList& list, const std::string& path, const std::string& flag_digest, const std::string& flag) {
  const std::string listed = path.empty() ? "" : audit::pinnedDigest(list, path);
  if (listed.empty()) return flag_digest;
  if (!flag_digest.empty() && io::normaliseSha256(flag_digest, flag) != listed)
    throw UsageError(flag + " " + flag_digest + " and --digests " + list.path + " (" + listed + ") disagree about " + path);
  return listed;
}

}  // namespace

// --digests LIST: the weights' digest (agreeing with --sha256 where both pin it), config.json's
// (agreeing with --config-sha256), the tokens' and the offsets' (agreeing with --tokens-sha256 and
// --offsets-sha256) from the list, every line checked to name a file of the model or of the run
// before a byte is hashed; a line pinning the token record or a preset file is checked here; the
// shards it pins are taken once the index is read (addShardPins).
void adoptDigestList(Session& s, const SessionSpec& spec) {
  const OptionNames& n = spec.names;
  const audit::DigestList list = sessionDigestList(spec);
  s.spec.sha256 = audit::expectedWeightsDigest(list, s.location, spec.sha256, n.sha256);
  s.spec.tokens_sha256 = adoptPin(list, spec.tokens.path, spec.tokens_sha256, n.tokens_sha256);
  s.spec.offsets_sha256 = adoptPin(list, spec.tokens.offsets, spec.offsets_sha256, n.offsets_sha256);
  for (const std::string& f : {data::tokenRecordPath(spec.tokens.path), model::isBuiltinPreset(spec.preset) ? "" : spec.preset})
    if (const std::string pin = f.empty() ? "" : audit::pinnedDigest(list, f); !pin.empty()) io::requireSha256(f, pin, io::sha256File(f));
  if (!s.location.isFolder()) return;
  s.spec.config_sha256 = adoptPin(list, s.location.config_path, spec.config_sha256, n.config_sha256);
}

// The shards a --digests list pins, by file name (what io::hashShards matches); each of its lines
// checked to name a file of the model or of the run (audit::requireListNamesFiles).
void addShardPins(Session& s) {
  if (s.spec.digests_path.empty()) return;
  const audit::DigestList list = sessionDigestList(s.spec);
  std::vector<std::string> files;
  for (const auto& f : s.ck->files) files.push_back(f->path());
  audit::requireListNamesFiles(list, s.location, files);
  for (std::size_t i = 1; i < s.ck->files.size(); ++i) {
    const std::string& path = s.ck->files[i]->path();
    const std::string pin = audit::pinnedDigest(list, path);
    if (!pin.empty()) s.spec.shard_sha256[std::filesystem::path(path).filename().string()] = pin;
  }
  s.spec.shard_sha256_where = "--digests " + list.path;  // (a manifest has no list: its /checkpoint/shards pin them)
}

// When reading the model failed: a pinned shard or listed file whose bytes differ (a manifest's
// /checkpoint/shards, a --digests line) outranks the error it may have caused -- a tampered shard that
// no longer parses is exit 4 naming it, not a format error.
void requirePinnedFilesBeforeError(const Session& s, const SessionSpec& spec) {
  if (!spec.digests_path.empty()) audit::requireListedBeforeParseError(sessionDigestList(spec), s.location);
  const std::filesystem::path dir = std::filesystem::path(s.spec.checkpoint).parent_path();
  for (const auto& [name, digest] : spec.shard_sha256) {
    const std::filesystem::path p = dir / name;
    std::error_code ec;
    if (p.filename() == name && std::filesystem::is_regular_file(p, ec)) io::requireSha256(p.string(), digest, io::sha256File(p.string()));
  }
  const OptionNames& n = spec.names;  // the tokens and offsets, pinned by a flag or the list
  for (const auto& [path, pin, flag] : {std::tuple{spec.tokens.path, s.spec.tokens_sha256, n.tokens_sha256},
                                        std::tuple{spec.tokens.offsets, s.spec.offsets_sha256, n.offsets_sha256}}) {
    std::error_code ec;
    if (!pin.empty() && std::filesystem::is_regular_file(path, ec)) io::requireSha256(path, io::normaliseSha256(pin, flag), io::sha256File(path));
  }
}

}  // namespace omn::eval
