#include "omn/data/bpe_model.h"

#include <queue>

#include "omn/data/unicode_text.h"
#include "omn/errors.h"

namespace omn::data {

namespace {

constexpr std::size_t kCachedPieceBytes = 256;  // longer pieces rarely repeat
constexpr std::size_t kCacheEntries = 1 << 17;  // emptied when full

struct Candidate {
  std::uint32_t rank;
  std::int32_t left, right;   // symbol indices; `left` is also the piece position of its first code point
  std::int32_t lsym, rsym;    // the symbols they held when queued (stale when either changed)
  bool operator>(const Candidate& o) const { return rank != o.rank ? rank > o.rank : left > o.left; }
};

std::uint64_t pairKey(std::int32_t a, std::int32_t b) {
  return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(a)) << 32) | static_cast<std::uint32_t>(b);
}

}  // namespace

BpeModel::BpeModel(std::unordered_map<std::string, std::uint32_t> tokens, const std::vector<std::pair<std::string, std::string>>& merges,
                   BpeOptions options)
    : tokens_(std::move(tokens)), options_(options) {
  merges_.reserve(merges.size());
  symbols_.reserve(merges.size() * 2);
  for (std::size_t r = 0; r < merges.size(); ++r) {
    const std::int32_t a = intern(merges[r].first), b = intern(merges[r].second);
    const std::int32_t ab = intern(merges[r].first + merges[r].second);
    merges_[pairKey(a, b)] = Merge{static_cast<std::uint32_t>(r), static_cast<std::uint32_t>(ab)};
  }
}

std::int32_t BpeModel::intern(const std::string& s) {
  const auto [it, added] = symbols_.try_emplace(s, static_cast<std::int32_t>(symbol_token_.size()));
  if (added) {
    const auto t = tokens_.find(s);
    symbol_token_.push_back(t == tokens_.end() ? -1 : static_cast<std::int64_t>(t->second));
  }
  return it->second;
}

std::int32_t BpeModel::symbolOf(std::string_view s) const {
  const auto it = symbols_.find(std::string(s));
  return it == symbols_.end() ? -1 : it->second;
}

std::optional<std::uint32_t> BpeModel::idOf(std::string_view token) const {
  const auto it = tokens_.find(std::string(token));
  if (it == tokens_.end()) return std::nullopt;
  return it->second;
}

// The heap of transformers.js's BPE: the candidate of lowest (rank, position) merges first; a
// candidate whose symbols changed since it was queued is dropped when it comes up.
void BpeModel::mergeSymbols(std::vector<Symbol>& s) const {
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<Candidate>> queue;
  auto consider = [&](std::int32_t l) {
    const std::int32_t r = s[static_cast<std::size_t>(l)].next;
    if (r < 0) return;
    const std::int32_t a = s[static_cast<std::size_t>(l)].sym, b = s[static_cast<std::size_t>(r)].sym;
    if (a < 0 || b < 0) return;
    const auto m = merges_.find(pairKey(a, b));
    if (m != merges_.end()) queue.push({m->second.rank, l, r, a, b});
  };
  for (std::int32_t i = 0; i + 1 < static_cast<std::int32_t>(s.size()); ++i) consider(i);
  while (!queue.empty()) {
    const Candidate c = queue.top();
    queue.pop();
    Symbol& l = s[static_cast<std::size_t>(c.left)];
    Symbol& r = s[static_cast<std::size_t>(c.right)];
    if (l.sym != c.lsym || r.sym != c.rsym || l.next != c.right) continue;  // stale
    l.sym = static_cast<std::int32_t>(merges_.at(pairKey(c.lsym, c.rsym)).result);
    l.end = r.end;
    l.next = r.next;
    if (r.next >= 0) s[static_cast<std::size_t>(r.next)].prev = c.left;
    r.sym = -2;  // gone
    if (l.prev >= 0) consider(l.prev);
    consider(c.left);
  }
}

void BpeModel::emit(std::string_view text, std::int32_t sym, std::vector<std::uint32_t>& out) const {
  if (sym >= 0 && symbol_token_[static_cast<std::size_t>(sym)] >= 0) {
    out.push_back(static_cast<std::uint32_t>(symbol_token_[static_cast<std::size_t>(sym)]));
    return;
  }
  if (sym < 0)
    if (const auto id = idOf(text)) {
      out.push_back(*id);
      return;
    }
  if (options_.byte_fallback) {
    const std::size_t mark = out.size();
    static const char* kHex = "0123456789ABCDEF";
    bool all = true;
    for (unsigned char b : text) {
      const std::string name = std::string("<0x") + kHex[b >> 4] + kHex[b & 15] + ">";
      const auto id = idOf(name);
      if (!id) {
        all = false;
        break;
      }
      out.push_back(*id);
    }
    if (all) return;
    out.resize(mark);
  }
  if (!options_.unk_id)
    throw FormatError("tokenizer: the piece \"" + std::string(text) + "\" has no token and the model has no unk_token (/model/unk_token)");
  out.push_back(*options_.unk_id);
}

void BpeModel::encodePiece(std::string_view piece, std::vector<std::uint32_t>& out) {
  if (piece.empty()) return;
  if (options_.ignore_merges)
    if (const auto id = idOf(piece)) {
      out.push_back(*id);
      return;
    }
  const bool cacheable = piece.size() < kCachedPieceBytes;
  if (cacheable) {
    const auto it = cache_.find(std::string(piece));
    if (it != cache_.end()) {
      out.insert(out.end(), it->second.begin(), it->second.end());
      return;
    }
  }
  std::vector<Symbol>& s = scratch_;
  s.clear();
  for (std::size_t i = 0, len = 0; i < piece.size(); i += len) {
    codePointAt(piece, i, &len);
    const auto n = static_cast<std::int32_t>(s.size());
    s.push_back({symbolOf(piece.substr(i, len)), static_cast<std::uint32_t>(i), static_cast<std::uint32_t>(i + len), n - 1, n + 1});
  }
  s.back().next = -1;
  if (s.size() > 1) mergeSymbols(s);
  const std::size_t mark = out.size();
  for (std::int32_t i = 0; i >= 0; i = s[static_cast<std::size_t>(i)].next) {
    const Symbol& x = s[static_cast<std::size_t>(i)];
    emit(piece.substr(x.begin, x.end - x.begin), x.sym, out);
  }
  if (cacheable) {
    if (cache_.size() >= kCacheEntries) cache_.clear();
    cache_.emplace(std::string(piece), std::vector<std::uint32_t>(out.begin() + static_cast<std::ptrdiff_t>(mark), out.end()));
  }
}

void BpeModel::fuseUnknown(std::vector<std::uint32_t>& ids, std::size_t from) const {
  if (!options_.fuse_unk || !options_.unk_id) return;
  std::size_t w = from;
  for (std::size_t i = from; i < ids.size(); ++i) {
    if (ids[i] == *options_.unk_id && w > from && ids[w - 1] == *options_.unk_id) continue;
    ids[w++] = ids[i];
  }
  ids.resize(w);
}

}  // namespace omn::data
