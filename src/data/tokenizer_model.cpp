#include "omn/data/tokenizer_model.h"

#include <cstdint>

#include "omn/errors.h"

namespace omn::data {

namespace {

constexpr std::uint32_t kTrainerSpec = 2;  // ModelProto.trainer_spec
constexpr std::uint32_t kNumThreads = 16;  // TrainerSpec.num_threads

struct ProtoReader {
  const std::string& s;
  std::size_t pos = 0;

  std::uint64_t varint() {
    std::uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos >= s.size()) throw FormatError("tokenizer model: a varint runs past the end at byte " + std::to_string(pos));
      const auto b = static_cast<std::uint8_t>(s[pos++]);
      v |= static_cast<std::uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
    }
    throw FormatError("tokenizer model: a varint longer than 10 bytes at byte " + std::to_string(pos));
  }
  // Skips the value of a field of wire type `type`; returns [begin, end) of a length-delimited payload.
  std::pair<std::size_t, std::size_t> skip(std::uint32_t type) {
    std::size_t n = 0;
    switch (type) {
      case 0: varint(); return {pos, pos};
      case 1: n = 8; break;
      case 5: n = 4; break;
      case 2: {
        const std::uint64_t len = varint();
        if (len > s.size() - pos) throw FormatError("tokenizer model: a field of " + std::to_string(len) + " bytes runs past the end at byte " + std::to_string(pos));
        n = static_cast<std::size_t>(len);
        break;
      }
      default: throw FormatError("tokenizer model: wire type " + std::to_string(type) + " at byte " + std::to_string(pos) + " (expected 0, 1, 2 or 5)");
    }
    if (n > s.size() - pos) throw FormatError("tokenizer model: a field runs past the end at byte " + std::to_string(pos));
    const std::size_t begin = pos;
    pos += n;
    return {begin, pos};
  }
};

void putVarint(std::string& out, std::uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

// `msg` without every occurrence of field `drop` (any wire type).
std::string withoutField(const std::string& msg, std::uint32_t drop) {
  std::string out;
  ProtoReader r{msg};
  while (r.pos < msg.size()) {
    const std::size_t start = r.pos;
    const std::uint64_t key = r.varint();
    r.skip(static_cast<std::uint32_t>(key & 7));
    if ((key >> 3) != drop) out.append(msg, start, r.pos - start);
  }
  return out;
}

}  // namespace

std::string withoutThreadCount(const std::string& model) {
  std::string out;
  ProtoReader r{model};
  while (r.pos < model.size()) {
    const std::size_t start = r.pos;
    const std::uint64_t key = r.varint();
    const std::size_t value_at = r.pos;
    const auto [begin, end] = r.skip(static_cast<std::uint32_t>(key & 7));
    if ((key >> 3) == kTrainerSpec && (key & 7) == 2) {
      const std::string spec = withoutField(model.substr(begin, end - begin), kNumThreads);
      out.append(model, start, value_at - start);  // the key
      putVarint(out, spec.size());
      out += spec;
    } else {
      out.append(model, start, r.pos - start);
    }
  }
  return out;
}

}  // namespace omn::data
