// UTF-8 text as the Hugging Face tokenizer pipeline sees it (data/hf_tokenizer.h): strict decoding,
// the whitespace set of JavaScript's String.prototype.trim and \s (the reference, transformers.js,
// runs its patterns there), and the Unicode normal forms through utf8proc. No libtorch.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

namespace omn::data {

// The byte offset of the first byte that does not start a well-formed UTF-8 sequence (overlong
// forms, surrogates and values past U+10FFFF are ill-formed), or npos when all of `text` is UTF-8.
std::size_t invalidUtf8At(std::string_view text);

// The code point starting at text[i] (well-formed UTF-8 assumed) and its length in bytes.
char32_t codePointAt(std::string_view text, std::size_t i, std::size_t* length);
void appendUtf8(std::string& out, char32_t cp);

// JavaScript's WhiteSpace and LineTerminator (what \s matches and trim() removes): tab, LF, VT, FF,
// CR, space, U+00A0, U+1680, U+2000-U+200A, U+2028, U+2029, U+202F, U+205F, U+3000, U+FEFF.
bool isJsWhitespace(char32_t cp);
std::string_view trimJsWhitespace(std::string_view text, bool left, bool right);

enum class NormalForm { NFC, NFD, NFKC, NFKD };
// `text` in the normal form (utf8proc; well-formed UTF-8 assumed).
std::string normalizeUnicode(std::string_view text, NormalForm form);

// Lower case, one code point at a time (utf8proc's simple case mapping); combining marks
// (general category M) removed.
std::string lowerCaseText(std::string_view text);
std::string withoutCombiningMarks(std::string_view text);

}  // namespace omn::data
