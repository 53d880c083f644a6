#include "omn/io/safetensors.h"

#include <algorithm>
#include <filesystem>
#include <set>

#include "omn/errors.h"
#include "omn/io/json_document.h"
#include "omn/json_pointer.h"

namespace omn::io {
namespace {

constexpr std::uint64_t kMaxHeader = 100'000'000;  // the reference implementation's limit

std::uint64_t le64(const std::uint8_t* p) {
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

// The header's length from the first 8 bytes, checked against the limit and the file's size.
std::uint64_t headerLength(const MappedFile& file) {
  const std::string& path = file.path();
  if (file.size() < 8) throw FormatError(path + ": " + std::to_string(file.size()) + " bytes is too short for safetensors");
  const std::uint64_t n = le64(file.data());
  if (n > kMaxHeader)
    throw FormatError(path + ": byte 0: safetensors header length " + std::to_string(n) + " exceeds the 100 MB limit");
  if (n > file.size() - 8)
    throw FormatError(path + ": byte 0: safetensors header length " + std::to_string(n) + " runs past the end of the file (" +
                      std::to_string(file.size()) + " bytes)");
  return n;
}

// The data buffer after the header: where it starts in the file and how many bytes it holds.
struct DataBuffer {
  const MappedFile& file;
  std::size_t file_index;
  std::uint64_t base, bytes;
};

// A tensor's [begin, end) in the data buffer, by name, for the coverage check.
struct Span {
  std::uint64_t begin, end;
  std::string name;
};

// __metadata__: an object of strings.
const nlohmann::json& checkedMetadata(const nlohmann::json& m, const std::string& where) {
  if (!m.is_object()) throw FormatError(where + ": expected an object of strings");
  for (auto it = m.begin(); it != m.end(); ++it)
    if (!it->is_string()) throw FormatError(where + "/" + it.key() + ": expected a string, got " + it->type_name());
  return m;
}

// /shape into t.shape; returns the element count.
std::uint64_t readShape(const nlohmann::json& shape, const std::string& where, TensorRef& t) {
  if (!shape.is_array()) throw FormatError(where + "/shape: expected an array of non-negative integers");
  std::uint64_t numel = 1;
  for (const auto& d : shape) {
    if (!d.is_number_unsigned()) throw FormatError(where + "/shape: expected an array of non-negative integers");
    const std::uint64_t v = d.get<std::uint64_t>();
    if (v > static_cast<std::uint64_t>(INT64_MAX) || __builtin_mul_overflow(numel, v, &numel))
      throw FormatError(where + "/shape: element count overflows");
    t.shape.push_back(static_cast<std::int64_t>(v));
  }
  return numel;
}

// /data_offsets: [begin, end) within the buffer, exactly numel·size bytes long.
std::pair<std::uint64_t, std::uint64_t> readDataOffsets(const nlohmann::json& off, const std::string& where, std::uint64_t numel,
                                                        DType dtype, std::uint64_t buffer) {
  if (!off.is_array() || off.size() != 2 || !off[0].is_number_unsigned() || !off[1].is_number_unsigned())
    throw FormatError(where + "/data_offsets: expected [begin, end] of non-negative integers");
  const std::uint64_t b = off[0].get<std::uint64_t>(), en = off[1].get<std::uint64_t>();
  std::uint64_t bytes;
  if (en < b) throw FormatError(where + "/data_offsets: end " + std::to_string(en) + " < begin " + std::to_string(b));
  if (__builtin_mul_overflow(numel, dtypeSize(dtype), &bytes) || en - b != bytes)
    throw FormatError(where + "/data_offsets: spans " + std::to_string(en - b) + " bytes, expected numel·size = " +
                      std::to_string(numel) + "·" + std::to_string(dtypeSize(dtype)));
  if (en > buffer)
    throw FormatError(where + "/data_offsets: end " + std::to_string(en) + " is past the data buffer (" +
                      std::to_string(buffer) + " bytes)");
  return {b, en};
}

// One tensor's header entry {dtype, shape, data_offsets} as a reference into the data buffer; its
// span is added to `spans`.
TensorRef readTensorEntry(const nlohmann::json& e, const std::string& name, const std::string& where, const DataBuffer& data,
                          std::vector<Span>& spans) {
  if (!e.is_object() || !e.contains("dtype") || !e.contains("shape") || !e.contains("data_offsets"))
    throw FormatError(where + ": expected {\"dtype\", \"shape\", \"data_offsets\"}");
  TensorRef t;
  t.name = name;
  if (!e["dtype"].is_string() || !dtypeFromName(e["dtype"].get<std::string>(), &t.dtype))
    throw FormatError(where + "/dtype: unsupported dtype " + e["dtype"].dump() +
                      " (expected BF16, F16, F32, F64, I64, I32, I16, I8, U8 or BOOL)");
  const std::uint64_t numel = readShape(e["shape"], where, t);
  const auto [b, en] = readDataOffsets(e["data_offsets"], where, numel, t.dtype, data.bytes);
  t.strides.assign(t.shape.size(), 1);
  for (std::size_t i = t.shape.size(); i-- > 1;) t.strides[i - 1] = t.strides[i] * std::max<std::int64_t>(t.shape[i], 1);
  t.storage_key = std::to_string(data.file_index) + ":" + name;
  t.storage_file_offset = data.base + b;
  t.storage_bytes = en - b;
  t.storage_data = data.file.data() + data.base + b;
  t.file_index = data.file_index;
  spans.push_back({b, en, name});
  return t;
}

// The reference's rule: sorted by offset, each tensor starts where the previous ended, and the
// last one ends exactly at the end of the file.
void requireExactCover(const std::string& path, std::vector<Span>& spans, std::uint64_t buffer) {
  std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  std::uint64_t expect = 0;
  for (const auto& s : spans) {
    if (s.begin != expect)
      throw FormatError(path + ": header /" + s.name + "/data_offsets: begins at " + std::to_string(s.begin) +
                        ", expected " + std::to_string(expect) + (s.begin < expect ? " (overlaps the previous tensor)" : " (gap)"));
    expect = s.end;
  }
  if (expect != buffer)
    throw FormatError(path + ": tensors cover " + std::to_string(expect) + " bytes of the " + std::to_string(buffer) +
                      "-byte data buffer; expected the buffer to be covered exactly");
}

}  // namespace

nlohmann::json parseSafetensors(const MappedFile& file, std::size_t file_index, TensorIndex& index) {
  using nlohmann::json;
  const std::string& path = file.path();
  const std::uint64_t n = headerLength(file);
  // one reader for every JSON: the nesting bounded before anything recursive runs
  const json header = parseJson(std::string_view(reinterpret_cast<const char*>(file.data()) + 8, n),
                                path + ": safetensors header (bytes 8.." + std::to_string(8 + n) + ")");
  if (!header.is_object()) throw FormatError(path + ": safetensors header is not a JSON object");
  const DataBuffer data{file, file_index, 8 + n, file.size() - (8 + n)};
  json metadata = json::object();
  std::vector<Span> spans;
  std::vector<TensorRef> refs;
  for (auto it = header.begin(); it != header.end(); ++it) {
    const std::string& name = it.key();
    const std::string where = path + ": header /" + escapePointerToken(name);
    if (name == "__metadata__") {
      metadata = checkedMetadata(*it, where);
      continue;
    }
    refs.push_back(readTensorEntry(*it, name, where, data, spans));
  }
  requireExactCover(path, spans, data.bytes);
  for (auto& t : refs) index.add(std::move(t));
  return metadata;
}

void readSafetensors(Checkpoint& ck) {
  ck.metadata = {{"__metadata__", parseSafetensors(*ck.files[0], 0, ck.index)}};
  ck.format = "safetensors";
}

void readSafetensorsIndex(Checkpoint& ck) {
  using nlohmann::json;
  const MappedFile& idx = *ck.files[0];
  json j = parseJson(std::string_view(reinterpret_cast<const char*>(idx.data()), idx.size()), ck.path);  // depth-bounded: the one reader
  if (!j.is_object() || !j.contains("weight_map") || !j["weight_map"].is_object())
    throw FormatError(ck.path + ": /weight_map: expected an object mapping tensor names to shard files");
  const auto dir = std::filesystem::path(ck.path).parent_path();
  std::map<std::string, std::size_t> shard_of_file;
  for (auto it = j["weight_map"].begin(); it != j["weight_map"].end(); ++it) {
    if (!it->is_string()) throw FormatError(ck.path + ": /weight_map/" + it.key() + ": expected a file name");
    const std::string f = it->get<std::string>();
    if (f.empty() || f.find('/') != std::string::npos || f == "." || f == "..")
      throw FormatError(ck.path + ": /weight_map/" + it.key() + ": shard \"" + f + "\" must be a plain file name beside the index");
    if (!shard_of_file.count(f)) shard_of_file.emplace(f, 0);
  }
  // Tensor files in index order: file_index 0 is the index itself, shards from 1.
  TensorIndex all;
  json shards = json::array();
  for (auto& [f, fi] : shard_of_file) {
    fi = ck.files.size();
    ck.files.push_back(std::make_unique<MappedFile>((dir / f).string()));
    TensorIndex part;
    json meta = parseSafetensors(*ck.files.back(), fi, part);
    shards.push_back({{"file", f}, {"tensors", part.size()}, {"__metadata__", meta}});
    for (const auto& t : part.tensors()) {
      const json* want = nullptr;
      if (j["weight_map"].contains(t.name)) want = &j["weight_map"][t.name];
      if (!want || want->get<std::string>() != f)
        throw FormatError(ck.path + ": shard " + f + " holds tensor '" + t.name + "' which /weight_map " +
                          (want ? "assigns to " + want->get<std::string>() : std::string("does not list")));
      all.add(t);
    }
  }
  for (auto it = j["weight_map"].begin(); it != j["weight_map"].end(); ++it)
    if (!all.find(it.key()))
      throw FormatError(ck.path + ": /weight_map/" + it.key() + ": tensor not found in shard " + it->get<std::string>());
  ck.index = std::move(all);
  ck.metadata = {{"metadata", j.value("metadata", json::object())}, {"shards", shards}};
  ck.format = "safetensors-sharded";
}

}  // namespace omn::io
