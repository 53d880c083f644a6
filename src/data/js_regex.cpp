#define PCRE2_CODE_UNIT_WIDTH 8
#include "omn/data/js_regex.h"

#include <pcre2.h>

#include "omn/errors.h"

namespace omn::data {

namespace {

// JavaScript's \s under "u" (data/unicode_text.h isJsWhitespace), as the body of a class
constexpr const char* kJsSpaceClass = "\\t\\n\\x{0B}\\f\\r \\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}\\x{205F}\\x{3000}\\x{FEFF}";

// transformers.js rewrites this group (JavaScript has no inline flags) to explicit case classes:
// matched the same way here, so that no other case folding (U+017F for "s") slips in
constexpr const char* kCaseInsensitiveContractions = "(?i:'s|'t|'re|'ve|'m|'ll|'d)";
constexpr const char* kContractionsRewritten = "(?:'([sS]|[tT]|[rR][eE]|[vV][eE]|[mM]|[lL][lL]|[dD]))";

bool isHex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

// `\u` escapes at p[i] ('\\' at i, 'u' at i + 1): the PCRE2 spelling, and the bytes consumed
std::string unicodeEscape(std::string_view p, std::size_t i, std::size_t* used) {
  if (i + 2 < p.size() && p[i + 2] == '{') {
    const std::size_t close = p.find('}', i + 3);
    if (close != std::string_view::npos) {
      *used = close + 1 - i;
      return "\\x{" + std::string(p.substr(i + 3, close - i - 3)) + "}";
    }
  }
  if (i + 5 < p.size() && isHex(p[i + 2]) && isHex(p[i + 3]) && isHex(p[i + 4]) && isHex(p[i + 5])) {
    *used = 6;
    return "\\x{" + std::string(p.substr(i + 2, 4)) + "}";
  }
  *used = 2;
  return "u";  // JavaScript without "u" reads \u as u; under "u" it is an error PCRE2 would not name
}

}  // namespace

std::string jsPatternToPcre2(std::string_view js, const std::string& where) {
  std::string src(js);
  for (std::size_t at = src.find(kCaseInsensitiveContractions); at != std::string::npos;
       at = src.find(kCaseInsensitiveContractions, at + 1))
    src.replace(at, std::string_view(kCaseInsensitiveContractions).size(), kContractionsRewritten);
  std::string out;
  bool in_class = false;
  for (std::size_t i = 0; i < src.size(); ++i) {
    const char c = src[i];
    if (c == '\\' && i + 1 < src.size()) {
      const char e = src[i + 1];
      if (e == 's') {
        out += in_class ? std::string(kJsSpaceClass) : "[" + std::string(kJsSpaceClass) + "]";
      } else if (e == 'S') {
        if (in_class) throw FormatError(where + ": \\S inside a character class is not supported");
        out += "[^" + std::string(kJsSpaceClass) + "]";
      } else if (e == 'u') {
        std::size_t used = 0;
        out += unicodeEscape(src, i, &used);
        i += used - 1;
        continue;
      } else {
        out += src.substr(i, 2);
      }
      ++i;
    } else if (c == '[' && !in_class) {
      in_class = true;
      out += c;
    } else if (c == ']' && in_class) {
      in_class = false;
      out += c;
    } else if (c == '.' && !in_class) {
      out += "[^\\n\\r\\x{2028}\\x{2029}]";
    } else {
      out += c;
    }
  }
  return out;
}

std::string escapeRegexLiteral(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (std::string_view("\\^$.|?*+()[]{}/-").find(c) != std::string_view::npos) out += '\\';
    out += c;
  }
  return out;
}

JsRegex::JsRegex(std::string_view js_pattern, const std::string& where) {
  const std::string pattern = jsPatternToPcre2(js_pattern, where);
  int err = 0;
  PCRE2_SIZE offset = 0;
  code_ = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                        PCRE2_UTF | PCRE2_NO_UTF_CHECK | PCRE2_DOLLAR_ENDONLY, &err, &offset, nullptr);
  if (!code_) {
    PCRE2_UCHAR msg[256];
    pcre2_get_error_message(err, msg, sizeof msg);
    throw FormatError(where + ": the pattern does not compile (PCRE2, at byte " + std::to_string(offset) + " of \"" + pattern +
                      "\"): " + reinterpret_cast<const char*>(msg));
  }
  jit_ = pcre2_jit_compile(code_, PCRE2_JIT_COMPLETE) == 0;
  std::uint32_t groups = 0;
  pcre2_pattern_info(code_, PCRE2_INFO_CAPTURECOUNT, &groups);
  groups_ = static_cast<int>(groups);
  match_ = pcre2_match_data_create_from_pattern(code_, nullptr);
}

JsRegex::~JsRegex() {
  pcre2_match_data_free(match_);
  pcre2_code_free(code_);
}

bool JsRegex::find(std::string_view text, std::size_t from, std::size_t* begin, std::size_t* end) const {
  const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  const int rc = jit_ ? pcre2_jit_match(code_, subject, text.size(), from, 0, match_, nullptr)
                      : pcre2_match(code_, subject, text.size(), from, PCRE2_NO_UTF_CHECK, match_, nullptr);
  if (rc == PCRE2_ERROR_NOMATCH) return false;
  if (rc < 0) {
    PCRE2_UCHAR msg[256];
    pcre2_get_error_message(rc, msg, sizeof msg);
    throw FormatError(std::string("tokenizer pattern: matching failed: ") + reinterpret_cast<const char*>(msg));
  }
  const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(match_);
  *begin = ov[0];
  *end = ov[1];
  return true;
}

}  // namespace omn::data
