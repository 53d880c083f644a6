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

// The digest list as the session reads it: its lines may pin the run's files too (sessionRunFiles:
// `sha256sum model/* tokens.*`).
audit::DigestList sessionDigestList(const SessionSpec& spec) { return {spec.digests_path, spec.digests, sessionRunFiles(spec)}; }

// A pin the list gives for `path`, agreeing with the flag's (`flag_digest`, given by `flag`) where
// both pin it; "" when neither does.
std::string adoptPin(const audit::DigestList& list, const std::string& path, const std::string& flag_digest, const std::string& flag) {
  const std::string listed = path.empty() ? "" : audit::pinnedDigest(list, path);
  if (listed.empty()) return flag_digest;
  if (!flag_digest.empty() && io::normaliseSha256(flag_digest, flag) != listed)
    throw UsageError(flag + " " + flag_digest + " and --digests " + list.path + " (" + listed + ") disagree about " + path);
  return listed;
}

// A file the list pins that the session reads whole before using it (the token record, a preset
// file): checked now; a pin for one that is not there names the list.
void requireListedFile(const audit::DigestList& list, const std::string& path, const std::string& what) {
  const std::string pin = path.empty() ? "" : audit::pinnedDigest(list, path);
  if (pin.empty()) return;
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw UsageError("--digests " + list.path + " pins " + path + " (" + what + "), which does not exist");
  io::requireSha256(path, pin, io::sha256File(path));
}

}  // namespace

void adoptDigestList(Session& s, const SessionSpec& spec) {
  const OptionNames& n = spec.names;
  const audit::DigestList list = sessionDigestList(spec);
  s.spec.sha256 = audit::expectedWeightsDigest(list, s.location, spec.sha256, n.sha256);
  s.spec.tokens_sha256 = adoptPin(list, spec.tokens.path, spec.tokens_sha256, n.tokens_sha256);
  s.spec.offsets_sha256 = adoptPin(list, spec.tokens.offsets, spec.offsets_sha256, n.offsets_sha256);
  requireListedFile(list, data::tokenRecordPath(spec.tokens.path), "the token record beside " + spec.tokens.path);
  if (!model::isBuiltinPreset(spec.preset)) requireListedFile(list, spec.preset, "the --preset file");
  if (s.location.isFolder()) s.spec.config_sha256 = adoptPin(list, s.location.config_path, spec.config_sha256, n.config_sha256);
}

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

void requireTokenPins(const Session& s, const std::string& tokens_sha256, const std::string& offsets_sha256) {
  const OptionNames& n = s.spec.names;
  if (!s.spec.tokens_sha256.empty() && !tokens_sha256.empty())
    io::requireSha256(s.spec.tokens.path, io::normaliseSha256(s.spec.tokens_sha256, n.tokens_sha256), tokens_sha256);
  if (!s.spec.offsets_sha256.empty() && !offsets_sha256.empty())
    io::requireSha256(s.spec.tokens.offsets, io::normaliseSha256(s.spec.offsets_sha256, n.offsets_sha256), offsets_sha256);
}

void requirePinnedFilesBeforeError(const Session& s, const SessionSpec& spec) {
  if (!spec.digests_path.empty()) audit::requireListedBeforeParseError(sessionDigestList(spec), s.location);
  const std::filesystem::path dir = std::filesystem::path(s.spec.checkpoint).parent_path();
  for (const auto& [name, digest] : spec.shard_sha256) {
    const std::filesystem::path p = dir / name;
    std::error_code ec;
    if (p.filename() == name && std::filesystem::is_regular_file(p, ec)) io::requireSha256(p.string(), digest, io::sha256File(p.string()));
  }
  auto digestOf = [](const std::string& pin, const std::string& path) {  // "": not pinned, or not there
    std::error_code ec;
    return !pin.empty() && !path.empty() && std::filesystem::is_regular_file(path, ec) ? io::sha256File(path) : std::string();
  };
  requireTokenPins(s, digestOf(s.spec.tokens_sha256, s.spec.tokens.path), digestOf(s.spec.offsets_sha256, s.spec.tokens.offsets));
}

}  // namespace omn::eval
