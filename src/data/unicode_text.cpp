#include "omn/data/unicode_text.h"

#include <utf8proc.h>

#include <cstdlib>
#include <memory>

#include "omn/errors.h"

namespace omn::data {

std::size_t invalidUtf8At(std::string_view text) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t n = text.size();
  std::size_t i = 0;
  while (i < n) {
    const unsigned char c = s[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    std::size_t len;
    unsigned char lo = 0x80, hi = 0xBF;  // the allowed range of the second byte
    if (c >= 0xC2 && c <= 0xDF) len = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
      len = 3;
      if (c == 0xE0) lo = 0xA0;
      if (c == 0xED) hi = 0x9F;  // no surrogates
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4;
      if (c == 0xF0) lo = 0x90;
      if (c == 0xF4) hi = 0x8F;
    } else {
      return i;
    }
    if (i + len > n || s[i + 1] < lo || s[i + 1] > hi) return i;
    for (std::size_t k = 2; k < len; ++k)
      if ((s[i + k] & 0xC0) != 0x80) return i;
    i += len;
  }
  return std::string_view::npos;
}

char32_t codePointAt(std::string_view text, std::size_t i, std::size_t* length) {
  const auto c = static_cast<unsigned char>(text[i]);
  if (c < 0x80) {
    *length = 1;
    return c;
  }
  const std::size_t len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
  char32_t cp = c & (0x7F >> len);
  for (std::size_t k = 1; k < len; ++k) cp = (cp << 6) | (static_cast<unsigned char>(text[i + k]) & 0x3F);
  *length = len;
  return cp;
}

void appendUtf8(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

bool isJsWhitespace(char32_t cp) {
  if (cp == ' ' || (cp >= 0x09 && cp <= 0x0D)) return true;
  if (cp < 0xA0) return false;
  return cp == 0xA0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 || cp == 0x202F ||
         cp == 0x205F || cp == 0x3000 || cp == 0xFEFF;
}

std::string_view trimJsWhitespace(std::string_view text, bool left, bool right) {
  std::size_t begin = 0, end = text.size();
  if (left) {
    std::size_t len = 0;
    while (begin < end && isJsWhitespace(codePointAt(text, begin, &len))) begin += len;
  }
  if (right) {
    while (end > begin) {
      std::size_t start = end - 1;  // back to the start of the last code point
      while (start > begin && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80) --start;
      std::size_t len = 0;
      if (!isJsWhitespace(codePointAt(text, start, &len))) break;
      end = start;
    }
  }
  return text.substr(begin, end - begin);
}

namespace {

struct FreeDeleter {
  void operator()(utf8proc_uint8_t* p) const { std::free(p); }
};

std::string utf8procMapped(std::string_view text, int options, const char* what) {
  utf8proc_uint8_t* raw = nullptr;
  const utf8proc_ssize_t n = utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(text.data()),
                                          static_cast<utf8proc_ssize_t>(text.size()), &raw,
                                          static_cast<utf8proc_option_t>(options));
  std::unique_ptr<utf8proc_uint8_t, FreeDeleter> owned(raw);
  if (n < 0) throw FormatError(std::string(what) + ": " + utf8proc_errmsg(n));
  return std::string(reinterpret_cast<const char*>(raw), static_cast<std::size_t>(n));
}

}  // namespace

std::string normalizeUnicode(std::string_view text, NormalForm form) {
  int options = UTF8PROC_STABLE;
  switch (form) {
    case NormalForm::NFC: options |= UTF8PROC_COMPOSE; break;
    case NormalForm::NFD: options |= UTF8PROC_DECOMPOSE; break;
    case NormalForm::NFKC: options |= UTF8PROC_COMPOSE | UTF8PROC_COMPAT; break;
    case NormalForm::NFKD: options |= UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT; break;
  }
  return utf8procMapped(text, options, "Unicode normalization");
}

std::string lowerCaseText(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0, len = 0; i < text.size(); i += len)
    appendUtf8(out, static_cast<char32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(codePointAt(text, i, &len)))));
  return out;
}

std::string withoutCombiningMarks(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0, len = 0; i < text.size(); i += len) {
    const char32_t cp = codePointAt(text, i, &len);
    const utf8proc_category_t cat = utf8proc_category(static_cast<utf8proc_int32_t>(cp));
    if (cat != UTF8PROC_CATEGORY_MN && cat != UTF8PROC_CATEGORY_MC && cat != UTF8PROC_CATEGORY_ME) out.append(text, i, len);
  }
  return out;
}

}  // namespace omn::data
