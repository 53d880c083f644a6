// Expected SHA-256 digests from a `sha256sum`-style list (`--digests` of track and profile): one
// reader and one rule for which file an entry names. No libtorch.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "omn/io/model_folder.h"

namespace omn::audit {

// Reads `sha256sum` output ("<64 hex>  <path>" per line; "*" binary marker allowed; "#" comments).
// Paths are taken as written, relative to the current directory (links resolved before "..", as
// sha256sum -c opens them: lnk/../f is not ./f). Throws UsageError naming the line.
std::map<std::string, std::string> readDigestList(const std::string& path);

// The paths a list names, as listed: files the command reads (inputs no output may be).
std::vector<std::string> listedFiles(const std::map<std::string, std::string>& entries);

// The key under which a listed path and a file's path match: both name one file when they
// resolve to the same place (weakly canonical; lexically normal if that fails).
std::string digestKey(const std::string& path);

// Whether a listed path names a file of the model folder `folder`: its directory is the folder
// (links resolved), whatever the file itself is -- in the Hugging Face hub cache each snapshot file
// is a link into ../../blobs/, and `sha256sum SNAPSHOT/*` lists the links --, or it is the target of
// a link in the folder (`sha256sum blobs/*` lists the targets).
bool listedInFolder(const std::string& listed, const std::string& folder);

// A --digests list as read (readDigestList) and the file it came from, for messages.
struct DigestList {
  std::string path;
  std::map<std::string, std::string> entries;  // path as listed -> lower-case hex
  // Files of the run other than the model that a line may pin (eval: the tokens, their record, the
  // offsets, a preset file): the rules below let such lines be; the caller looks their pins up
  // (pinnedDigest) and checks the files' bytes.
  std::vector<std::string> run_inputs;
};

// The digest `list` pins for the file `path` ("" when no line names it). Two spellings of one file
// (./a and a, a link and its target) that pin different digests: UsageError.
std::string pinnedDigest(const DigestList& list, const std::string& path);

// The weights' expected digest (profile and eval --digests): `flag_digest` (given by `flag`, "" when
// not given) or the list's line for loc.weights; both: they must agree. Every other line must name a
// file of the model -- beside a sharded index, in its model folder, or an existing file beside a
// single weights file --, else UsageError; all checked before a byte is hashed.
std::string expectedWeightsDigest(const DigestList& list, const io::ModelLocation& loc, const std::string& flag_digest,
                                  const std::string& flag);

// When reading the model failed: a listed file other than the weights and config.json (each checked
// by its own pin) whose bytes differ from its line outranks the error it may have caused -- a
// tampered shard that no longer parses is IntegrityError naming it, not a format error.
void requireListedBeforeParseError(const DigestList& list, const io::ModelLocation& loc);

// Once the checkpoint is read (`files`: the weights and any shards): each line names one of them, or
// another file of the model folder or beside the weights, whose bytes are then checked (a misspelt
// name cannot be hashed: UsageError); a line naming none of these: UsageError.
void requireListNamesFiles(const DigestList& list, const io::ModelLocation& loc, const std::vector<std::string>& files);

}  // namespace omn::audit
