// The parts of the Hugging Face tokenizer (data/hf_tokenizer.h) on small hand-made cases; the whole
// against transformers.js on the real Qwen3 and Gemma 3 tokenizers is tests/tokenizer/check_tokenize.sh.
#include <gtest/gtest.h>

#include <cstdio>
#include <unistd.h>

#include <filesystem>

#include "omn/data/added_tokens.h"
#include "omn/data/bpe_model.h"
#include "omn/data/hf_tokenizer.h"
#include "omn/data/js_regex.h"
#include "omn/data/token_set_writer.h"
#include "omn/data/unicode_text.h"
#include "omn/errors.h"
#include "omn/eval/token_set.h"

using namespace omn::data;
using nlohmann::json;

namespace {

std::vector<std::string> matches(const char* pattern, const std::string& text) {
  JsRegex re(pattern, "test");
  std::vector<std::string> out;
  re.forEachMatch(text, [&](std::size_t b, std::size_t e) { out.push_back(text.substr(b, e - b)); });
  return out;
}

std::vector<std::uint32_t> encode(HfTokenizer& t, const std::string& text) {
  std::vector<std::uint32_t> ids;
  t.encode(text, ids);
  return ids;
}

// a byte-level BPE over the letters of "hello world" with GPT-2's space (U+0120 "Ġ")
json byteLevelJson() {
  json vocab = json::object();
  std::uint32_t n = 0;
  for (const char* t : {"h", "e", "l", "o", "w", "r", "d", "\xC4\xA0", "he", "ll", "hell", "hello", "\xC4\xA0w", "or", "\xC4\xA0wor", "ld",
                        "\xC4\xA0world", "!"})
    vocab[t] = n++;
  json merges = json::array({json::array({"h", "e"}), json::array({"l", "l"}), json::array({"he", "ll"}), json::array({"hell", "o"}),
                             json::array({"\xC4\xA0", "w"}), json::array({"o", "r"}), json::array({"\xC4\xA0w", "or"}),
                             json::array({"l", "d"}), json::array({"\xC4\xA0wor", "ld"})});
  return {{"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", merges}, {"unk_token", nullptr}}},
          {"normalizer", {{"type", "NFC"}}},
          {"pre_tokenizer", {{"type", "Sequence"}, {"pretokenizers", json::array({
               {{"type", "Split"}, {"pattern", {{"Regex", " ?\\p{L}+|\\p{P}+|\\s+"}}}, {"behavior", "Isolated"}, {"invert", false}},
               {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", false}}})}}},
          {"added_tokens", json::array({{{"id", 100}, {"content", "<|end|>"}, {"special", true}}})},
          {"post_processor", {{"type", "TemplateProcessing"}, {"single", json::array({{{"Sequence", {{"id", "A"}, {"type_id", 0}}}},
                                                                                      {{"SpecialToken", {{"id", "<|end|>"}, {"type_id", 0}}}}})},
                              {"special_tokens", {{"<|end|>", {{"id", "<|end|>"}, {"ids", {100}}, {"tokens", {"<|end|>"}}}}}}}}};
}

}  // namespace

TEST(UnicodeText, Utf8ValidityAndJavaScriptWhitespace) {
  EXPECT_EQ(invalidUtf8At("plain \xC3\xA9 \xF0\x9F\x98\x80"), std::string::npos);
  EXPECT_EQ(invalidUtf8At("ab\xC0\xAF"), 2u);          // overlong
  EXPECT_EQ(invalidUtf8At("a\xED\xA0\x80"), 1u);       // a surrogate
  EXPECT_EQ(invalidUtf8At("abc\xE2\x82"), 3u);         // cut short
  EXPECT_EQ(trimJsWhitespace("\xEF\xBB\xBF\t x \xE3\x80\x80\n", true, true), "x");  // BOM and ideographic space are JS whitespace
  EXPECT_EQ(trimJsWhitespace("  x  ", false, true), "  x");
  EXPECT_EQ(normalizeUnicode("e\xCC\x81", NormalForm::NFC), "\xC3\xA9");
  EXPECT_EQ(normalizeUnicode("\xEF\xAC\x81", NormalForm::NFKC), "fi");  // the ligature
}

TEST(JsRegex, MatchesAsJavaScriptUnicodeRegExp) {
  // \s is JavaScript's (U+3000 and U+FEFF included); \d stays ASCII as under "u"
  EXPECT_EQ(matches("\\s+", "a\xE3\x80\x80\xEF\xBB\xBF" "b"), std::vector<std::string>{"\xE3\x80\x80\xEF\xBB\xBF"});
  EXPECT_EQ(matches("\\d+", "12\xD9\xA3"), std::vector<std::string>{"12"});  // Arabic-Indic three is not \d
  // after an empty match the search moves one code point on (matchAll)
  EXPECT_EQ(matches("a*", "ba\xC3\xA9"), (std::vector<std::string>{"", "a", "", ""}));
  // the contraction group is case-insensitive for ASCII only (transformers.js's rewrite): no long s
  EXPECT_EQ(matches("(?i:'s|'t|'re|'ve|'m|'ll|'d)", "'S 's '\xC5\xBF"), (std::vector<std::string>{"'S", "'s"}));
  EXPECT_THROW(JsRegex("[\\S]", "here"), omn::FormatError);
  EXPECT_THROW(JsRegex("(unclosed", "here"), omn::FormatError);
  EXPECT_EQ(matches("x\\u00e9", "x\xC3\xA9"), std::vector<std::string>{"x\xC3\xA9"});
}

TEST(Bpe, LowestRankFirstLeftmostOnTies) {
  std::unordered_map<std::string, std::uint32_t> vocab{{"a", 0}, {"b", 1}, {"aa", 2}, {"ab", 3}, {"aab", 4}};
  BpeModel m(vocab, {{"a", "a"}, {"a", "b"}, {"aa", "b"}}, {});
  std::vector<std::uint32_t> ids;
  m.encodePiece("aaa", ids);  // the left pair first: aa a
  EXPECT_EQ(ids, (std::vector<std::uint32_t>{2, 0}));
  ids.clear();
  m.encodePiece("aab", ids);  // a a b: (a,a) rank 0 first, then (aa,b)
  EXPECT_EQ(ids, (std::vector<std::uint32_t>{4}));
}

TEST(Bpe, ByteFallbackThenUnknownFused) {
  std::unordered_map<std::string, std::uint32_t> vocab{{"<unk>", 0}, {"a", 1}, {"<0xC3>", 2}, {"<0xA9>", 3}};
  BpeOptions o;
  o.unk_id = 0;
  o.byte_fallback = true;
  o.fuse_unk = true;
  BpeModel m(vocab, {}, o);
  std::vector<std::uint32_t> ids;
  m.encodePiece("a\xC3\xA9", ids);  // é: its two bytes
  EXPECT_EQ(ids, (std::vector<std::uint32_t>{1, 2, 3}));
  ids.clear();
  m.encodePiece("\xE2\x82\xAC\xE2\x82\xAC" "a", ids);  // € has no byte tokens: unknown, twice, fused to one
  m.fuseUnknown(ids, 0);
  EXPECT_EQ(ids, (std::vector<std::uint32_t>{0, 1}));
}

TEST(AddedTokens, LongestMatchAndStripping) {
  AddedTokenSplitter s({{"<a>", 5, false, false, true}, {"<a><b>", 6, false, false, true}, {"<s>", 7, true, true, true}});
  const auto parts = s.split("x<a><b>y <s> z<a>");
  ASSERT_EQ(parts.size(), 6u);
  EXPECT_EQ(parts[0].text, "x");
  EXPECT_EQ(parts[1].added, 6);  // the longest token at that position
  EXPECT_EQ(parts[2].text, "y");  // lstrip of <s> took the space
  EXPECT_EQ(parts[3].added, 7);
  EXPECT_EQ(parts[4].text, "z");  // rstrip
  EXPECT_EQ(parts[5].added, 5);
}

TEST(HfTokenizer, ByteLevelPipelineAndPostProcessorStated) {
  auto t = HfTokenizer::fromJson(byteLevelJson(), "test");
  // "hello" "Ġworld" "!" and the added token matched in plain text
  EXPECT_EQ(encode(*t, "hello world!<|end|>"), (std::vector<std::uint32_t>{11, 16, 17, 100}));
  EXPECT_EQ(t->vocabularySize(), 101u);
  EXPECT_EQ(t->postProcessor().after, (std::vector<std::uint32_t>{100}));  // stated, not applied
  EXPECT_TRUE(t->postProcessor().before.empty());
}

TEST(HfTokenizer, UnsupportedPartsNameTheirPointer) {
  auto expectPointer = [](json j, const std::string& ptr) {
    try {
      HfTokenizer::fromJson(j, "tokenizer t.json");
      ADD_FAILURE() << "accepted " << ptr;
    } catch (const omn::FormatError& e) {
      EXPECT_NE(std::string(e.what()).find("t.json: " + ptr), std::string::npos) << e.what();
    }
  };
  json j = byteLevelJson();
  j["model"]["type"] = "Unigram";
  expectPointer(j, "/model/type");
  j = byteLevelJson();
  j["normalizer"] = {{"type", "Precompiled"}};
  expectPointer(j, "/normalizer/type");
  j = byteLevelJson();
  j["pre_tokenizer"]["pretokenizers"][0]["behavior"] = "Sideways";
  expectPointer(j, "/pre_tokenizer/pretokenizers/0/behavior");
  j = byteLevelJson();
  j["model"]["dropout"] = 0.1;
  expectPointer(j, "/model/dropout");
}

TEST(HfTokenizer, SplitBehaviorsAndMetaspace) {
  auto pieces = [](json pre, const std::string& text) {
    HfJson r("t");
    auto p = PreTokenizer::fromJson(pre, "/pre_tokenizer", r);
    std::vector<std::string> v{text};
    p->apply(v, 0);
    return v;
  };
  json split = {{"type", "Split"}, {"pattern", {{"String", "-"}}}, {"invert", false}};
  split["behavior"] = "MergedWithPrevious";
  EXPECT_EQ(pieces(split, "a-b--c"), (std::vector<std::string>{"a-", "b-", "-", "c"}));
  split["behavior"] = "MergedWithNext";
  EXPECT_EQ(pieces(split, "a-b--c"), (std::vector<std::string>{"a", "-b", "-", "-c"}));
  split["behavior"] = "Removed";
  EXPECT_EQ(pieces(split, "a-b--c"), (std::vector<std::string>{"a", "b", "c"}));
  split["behavior"] = "Contiguous";
  EXPECT_EQ(pieces(split, "a-b--c"), (std::vector<std::string>{"a", "-", "b", "--", "c"}));
  json meta = {{"type", "Metaspace"}, {"replacement", "\xE2\x96\x81"}, {"prepend_scheme", "first"}, {"split", true}};
  EXPECT_EQ(pieces(meta, "Hi  there"), (std::vector<std::string>{"\xE2\x96\x81Hi", "\xE2\x96\x81", "\xE2\x96\x81there"}));
}

TEST(TokenSetWriter, EvalReadsWhatTokenizeWrites) {
  const auto dir = std::filesystem::temp_directory_path() / ("omn-tokset-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const TokenSetPaths p = tokenSetPaths((dir / "set.npy").string());
  EXPECT_EQ(p.offsets, (dir / "set.offsets.npy").string());
  EXPECT_EQ(p.record, (dir / "set.tokens.json").string());
  TokenSetRecord r;
  r.vocab_size = 70000;  // uint32 ids
  r.tokenizer = {{"sha256", std::string(64, 'a')}};
  r.documents = {{"a.txt", "", 3, 3, 0}, {"empty.txt", "", 0, 0, 3}, {"b.txt", "", 2, 2, 3}};
  const std::vector<std::uint32_t> ids{1, 69999, 2, 3, 4};
  const json doc = writeTokenSet(p, ids, r);
  EXPECT_EQ(doc["offsets"]["n_documents"], 2);
  omn::eval::TokenSetSpec spec;
  spec.path = p.tokens;
  spec.offsets = p.offsets;
  const omn::eval::TokenSet set = omn::eval::readTokenSet(spec);
  EXPECT_EQ(set.tokens, ids);
  EXPECT_EQ(set.doc_starts, (std::vector<std::uint64_t>{0, 3}));
  std::filesystem::remove_all(dir);
}
