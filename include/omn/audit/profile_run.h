// `profile` as one library call: open the checkpoint, hash it (in parallel with the parsing; the
// result is only released once the digest is checked), find the gains, compute the statistics and
// assemble the versioned document (schema omn-audit/profile@1).
#pragma once
#include <map>
#include <string>

#include "omn/audit/profile.h"
#include "omn/documents/profile_document.h"

namespace omn::audit {

struct ProfileRequest {
  std::string checkpoint;
  std::string expected_sha256;  // empty: not verified
  std::string preset;           // empty: detect
  std::string state_key;
  ProfileOptions options;
  bool progress = false;        // progress bar for the hash on stderr
  bool hash = true;             // false (and no expected digest): skip the full-file hash, read only the
                                // gain records; /checkpoint/sha256 is then null (track's fast path)
  bool parameters = true;       // false: no /parameters (the count, and the head compared with the
                                // embedding, which reads both: ~800 MB for OMN-1): track's fast path
  std::map<std::string, std::string> digests;  // --digests (readDigestList): the checkpoint and, for a
  std::string digests_path;                    // sharded index, each shard it pins is hashed and checked
};

// Throws IntegrityError on a digest mismatch of the checkpoint or of any pinned shard, naming the
// file (and returns nothing else), FormatError/UsageError for bad input; UsageError when --digests
// names a file that is neither the checkpoint nor one of its shards. /checkpoint/verified says
// which bytes were checked: "all", "partial" (an index without its shards, say) or "none".
// The document has no /regression: a gate adds its verdict (regressionVerdict).
documents::ProfileDocument profileCheckpoint(const ProfileRequest& req);

}  // namespace omn::audit
