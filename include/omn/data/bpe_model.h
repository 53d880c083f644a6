// Byte-pair encoding of one pre-tokenized piece, as a tokenizer.json's "BPE" model defines it and
// transformers.js applies it: the piece split into code points, then the pair of lowest merge rank
// merged first (ties: the leftmost), until no adjacent pair has a merge. Pieces not in the
// vocabulary become their UTF-8 bytes' <0xXX> tokens (byte_fallback) or the unknown token. No libtorch.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace omn::data {

struct BpeOptions {
  std::optional<std::uint32_t> unk_id;  // the unknown token, if the model has one
  bool byte_fallback = false;           // <0xXX> tokens for a piece not in the vocabulary
  bool fuse_unk = false;                // consecutive unknown tokens become one
  bool ignore_merges = false;           // a piece in the vocabulary is emitted whole
};

class BpeModel {
 public:
  // `tokens`: every token string and its id (the model's vocabulary and the added tokens, as
  // transformers.js's tokens_to_ids); `merges` in rank order (a later duplicate's rank wins, as there).
  BpeModel(std::unordered_map<std::string, std::uint32_t> tokens, const std::vector<std::pair<std::string, std::string>>& merges,
           BpeOptions options);

  // Appends the ids of one piece. FormatError when a piece has no token and the model no unk_token.
  void encodePiece(std::string_view piece, std::vector<std::uint32_t>& out);
  // fuse_unk over the ids of one section (from `from` on), as transformers.js fuses a section's tokens.
  void fuseUnknown(std::vector<std::uint32_t>& ids, std::size_t from) const;

  std::optional<std::uint32_t> idOf(std::string_view token) const;
  std::size_t vocabularySize() const { return tokens_.size(); }
  std::size_t mergeCount() const { return merges_.size(); }

 private:
  struct Merge {
    std::uint32_t rank, result;  // result: an interned symbol
  };
  struct Symbol {
    std::int32_t sym;  // interned symbol, -1: a string no merge names
    std::uint32_t begin, end;
    std::int32_t prev, next;
  };
  std::int32_t intern(const std::string& s);
  std::int32_t symbolOf(std::string_view s) const;
  void mergeSymbols(std::vector<Symbol>& symbols) const;
  void emit(std::string_view text, std::int32_t sym, std::vector<std::uint32_t>& out) const;

  std::unordered_map<std::string, std::uint32_t> tokens_;
  std::unordered_map<std::string, std::int32_t> symbols_;  // every string a merge names
  std::vector<std::int64_t> symbol_token_;                  // its token id, -1 if none
  std::unordered_map<std::uint64_t, Merge> merges_;         // (left << 32 | right) -> merge
  BpeOptions options_;
  std::unordered_map<std::string, std::vector<std::uint32_t>> cache_;  // short pieces seen before
  std::vector<Symbol> scratch_;
};

}  // namespace omn::data
