// The added tokens of a tokenizer.json found in raw text, as transformers.js finds them by default:
// every added token, special or not and whatever its "normalized" flag, is matched in the text
// before normalization, the longest at each position, left to right; the text between them goes
// through the normalizer, the pre-tokenizer and the model. An added token with lstrip (rstrip)
// trims the whitespace at the end (start) of the text before (after) it. No libtorch.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace omn::data {

struct AddedToken {
  std::string content;
  std::uint32_t id = 0;
  bool lstrip = false, rstrip = false, special = false;
};

struct TextSection {
  std::string_view text;  // a view into the text given to split()
  std::int64_t added = -1;  // the added token's id, or -1 for text the pipeline encodes
};

class AddedTokenSplitter {
 public:
  explicit AddedTokenSplitter(const std::vector<AddedToken>& tokens);
  // The sections of `text` in order, added tokens and the text between them (stripped as the
  // tokens ask; empty sections kept, as transformers.js keeps them for section numbering).
  std::vector<TextSection> split(std::string_view text) const;
  bool empty() const { return nodes_.size() <= 1; }

 private:
  struct Node {
    std::vector<std::pair<unsigned char, std::int32_t>> next;  // sorted by byte
    std::int32_t token = -1;                                    // index into tokens_ of a token ending here
  };
  std::int32_t child(std::int32_t node, unsigned char b) const;
  std::int32_t longestAt(std::string_view text, std::size_t i) const;  // index into tokens_, or -1
  std::vector<Node> nodes_;
  std::vector<AddedToken> tokens_;
  std::unordered_map<std::string, std::uint32_t> by_content_;
};

}  // namespace omn::data
