// The pins of an evaluation session that come from more than one place: eval's --digests list (the
// weights, config.json, each shard, and the run's tokens, their record, the offsets, a preset file)
// beside the flags that pin one file each, and the order in which a pinned file's bytes are checked
// when reading it failed. Used by openSession only.
#pragma once
#include "omn/eval/session.h"

namespace omn::eval {

// --digests LIST: the weights' digest (agreeing with --sha256 where both pin it), config.json's
// (agreeing with --config-sha256), the tokens' and the offsets' (agreeing with --tokens-sha256 and
// --offsets-sha256) into s.spec; every line checked to name a file of the model or of the run before
// a byte is hashed; a line pinning the token record or a preset file is checked here (UsageError
// naming the list for one that is not there, IntegrityError naming the file).
void adoptDigestList(Session& s, const SessionSpec& spec);

// Once the index is read: the shards the list pins, by file name (what io::hashShards matches), each
// line checked to name a file of the model or of the run. Nothing without --digests.
void addShardPins(Session& s);

// The tokens' and the offsets' pins in s.spec (a flag's or the list's) against the digests of the
// files as read ("": not read, nothing to compare): IntegrityError naming the file.
void requireTokenPins(const Session& s, const std::string& tokens_sha256, const std::string& offsets_sha256);

// When reading the model or the tokens failed: a pinned file whose bytes differ (a --digests line, a
// manifest's /checkpoint/shards, the tokens' or offsets' pin) outranks the error it may have caused --
// a tampered shard that no longer parses is exit 4 naming it, not a format error.
void requirePinnedFilesBeforeError(const Session& s, const SessionSpec& spec);

}  // namespace omn::eval
