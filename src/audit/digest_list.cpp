#include "omn/audit/digest_list.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>

#include "omn/errors.h"
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
    const std::string key = fs::path(m[2].str()).lexically_normal().string();
    // two lines for one file must agree: sha256sum -c fails the one that does not match, so a
    // list that pins two digests can never verify (the last line is not allowed to win)
    if (const auto [it, fresh] = out.emplace(key, hex); !fresh && it->second != hex)
      throw UsageError("--digests " + path + ": lines " + std::to_string(line_of[key]) + " and " + std::to_string(n) +
                       " pin different digests for " + io::terminalSafe(key) + " (" + it->second + " and " + hex + ")");
    line_of.emplace(key, n);
  }
  return out;
}

std::string digestKey(const std::string& path) {
  std::error_code ec;
  const fs::path c = fs::weakly_canonical(path, ec);
  return ec ? fs::path(path).lexically_normal().string() : c.string();
}

bool listedInFolder(const std::string& listed, const std::string& folder) {
  const fs::path dir = fs::path(listed).parent_path();
  return digestKey(dir.empty() ? "." : dir.string()) == digestKey(folder);
}

}  // namespace omn::audit
