// `profile` as one library call: open the checkpoint, hash it (in parallel with the parsing; the
// result is only released once the digest is checked), find the gains, compute the statistics and
// assemble the versioned document (schema omn-audit/profile@1).
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "omn/audit/profile.h"

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
};

// Throws IntegrityError on a digest mismatch (and returns nothing else), FormatError/UsageError
// for bad input.
nlohmann::json profileCheckpoint(const ProfileRequest& req);

}  // namespace omn::audit
