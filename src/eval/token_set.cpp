#include "omn/eval/token_set.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <fstream>
#include <numeric>
#include <optional>
#include <sstream>
#include <string_view>

#include <filesystem>

#include <spdlog/spdlog.h>

#include "omn/data/token_set_writer.h"
#include "omn/errors.h"
#include "omn/io/json_document.h"
#include "omn/io/mapped_file.h"
#include "omn/io/sha256.h"
#include "omn/split_mix64.h"

namespace omn::eval {
namespace {

// A non-negative decimal below 2^63 (no sign, no spaces), or nothing: shapes and offsets from files
// (std::stoull accepted "-1" as 2^64-1 and threw, exit 1, on overflow).
std::optional<std::uint64_t> decimal(std::string_view t) {
  std::uint64_t v = 0;
  const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (t.empty() || ec != std::errc() || end != t.data() + t.size() || v >= (std::uint64_t{1} << 63)) return std::nullopt;
  return v;
}

// A .npy file: magic, version, header dict with 'descr', 'fortran_order', 'shape'.
struct Npy {
  std::string descr;
  std::uint64_t count = 0;
  const std::uint8_t* data = nullptr;
};

Npy parseNpy(const io::MappedFile& f) {
  const std::string& path = f.path();
  if (f.size() < 10 || std::memcmp(f.data(), "\x93NUMPY", 6) != 0) throw FormatError(path + ": not a .npy file (bad magic)");
  const int major = f.data()[6];
  std::uint64_t hlen, hstart;
  if (major == 1) {
    hlen = f.data()[8] | (f.data()[9] << 8);
    hstart = 10;
  } else {
    const std::uint8_t* p = f.span(8, 4, ".npy header length");
    hlen = p[0] | (p[1] << 8) | (p[2] << 16) | (static_cast<std::uint64_t>(p[3]) << 24);
    hstart = 12;
  }
  const std::string header(reinterpret_cast<const char*>(f.span(hstart, hlen, ".npy header")), hlen);
  auto field = [&](const std::string& key) {
    const auto k = header.find("'" + key + "'");
    if (k == std::string::npos) throw FormatError(path + ": .npy header lacks '" + key + "': " + header);
    return header.substr(header.find(':', k) + 1);
  };
  std::string d = field("descr");
  d = d.substr(d.find('\'') + 1);
  Npy n;
  n.descr = d.substr(0, d.find('\''));
  if (field("fortran_order").find("True") < field("fortran_order").find(','))
    throw FormatError(path + ": .npy in Fortran order is not supported");
  std::string shape = field("shape");
  shape = shape.substr(shape.find('(') + 1, shape.find(')') - shape.find('(') - 1);
  std::stringstream ss(shape);
  std::string dim;
  n.count = 1;
  int dims = 0;
  while (std::getline(ss, dim, ',')) {
    const auto b = dim.find_first_not_of(' '), e = dim.find_last_not_of(' ');
    if (b == std::string::npos) continue;
    const auto v = decimal(std::string_view(dim).substr(b, e - b + 1));
    if (!v) throw FormatError(path + ": .npy shape (" + shape + "): \"" + dim + "\" is not a dimension (a decimal below 2^63)");
    n.count = *v;
    ++dims;
  }
  if (dims != 1) throw FormatError(path + ": expected a 1-D .npy array, shape (" + shape + ")");
  const std::uint64_t start = hstart + hlen;
  std::size_t item = 0;
  if (n.descr == "<u2" || n.descr == "<i2") item = 2;
  else if (n.descr == "<u4" || n.descr == "<i4") item = 4;
  else if (n.descr == "<i8" || n.descr == "<u8") item = 8;
  else throw FormatError(path + ": .npy dtype '" + n.descr + "' is not supported (uint16, uint32, int32, int64)");
  if (n.count > (f.size() - start) / item || f.size() - start != n.count * item)
    throw FormatError(path + ": .npy holds " + std::to_string(f.size() - start) + " data bytes, expected " +
                      std::to_string(n.count) + " x " + std::to_string(item));
  n.data = f.data() + start;
  return n;
}

std::int64_t npyValue(const Npy& n, std::uint64_t i) {
  const std::uint8_t* p = n.data;
  if (n.descr == "<u2") { std::uint16_t v; std::memcpy(&v, p + 2 * i, 2); return v; }
  if (n.descr == "<i2") { std::int16_t v; std::memcpy(&v, p + 2 * i, 2); return v; }
  if (n.descr == "<u4") { std::uint32_t v; std::memcpy(&v, p + 4 * i, 4); return v; }
  if (n.descr == "<i4") { std::int32_t v; std::memcpy(&v, p + 4 * i, 4); return v; }
  std::int64_t v;
  std::memcpy(&v, p + 8 * i, 8);
  return v;
}

// --token-format auto on a raw file: the width `tokenize` recorded beside it (STEM.tokens.json) when that
// record names this file by its digest; else u16, said in a warning (a u32 file read as u16 has twice
// its tokens, every id wrong).
TokenFormat rawWidth(const std::string& path, const std::string& sha256) {
  const std::filesystem::path record = data::tokenRecordPath(path);
  std::error_code ec;
  if (std::filesystem::is_regular_file(record, ec)) {
    try {
      const nlohmann::json j = io::parseJson(io::readTextFile(record.string(), "token record"), record.string());
      const nlohmann::json& t = j.at("tokens");
      if (t.at("sha256").get<std::string>() == sha256) {
        const std::string f = t.at("format").get<std::string>();
        if (f == "u16") return TokenFormat::U16;
        if (f == "u32") return TokenFormat::U32;
      }
    } catch (const std::exception&) {  // not a record of this file: the default, warned about below
    }
  }
  spdlog::warn("{}: read as u16 (--token-format auto: no record of this file beside it gives its width); a file of 32-bit ids "
               "needs --token-format u32 (tokenize prints the flag to use)", path);
  return TokenFormat::U16;
}

}  // namespace

TokenSet readTokenSet(const TokenSetSpec& spec) {
  TokenSet s;
  s.path = spec.path;
  s.eos = spec.eos;
  io::MappedFile f(spec.path);
  s.sha256 = io::sha256File(spec.path);
  TokenFormat fmt = spec.format;
  if (fmt == TokenFormat::Auto)
    fmt = (f.size() >= 6 && std::memcmp(f.data(), "\x93NUMPY", 6) == 0) ? TokenFormat::Npy : rawWidth(spec.path, s.sha256);
  s.format = fmt;
  if (fmt == TokenFormat::Npy) {
    const Npy n = parseNpy(f);
    s.tokens.resize(n.count);
    for (std::uint64_t i = 0; i < n.count; ++i) {
      const std::int64_t v = npyValue(n, i);
      if (v < 0 || v > UINT32_MAX)
        throw FormatError(spec.path + ": token " + std::to_string(i) + " is " + std::to_string(v) + ", not a token id");
      s.tokens[i] = static_cast<std::uint32_t>(v);
    }
  } else {
    const std::size_t item = fmt == TokenFormat::U16 ? 2 : 4;
    if (f.size() % item)
      throw FormatError(spec.path + ": " + std::to_string(f.size()) + " bytes is not a whole number of " +
                        io::choiceName(kTokenFormats, fmt) + " tokens");
    s.tokens.resize(f.size() / item);
    for (std::size_t i = 0; i < s.tokens.size(); ++i) {
      if (item == 2) {
        std::uint16_t v;
        std::memcpy(&v, f.data() + 2 * i, 2);
        s.tokens[i] = v;
      } else {
        std::memcpy(&s.tokens[i], f.data() + 4 * i, 4);
      }
    }
  }
  if (s.tokens.empty()) throw FormatError(spec.path + ": the token set is empty");
  if (spec.eos && !spec.offsets.empty()) throw UsageError("give document boundaries by --eos or by --offsets, not both");
  if (spec.eos) {
    s.doc_starts.push_back(0);
    for (std::size_t i = 0; i + 1 < s.tokens.size(); ++i)
      if (s.tokens[i] == static_cast<std::uint64_t>(*spec.eos)) s.doc_starts.push_back(i + 1);
  } else if (!spec.offsets.empty()) {
    s.offsets_path = spec.offsets;
    s.offsets_sha256 = io::sha256File(spec.offsets);
    io::MappedFile of(spec.offsets);
    if (of.size() >= 6 && std::memcmp(of.data(), "\x93NUMPY", 6) == 0) {
      const Npy n = parseNpy(of);
      for (std::uint64_t i = 0; i < n.count; ++i) s.doc_starts.push_back(static_cast<std::uint64_t>(npyValue(n, i)));
    } else {
      std::istringstream in(std::string(reinterpret_cast<const char*>(of.data()), of.size()));
      std::string tok;
      std::size_t line = 0;
      while (in >> tok) {
        ++line;
        if (tok.find_first_not_of("0123456789") != std::string::npos)
          throw FormatError(spec.offsets + ": entry " + std::to_string(line) + " (counting from 1) \"" + tok + "\" is not a token offset");
        const auto v = decimal(tok);
        if (!v) throw FormatError(spec.offsets + ": entry " + std::to_string(line) + " (counting from 1) \"" + tok + "\" is beyond any token offset");
        s.doc_starts.push_back(*v);
      }
    }
    for (std::size_t i = 0; i < s.doc_starts.size(); ++i) {
      if (s.doc_starts[i] >= s.tokens.size() || (i && s.doc_starts[i] <= s.doc_starts[i - 1]))
        throw FormatError(spec.offsets + ": entry " + std::to_string(i + 1) + " (counting from 1: " + std::to_string(s.doc_starts[i]) +
                          ") is not an increasing offset below " + std::to_string(s.tokens.size()) +
                          (i ? ", after entry " + std::to_string(i) + "'s " + std::to_string(s.doc_starts[i - 1]) : std::string()));
    }
    if (s.doc_starts.empty() || s.doc_starts[0] != 0) s.doc_starts.insert(s.doc_starts.begin(), 0);
  }
  return s;
}

bool anyRowPacked(const std::vector<Row>& rows) {
  for (const Row& r : rows)
    for (std::size_t t = 1; t < r.doc.size(); ++t)
      if (r.doc[t] != r.doc[t - 1]) return true;
  return false;
}

std::int64_t scoredTokens(const Row& r) {
  std::int64_t n = 0;
  for (std::size_t t = 1; t < r.doc.size(); ++t) n += r.doc[t] == r.doc[t - 1];
  return n;
}

std::vector<Row> buildRows(const TokenSet& set, RowForm form, std::int64_t seq_len) {
  if (seq_len < 2) throw UsageError("--seq-len must be at least 2, got " + std::to_string(seq_len));
  const std::size_t L = static_cast<std::size_t>(seq_len);
  std::vector<Row> rows;
  const std::size_t n = set.tokens.size();
  if (form == RowForm::Historical) {
    if (!set.eos) throw UsageError("the historical row form strips EOS: give --eos");
    std::vector<std::int64_t> kept;
    std::vector<std::uint64_t> where;
    for (std::size_t i = 0; i < n; ++i)
      if (set.tokens[i] != static_cast<std::uint64_t>(*set.eos)) {
        kept.push_back(set.tokens[i]);
        where.push_back(i);
      }
    for (std::size_t s = 0; s + L <= kept.size(); s += L) {
      Row r;
      r.tokens.assign(kept.begin() + static_cast<std::ptrdiff_t>(s), kept.begin() + static_cast<std::ptrdiff_t>(s + L));
      r.doc.assign(L, 0);
      r.offset = where[s];
      rows.push_back(std::move(r));
    }
    return rows;
  }
  if (set.doc_starts.empty())
    throw UsageError(std::string("the ") + rowFormName(form) + " row form needs document boundaries: give --eos or --offsets");
  std::vector<std::int64_t> doc_of(n);
  for (std::size_t d = 0; d < set.doc_starts.size(); ++d) {
    const std::size_t end = d + 1 < set.doc_starts.size() ? set.doc_starts[d + 1] : n;
    for (std::size_t i = set.doc_starts[d]; i < end; ++i) doc_of[i] = static_cast<std::int64_t>(d);
  }
  if (form == RowForm::Packed) {
    for (std::size_t s = 0; s + L <= n; s += L) {
      Row r;
      r.offset = s;
      for (std::size_t i = s; i < s + L; ++i) {
        r.tokens.push_back(set.tokens[i]);
        r.doc.push_back(doc_of[i]);
      }
      rows.push_back(std::move(r));
    }
    return rows;
  }
  // per-document: each document in consecutive pieces of at most L tokens; a piece of one token
  // has nothing to score and is dropped
  for (std::size_t d = 0; d < set.doc_starts.size(); ++d) {
    const std::size_t end = d + 1 < set.doc_starts.size() ? set.doc_starts[d + 1] : n;
    for (std::size_t s = set.doc_starts[d]; s < end; s += L) {
      const std::size_t e = std::min(end, s + L);
      if (e - s < 2) continue;
      Row r;
      r.offset = s;
      for (std::size_t i = s; i < e; ++i) r.tokens.push_back(set.tokens[i]);
      r.doc.assign(e - s, 0);
      rows.push_back(std::move(r));
    }
  }
  return rows;
}

Selection selectRows(std::size_t available, std::size_t n, SelectionMode mode, std::uint64_t seed, bool up_to, const std::string& name) {
  if (available == 0) throw UsageError("the token set yields no row of the requested length");
  if (n == 0) throw UsageError(name + " must be at least 1");
  if (up_to) n = std::min(n, available);  // "up to N sequences", as the historical panel
  if (n > available)
    throw UsageError(name + " " + std::to_string(n) + ": the token set yields only " + std::to_string(available) +
                     " rows of this length and form (shorter rows, more text, or " + (name.rfind("--", 0) == 0 ? "--up-to" : "/rows/up_to") +
                     " to score every row it has)");
  Selection s;
  s.mode = mode;
  s.seed = seed;
  if (mode == SelectionMode::First) {
    s.indices.resize(n);
    std::iota(s.indices.begin(), s.indices.end(), 0);
  } else {
    std::vector<std::size_t> all(available);
    std::iota(all.begin(), all.end(), 0);
    SplitMix64 rng(seed);
    for (std::size_t i = 0; i < n; ++i) std::swap(all[i], all[i + rng.below(available - i)]);  // partial Fisher-Yates
    s.indices.assign(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(n));
    std::sort(s.indices.begin(), s.indices.end());
  }
  return s;
}

void dropOutOfVocabulary(TokenSet& set, std::int64_t vocab) {
  std::vector<std::uint64_t> kept_before(set.doc_starts.size());  // kept tokens before each start
  std::vector<std::uint32_t> kept;
  kept.reserve(set.tokens.size());
  std::size_t d = 0;
  for (std::size_t i = 0; i < set.tokens.size(); ++i) {
    while (d < set.doc_starts.size() && set.doc_starts[d] == i) kept_before[d++] = kept.size();
    if (static_cast<std::int64_t>(set.tokens[i]) < vocab) kept.push_back(set.tokens[i]);
  }
  while (d < set.doc_starts.size()) kept_before[d++] = kept.size();
  std::vector<std::uint64_t> starts;
  for (std::uint64_t s : kept_before)
    if (s < kept.size() && (starts.empty() || starts.back() != s)) starts.push_back(s);
  set.dropped_out_of_vocab = static_cast<std::int64_t>(set.tokens.size() - kept.size());
  set.tokens = std::move(kept);
  set.doc_starts = std::move(starts);
}

void checkVocabulary(const TokenSet& set, std::int64_t vocab) {
  // an EOS the model cannot emit never occurs: the whole stream would silently become one document
  if (set.eos && (*set.eos < 0 || *set.eos >= vocab))
    throw UsageError(set.path + ": the document boundary --eos / /tokens/eos " + std::to_string(*set.eos) +
                     " is outside the model's vocabulary of " + std::to_string(vocab));
  for (std::size_t i = 0; i < set.tokens.size(); ++i)
    if (set.tokens[i] >= vocab)
      throw FormatError(set.path + ": token id " + std::to_string(set.tokens[i]) + " at position " + std::to_string(i) +
                        " is outside the model's vocabulary of " + std::to_string(vocab) +
                        " (wrong tokenizer revision or wrong --token-format?)");
}

}  // namespace omn::eval
