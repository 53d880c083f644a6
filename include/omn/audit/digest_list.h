// Expected SHA-256 digests from a `sha256sum`-style list (`--digests` of track and profile): one
// reader and one rule for which file an entry names. No libtorch.
#pragma once
#include <map>
#include <string>

namespace omn::audit {

// Reads `sha256sum` output ("<64 hex>  <path>" per line; "*" binary marker allowed; "#" comments).
// Paths are taken as written, relative to the current directory. Throws UsageError naming the line.
std::map<std::string, std::string> readDigestList(const std::string& path);

// The key under which a listed path and a file's path match: both name one file when they
// resolve to the same place (weakly canonical; lexically normal if that fails).
std::string digestKey(const std::string& path);

// Whether a listed path names a file of the model folder `folder`: its directory is the folder
// (links resolved), whatever the file itself is -- in the Hugging Face hub cache each snapshot file
// is a link into ../../blobs/, and `sha256sum SNAPSHOT/*` lists the links.
bool listedInFolder(const std::string& listed, const std::string& folder);

}  // namespace omn::audit
