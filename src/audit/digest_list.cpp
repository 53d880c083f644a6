#include "omn/audit/digest_list.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>

#include "omn/errors.h"
#include "omn/io/sha256.h"
#include "omn/io/terminal_text.h"

namespace omn::audit {

namespace fs = std::filesystem;

constexpr std::size_t kMaxLine = 4096 + 66;  // a path of PATH_MAX after the digest and separator

std::map<std::string, std::string> readDigestList(const std::string& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) throw UsageError("--digests " + path + ": not a regular file (or missing)");
  std::ifstream in(path);
  if (!in) throw UsageError("--digests " + path + ": cannot be read");
  std::map<std::string, std::string> out;
  std::map<std::string, std::size_t> line_of;  // where each path was pinned first
  const std::regex line_re("([0-9a-fA-F]{64}) [ *](.+)");
  std::string line;
  for (std::size_t n = 1; std::getline(in, line); ++n) {
    if (line.empty() || line[0] == '#') continue;
    std::smatch m;  // std::regex recurses per character: a long line is refused before it is matched
    if (line.size() > kMaxLine || !std::regex_match(line, m, line_re))
      throw UsageError("--digests " + path + ": line " + std::to_string(n) + ": expected \"<64 hex digits>  <path>\" (sha256sum output)");
    std::string hex = m[1];
    std::transform(hex.begin(), hex.end(), hex.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    // as written: "lnk/../f" is the f beside lnk's target, not ./f (digestKey resolves links first);
    // two spellings of one file are reconciled where a file is looked up (pinnedDigest)
    const std::string key = m[2].str();
    // two lines for one file must agree: sha256sum -c fails the one that does not match, so a
    // list that pins two digests can never verify (the last line is not allowed to win)
    if (const auto [it, fresh] = out.emplace(key, hex); !fresh && it->second != hex)
      throw UsageError("--digests " + path + ": lines " + std::to_string(line_of[key]) + " and " + std::to_string(n) +
                       " pin different digests for " + io::terminalSafe(key) + " (" + it->second + " and " + hex + ")");
    line_of.emplace(key, n);
  }
  return out;
}

std::vector<std::string> listedFiles(const std::map<std::string, std::string>& entries) {
  std::vector<std::string> files;
  for (const auto& [p, d] : entries) files.push_back(p);
  return files;
}

std::string digestKey(const std::string& path) {
  std::error_code ec;
  const fs::path c = fs::weakly_canonical(path, ec);
  return ec ? fs::path(path).lexically_normal().string() : c.string();
}

bool listedInFolder(const std::string& listed, const std::string& folder) {
  const fs::path dir = fs::path(listed).parent_path();
  if (digestKey(dir.empty() ? "." : dir.string()) == digestKey(folder)) return true;
  std::error_code ec;  // the target of a link in the folder (the hub cache's blobs/)
  if (!fs::is_regular_file(listed, ec)) return false;
  const std::string k = digestKey(listed);
  for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec))
    if (digestKey(it->path().string()) == k) return true;
  return false;
}

namespace {

// The directory of a sharded index, where its shards are.
std::string besideIndex(const std::string& index) {
  const std::string dir = fs::path(index).parent_path().string();
  return dir.empty() ? "." : dir;
}

// A line naming another file of the model folder (config.json, tokenizer.json, ...: a
// `sha256sum DIR/*` list, or the blobs they link to): not the weights, and not an error.
bool inFolder(const io::ModelLocation& loc, const std::string& p) { return loc.isFolder() && listedInFolder(p, loc.given); }

// A line naming another existing file beside a single weights file (`sha256sum *` beside
// model.safetensors lists config.json too), or the blob such a file links to: not the weights, and
// not an error. A line naming a file that does not exist still is (a misspelt weights file would
// otherwise leave them unpinned).
bool besideFile(const io::ModelLocation& loc, const std::string& p) {
  std::error_code ec;
  if (loc.isFolder() || !fs::is_regular_file(p, ec)) return false;
  const fs::path mine = fs::weakly_canonical(fs::absolute(loc.given).parent_path(), ec);
  if (!ec && fs::weakly_canonical(fs::absolute(p).parent_path(), ec) == mine && !ec) return true;
  return listedInFolder(p, besideIndex(loc.given));  // the blob a file beside it links to
}

// A line naming one of the run's other inputs (DigestList::run_inputs).
bool namesRunInput(const DigestList& list, const std::string& p) {
  return std::any_of(list.run_inputs.begin(), list.run_inputs.end(), [&](const std::string& f) { return !f.empty() && digestKey(f) == digestKey(p); });
}

}  // namespace

std::string pinnedDigest(const DigestList& list, const std::string& path) {
  const std::string k = digestKey(path);
  std::string found, found_as;
  for (const auto& [p, d] : list.entries) {
    if (digestKey(p) != k) continue;
    if (!found.empty() && found != d)  // two spellings of one file (./a and a, a link and its target)
      throw UsageError("--digests " + list.path + ": " + found_as + " and " + p + " are the same file " + path +
                       " but pin different digests (" + found + " and " + d + ")");
    found = d;
    found_as = p;
  }
  return found;
}

std::string expectedWeightsDigest(const DigestList& list, const io::ModelLocation& loc, const std::string& flag_digest,
                                  const std::string& flag) {
  const std::string& weights = loc.weights;
  std::string expected = flag_digest.empty() ? "" : io::normaliseSha256(flag_digest, flag);
  std::string source = expected.empty() ? "" : flag + " " + expected;  // who pinned `expected`
  const std::string self = digestKey(weights);
  for (const auto& [p, d] : list.entries) {
    if (digestKey(p) == self) {
      const std::string here = "--digests " + list.path + " (" + p + ": " + d + ")";
      if (!expected.empty() && expected != d) throw UsageError(source + " and " + here + " disagree about " + weights);
      if (source.empty()) source = here;
      expected = d;
    } else if (!namesRunInput(list, p) && (!io::isShardIndexName(weights) || !listedInFolder(p, besideIndex(weights))) && !inFolder(loc, p) && !besideFile(loc, p)) {
      throw UsageError("--digests " + list.path + ": " + p + " is not " + weights + (io::isShardIndexName(weights) ? " or a shard beside it" : "") +
                       " (paths are relative to the current directory, as for sha256sum -c)");
    }
  }
  return expected;
}

void requireListedBeforeParseError(const DigestList& list, const io::ModelLocation& loc) {
  for (const auto& [p, d] : list.entries)
    if (digestKey(p) != digestKey(loc.weights) && !(loc.isFolder() && digestKey(p) == digestKey(loc.config_path)) && !namesRunInput(list, p))
      io::requireSha256(p, d, io::sha256File(p));
}

void requireListNamesFiles(const DigestList& list, const io::ModelLocation& loc, const std::vector<std::string>& files) {
  for (const auto& [p, d] : list.entries) {
    if (namesRunInput(list, p)) continue;
    bool named = false;
    for (const auto& f : files) named = named || digestKey(f) == digestKey(p);
    const bool other = inFolder(loc, p) || besideFile(loc, p);
    if (!named && other && digestKey(p) != digestKey(loc.config_path)) io::requireSha256(p, d, io::sha256File(p));
    if (!named && !other)
      throw UsageError("--digests " + list.path + ": " + p + " is not a shard of " + loc.weights + " (its /weight_map names no such file)");
  }
}

}  // namespace omn::audit
