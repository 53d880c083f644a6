#include "omn/io/json_document.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "omn/errors.h"

namespace omn::io {

using nlohmann::json;

namespace {

// The deepest nesting of [ and { in `text`, outside strings: one linear pass. (nlohmann's parse
// callback, which also sees the depth, re-scans the parent container each time an object closes:
// an array of n empty objects took O(n^2) time, 26 s for 620 kB.)
int nestingDepth(std::string_view text) {
  int depth = 0, deepest = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return deepest;
}

}  // namespace

json parseJson(std::string_view text, const std::string& label) {
  // bounded before anything recursive (the parse's destructor, a reader, a validator) runs
  if (nestingDepth(text) > kMaxJsonDepth)
    throw FormatError(label + ": nested deeper than " + std::to_string(kMaxJsonDepth) + " levels: not an omn-audit document");
  try {
    return json::parse(text.begin(), text.end());
  } catch (const json::exception& e) {
    throw FormatError(label + ": not valid JSON: " + e.what());
  }
}

std::string readTextFile(const std::string& path, const std::string& what) {
  // stat first: opening a FIFO for reading would block until a writer came, and /dev/zero never ends
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw FormatError(what + " " + path + ": cannot open for reading: " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) throw FormatError(what + " " + path + ": not a regular file (a FIFO, device or directory)");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw FormatError(what + " " + path + ": cannot open for reading");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

json readJsonFile(const std::string& path, const std::string& what) { return parseJson(readTextFile(path, what), what + " " + path); }

}  // namespace omn::io
