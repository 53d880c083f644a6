#include "omn/io/terminal_text.h"

#include <cstdio>
#include <string>

namespace omn::io {

namespace {

// The length of the valid UTF-8 sequence at s[i] (1-4), or 0 when it is not one.
std::size_t utf8Length(const std::string& s, std::size_t i) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  std::size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k)
    if ((b(i + k) & 0xC0) != 0x80) return 0;
  if (n == 2 && c < 0xC2) return 0;                               // overlong
  if (n == 3 && c == 0xE0 && b(i + 1) < 0xA0) return 0;           // overlong
  if (n == 3 && c == 0xED && b(i + 1) >= 0xA0) return 0;          // surrogates
  if (n == 4 && (c > 0xF4 || (c == 0xF0 && b(i + 1) < 0x90) || (c == 0xF4 && b(i + 1) >= 0x90))) return 0;
  return n;
}

}  // namespace

std::string terminalSafe(const std::string& s, std::size_t max_chars) {
  std::string out;
  out.reserve(s.size());
  std::size_t chars = 0, i = 0;
  char buf[16];
  while (i < s.size()) {
    if (max_chars && chars == max_chars) {
      return out + "… (" + std::to_string(s.size() - i) + " more bytes)";
    }
    const unsigned char c = static_cast<unsigned char>(s[i]);
    const std::size_t n = utf8Length(s, i);
    if (n == 0) {  // invalid UTF-8: the byte, escaped
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
      i += 1;
    } else if (n == 1 && (c < 0x20 || c == 0x7F)) {
      out += c == '\n' ? "\\n" : c == '\r' ? "\\r" : c == '\t' ? "\\t" : "";
      if (c != '\n' && c != '\r' && c != '\t') {
        std::snprintf(buf, sizeof buf, "\\x%02x", c);
        out += buf;
      }
      i += 1;
    } else if (n == 2 && c == 0xC2 && static_cast<unsigned char>(s[i + 1]) < 0xA0) {  // C1 controls (U+0080..U+009F)
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned char>(s[i + 1]));
      out += buf;
      i += 2;
    } else {
      out.append(s, i, n);
      i += n;
    }
    ++chars;
  }
  return out;
}

}  // namespace omn::io
