// RFC 6901 JSON pointer tokens: error messages and tolerance rules name places as "/a/b/0".
#pragma once
#include <string>

namespace omn {

inline std::string escapePointerToken(const std::string& token) {
  std::string out;
  for (char c : token) {
    if (c == '~') out += "~0";
    else if (c == '/') out += "~1";
    else out += c;
  }
  return out;
}

}  // namespace omn
