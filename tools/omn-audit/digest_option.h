// The digest flags (--sha256, --config-sha256, --tokens-sha256, --offsets-sha256, --digests): a value given empty
// (an unset shell variable: --sha256 "$SUM") is refused while the command line is parsed, never read as
// "no pin" (the run would record its input as unverified and exit 0). The digest itself is checked
// where it is used (io::normaliseSha256), naming the flag.
#pragma once
#include <string>

namespace omn::cli {

// A CLI11 validator: its message, or "" (CLI11 adds the flag)
inline std::string givenDigest(const std::string& v) {
  return v.empty() ? "expected a SHA-256 of 64 hex digits, got an empty value (an unset variable?)" : std::string();
}

// The same for --digests LIST (profile, track, eval): an empty path is not "no list".
inline std::string givenDigestList(const std::string& v) {
  return v.empty() ? "expected a sha256sum-style list file, got an empty value (an unset variable?)" : std::string();
}

}  // namespace omn::cli
