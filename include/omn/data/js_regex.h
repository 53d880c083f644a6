// The regular expressions of a tokenizer.json (Split and Replace patterns), matched as
// transformers.js matches them -- JavaScript's RegExp with the "gu" flags -- through PCRE2 (UTF
// mode, JIT). The pattern is translated first: JavaScript's \s and . are Unicode-aware under "u"
// while PCRE2's are ASCII unless PCRE2_UCP, which would also widen \d, \w and \b (ASCII in
// JavaScript); so \s, \S and . become explicit classes and UCP stays off (\p{L} and \p{N} need
// only UTF mode). The case-insensitive contraction group GPT-4-style patterns use is rewritten as
// transformers.js rewrites it, \uXXXX escapes become \x{XXXX}. No libtorch.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

struct pcre2_real_code_8;
struct pcre2_real_match_data_8;

namespace omn::data {

// The PCRE2 pattern for a JavaScript "u" pattern; FormatError "<where>: ..." for what it cannot
// translate (\S inside a character class).
std::string jsPatternToPcre2(std::string_view js, const std::string& where);

// `text` with every regex metacharacter escaped (a String pattern as a regex).
std::string escapeRegexLiteral(std::string_view text);

class JsRegex {
 public:
  // FormatError "<where>: ..." when the pattern does not compile.
  JsRegex(std::string_view js_pattern, const std::string& where);
  ~JsRegex();
  JsRegex(const JsRegex&) = delete;
  JsRegex& operator=(const JsRegex&) = delete;

  // The first match at or after byte `from` (a code-point boundary): its [begin, end). Not
  // thread-safe (one match buffer per pattern).
  bool find(std::string_view text, std::size_t from, std::size_t* begin, std::size_t* end) const;
  int captureGroups() const { return groups_; }

  // Every match as String.prototype.matchAll finds them: after an empty match the search resumes
  // one code point further. f(begin, end) for each, empty matches included.
  template <class F>
  void forEachMatch(std::string_view text, F&& f) const {
    std::size_t from = 0, b = 0, e = 0;
    while (from <= text.size() && find(text, from, &b, &e)) {
      f(b, e);
      if (e > b) {
        from = e;
      } else {
        if (e >= text.size()) break;
        from = e + codePointBytes(static_cast<unsigned char>(text[e]));
      }
    }
  }

 private:
  static std::size_t codePointBytes(unsigned char lead) { return lead < 0x80 ? 1 : lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2; }
  pcre2_real_code_8* code_ = nullptr;
  pcre2_real_match_data_8* match_ = nullptr;
  bool jit_ = false;
  int groups_ = 0;
};

}  // namespace omn::data
