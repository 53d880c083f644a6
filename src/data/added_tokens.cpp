#include "omn/data/added_tokens.h"

#include <algorithm>
#include <unordered_map>

#include "omn/data/unicode_text.h"

namespace omn::data {

AddedTokenSplitter::AddedTokenSplitter(const std::vector<AddedToken>& tokens) : nodes_(1) {
  // a later token with the same content replaces the earlier (transformers.js's Map)
  std::unordered_map<std::string, std::size_t> index;
  for (const AddedToken& t : tokens) {
    if (t.content.empty()) continue;
    const auto [it, added] = index.try_emplace(t.content, tokens_.size());
    if (added) tokens_.push_back(t);
    else tokens_[it->second] = t;
  }
  for (std::size_t k = 0; k < tokens_.size(); ++k) {
    std::int32_t node = 0;
    for (unsigned char b : tokens_[k].content) {
      std::int32_t c = child(node, b);
      if (c < 0) {
        c = static_cast<std::int32_t>(nodes_.size());
        auto& next = nodes_[static_cast<std::size_t>(node)].next;
        next.insert(std::upper_bound(next.begin(), next.end(), std::make_pair(b, -1)), {b, c});
        nodes_.emplace_back();
      }
      node = c;
    }
    nodes_[static_cast<std::size_t>(node)].token = static_cast<std::int32_t>(k);
    by_content_[tokens_[k].content] = tokens_[k].id;
  }
}

std::int32_t AddedTokenSplitter::child(std::int32_t node, unsigned char b) const {
  const auto& next = nodes_[static_cast<std::size_t>(node)].next;
  const auto it = std::lower_bound(next.begin(), next.end(), std::make_pair(b, std::int32_t{-1}));
  return it != next.end() && it->first == b ? it->second : -1;
}

std::int32_t AddedTokenSplitter::longestAt(std::string_view text, std::size_t i) const {
  std::int32_t node = 0, found = -1;
  for (std::size_t j = i; j < text.size(); ++j) {
    node = child(node, static_cast<unsigned char>(text[j]));
    if (node < 0) break;
    if (nodes_[static_cast<std::size_t>(node)].token >= 0) found = nodes_[static_cast<std::size_t>(node)].token;
  }
  return found;
}

std::vector<TextSection> AddedTokenSplitter::split(std::string_view text) const {
  std::vector<TextSection> out;
  std::vector<std::int32_t> which;  // the token index of each section, -1 for text
  std::size_t start = 0;
  if (!empty()) {
    // UTF-8 bytes instead of transformers.js's UTF-16 units: a token (well-formed UTF-8) can only
    // match at a code-point boundary of well-formed text, so the matches are the same
    for (std::size_t i = 0; i < text.size();) {
      const std::int32_t k = longestAt(text, i);
      if (k < 0) {
        ++i;
        continue;
      }
      if (i > start) {
        out.push_back({text.substr(start, i - start), -1});
        which.push_back(-1);
      }
      const std::size_t n = tokens_[static_cast<std::size_t>(k)].content.size();
      out.push_back({text.substr(i, n), tokens_[static_cast<std::size_t>(k)].id});
      which.push_back(k);
      i += n;
      start = i;
    }
  }
  if (start < text.size()) {
    out.push_back({text.substr(start), -1});
    which.push_back(-1);
  }
  std::vector<bool> trimmed(out.size(), false);
  for (std::size_t s = 0; s < out.size(); ++s) {
    if (which[s] < 0) continue;
    const AddedToken& t = tokens_[static_cast<std::size_t>(which[s])];
    if (t.lstrip && s > 0) out[s - 1].text = trimJsWhitespace(out[s - 1].text, false, true), trimmed[s - 1] = true;
    if (t.rstrip && s + 1 < out.size()) out[s + 1].text = trimJsWhitespace(out[s + 1].text, true, false), trimmed[s + 1] = true;
  }
  // transformers.js then looks each section up by its text: a trimmed section is an added token
  // when its text now is one's, and an empty one is nothing
  for (std::size_t s = 0; s < out.size(); ++s) {
    if (!trimmed[s]) continue;
    const auto it = by_content_.find(std::string(out[s].text));
    out[s].added = out[s].text.empty() || it == by_content_.end() ? -1 : static_cast<std::int64_t>(it->second);
  }
  return out;
}

}  // namespace omn::data
