#include "omn/io/checkpoint_writer.h"

#include <limits>

#include "omn/errors.h"
#include "omn/io/zip_reader.h"

namespace omn::io {
namespace {

// --- the pickle: protocol 2, the opcodes torch.save itself emits ---------------------------------
class Pickler {
 public:
  std::string out{"\x80\x02", 2};  // PROTO 2

  void op(char c) { out.push_back(c); }
  void u32(std::uint32_t v) {
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
  }
  void str(const std::string& s) {
    if (s.size() > std::numeric_limits<std::uint32_t>::max()) throw UsageError("checkpoint: a string longer than 4 GiB");
    op('X');  // BINUNICODE
    u32(static_cast<std::uint32_t>(s.size()));
    out += s;
  }
  void global(const std::string& module, const std::string& name) { out += "c" + module + "\n" + name + "\n"; }
  void integer(std::int64_t v) {
    if (v >= 0 && v < 256) {
      op('K');  // BININT1
      out.push_back(static_cast<char>(v));
    } else if (v >= std::numeric_limits<std::int32_t>::min() && v <= std::numeric_limits<std::int32_t>::max()) {
      op('J');  // BININT
      u32(static_cast<std::uint32_t>(static_cast<std::int32_t>(v)));
    } else {
      op('\x8a');  // LONG1: 8 bytes two's complement, little-endian
      out.push_back(8);
      for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((static_cast<std::uint64_t>(v) >> (8 * i)) & 0xFF));
    }
  }
  void tuple(const std::vector<std::int64_t>& v) {
    op('(');  // MARK
    for (std::int64_t x : v) integer(x);
    op('t');  // TUPLE
  }
  void value(const nlohmann::json& j, const std::string& pointer) {
    switch (j.type()) {
      case nlohmann::json::value_t::null: op('N'); return;
      case nlohmann::json::value_t::boolean: op(j.get<bool>() ? '\x88' : '\x89'); return;
      case nlohmann::json::value_t::number_integer: integer(j.get<std::int64_t>()); return;
      case nlohmann::json::value_t::number_unsigned:
        if (j.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
          throw UsageError("checkpoint envelope " + pointer + ": integer beyond int64");
        integer(j.get<std::int64_t>());
        return;
      case nlohmann::json::value_t::string: str(j.get<std::string>()); return;
      case nlohmann::json::value_t::array:
        op(']');  // EMPTY_LIST
        if (!j.empty()) {
          op('(');
          for (std::size_t i = 0; i < j.size(); ++i) value(j[i], pointer + "/" + std::to_string(i));
          op('e');  // APPENDS
        }
        return;
      case nlohmann::json::value_t::object:
        op('}');  // EMPTY_DICT
        if (!j.empty()) {
          op('(');
          for (const auto& [k, v] : j.items()) {
            str(k);
            value(v, pointer + "/" + k);
          }
          op('u');  // SETITEMS
        }
        return;
      default:
        throw UsageError("checkpoint envelope " + pointer +
                         ": a floating-point value (PyTorch 1.13's weights_only loader cannot read one; store it as text)");
    }
  }
  // torch._utils._rebuild_tensor_v2(storage, 0, size, stride, False, OrderedDict())
  void tensor(const TensorRecord& t, const std::string& key) {
    static const char* const storage_type[] = {"BFloat16Storage", "HalfStorage", "FloatStorage", "DoubleStorage",
                                               "LongStorage",     "IntStorage",  "ShortStorage", "CharStorage",
                                               "ByteStorage",     "BoolStorage"};
    global("torch._utils", "_rebuild_tensor_v2");
    op('(');
    op('(');  // the persistent id: ('storage', torch.XStorage, key, 'cpu', numel)
    str("storage");
    global("torch", storage_type[static_cast<int>(t.dtype)]);
    str(key);
    str("cpu");
    std::int64_t numel = 1;
    for (std::int64_t d : t.shape) numel *= d;
    integer(numel);
    op('t');
    op('Q');  // BINPERSID
    integer(0);
    tuple(t.shape);
    std::vector<std::int64_t> stride(t.shape.size(), 1);
    for (std::size_t i = t.shape.size(); i-- > 1;) stride[i - 1] = stride[i] * t.shape[i];
    tuple(stride);
    op('\x89');  // requires_grad False
    global("collections", "OrderedDict");
    op(')');  // EMPTY_TUPLE
    op('R');  // REDUCE: OrderedDict()
    op('t');
    op('R');
  }
};

// --- the zip: stored records, data aligned to 64 bytes as PyTorch's writer aligns them -----------
class ZipWriter {
 public:
  void add(const std::string& name, const void* data, std::size_t size) {
    const std::uint64_t header = out_.size();
    const std::size_t base = header + 30 + name.size() + 4;  // + the padding field's own header
    const std::size_t pad = (64 - base % 64) % 64;
    const std::uint32_t crc = crc32(static_cast<const std::uint8_t*>(data), size);
    le32(0x04034b50);
    le16(20), le16(0), le16(0), le16(0), le16(0);  // version, flags, stored, time, date
    le32(crc), le32(check(size)), le32(check(size));
    le16(static_cast<std::uint16_t>(name.size())), le16(static_cast<std::uint16_t>(pad + 4));
    out_ += name;
    le16(0x4246), le16(static_cast<std::uint16_t>(pad));  // "FB": PyTorch's padding field
    out_.append(pad, 'Z');
    out_.append(static_cast<const char*>(data), size);
    entries_.push_back({name, crc, size, header});
    check(out_.size());
  }
  std::string finish() {
    const std::uint64_t cd = out_.size();
    for (const auto& e : entries_) {
      le32(0x02014b50);
      le16(20), le16(20), le16(0), le16(0), le16(0), le16(0);
      le32(e.crc), le32(check(e.size)), le32(check(e.size));
      le16(static_cast<std::uint16_t>(e.name.size())), le16(0), le16(0), le16(0), le16(0);
      le32(0), le32(check(e.offset));
      out_ += e.name;
    }
    const std::uint64_t cd_size = out_.size() - cd;
    le32(0x06054b50);
    le16(0), le16(0), le16(static_cast<std::uint16_t>(entries_.size())), le16(static_cast<std::uint16_t>(entries_.size()));
    le32(check(cd_size)), le32(check(cd)), le16(0);
    return std::move(out_);
  }

 private:
  struct Entry {
    std::string name;
    std::uint32_t crc;
    std::uint64_t size, offset;
  };
  static std::uint32_t check(std::uint64_t v) {
    if (v >= 0xFFFFFFFFull) throw UsageError("checkpoint: archives past 4 GiB need ZIP64, which this writer does not write");
    return static_cast<std::uint32_t>(v);
  }
  void le16(std::uint16_t v) { out_.append({static_cast<char>(v & 0xFF), static_cast<char>(v >> 8)}); }
  void le32(std::uint32_t v) {
    for (int i = 0; i < 4; ++i) out_.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
  }
  std::string out_;
  std::vector<Entry> entries_;
};

}  // namespace

std::string torchCheckpointBytes(const std::vector<TensorRecord>& tensors, const nlohmann::json& envelope,
                                 const std::string& state_key, const std::string& archive_name) {
  if (!envelope.is_object()) throw UsageError("checkpoint envelope: expected an object");
  if (envelope.contains(state_key)) throw UsageError("checkpoint envelope: '" + state_key + "' is the state dict's key");
  Pickler p;
  p.op('}');
  p.op('(');
  p.str(state_key);
  p.global("collections", "OrderedDict");
  p.op(')');
  p.op('R');
  if (!tensors.empty()) {
    p.op('(');
    for (std::size_t i = 0; i < tensors.size(); ++i) {
      const TensorRecord& t = tensors[i];
      std::int64_t numel = 1;
      for (std::int64_t d : t.shape) {
        if (d < 0) throw UsageError("checkpoint: tensor '" + t.name + "' has a negative dimension");
        numel *= d;
      }
      if (static_cast<std::size_t>(numel) * dtypeSize(t.dtype) != t.bytes)
        throw UsageError("checkpoint: tensor '" + t.name + "' holds " + std::to_string(t.bytes) + " bytes, its shape " +
                         shapeString(t.shape) + " needs " + std::to_string(numel * static_cast<std::int64_t>(dtypeSize(t.dtype))));
      p.str(t.name);
      p.tensor(t, std::to_string(i));
    }
    p.op('u');
  }
  for (const auto& [k, v] : envelope.items()) {
    p.str(k);
    p.value(v, "/" + k);
  }
  p.op('u');
  p.op('.');

  ZipWriter z;
  const std::string dir = archive_name + "/";
  z.add(dir + "data.pkl", p.out.data(), p.out.size());
  for (std::size_t i = 0; i < tensors.size(); ++i) z.add(dir + "data/" + std::to_string(i), tensors[i].data, tensors[i].bytes);
  z.add(dir + "version", "3\n", 2);
  return z.finish();
}

}  // namespace omn::io
