#include "omn/io/checkpoint.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <vector>

#include <filesystem>

#include "omn/errors.h"
#include "omn/io/sha256.h"
#include "omn/io/safetensors.h"
#include "omn/io/torch_checkpoint.h"

namespace omn::io {

namespace {
bool endsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}
}  // namespace

std::unique_ptr<Checkpoint> openCheckpoint(const std::string& path, const OpenOptions& options) {
  auto ck = std::make_unique<Checkpoint>();
  ck->path = path;
  ck->files.push_back(std::make_unique<MappedFile>(path));
  const MappedFile& f = *ck->files[0];
  const std::uint8_t* d = f.data();
  const std::size_t n = f.size();
  if (n >= 4 && std::memcmp(d, "PK\x03\x04", 4) == 0) {
    readTorchZip(*ck, options);
  } else if (endsWith(path, ".index.json")) {
    readSafetensorsIndex(*ck);
  } else if (endsWith(path, ".safetensors") || (n >= 9 && d[8] == '{')) {
    readSafetensors(*ck);
  } else if (n >= 2 && d[0] == 0x80 && d[1] <= 5) {
    throw FormatError(path + ": a legacy (pre-1.6, non-zip) torch.save file; re-save it with a current PyTorch "
                      "(torch.save(torch.load(f), g)) in a trusted environment");
  } else {
    throw FormatError(path + ": unrecognised format: expected a torch.save zip (starts with 'PK'), a safetensors "
                      "file (8-byte header length, then '{') or a *.safetensors.index.json");
  }
  if (!options.state_key.empty() && ck->format != "torch-zip")
    throw UsageError("--state-key applies to torch.save files only; " + path + " is " + ck->format);
  return ck;
}

void requireUnchanged(const Checkpoint& ck, const std::string& when) {
  for (std::size_t i = 0; i < ck.files.size(); ++i) requireUnchanged(*ck.files[i], i == 0 ? "checkpoint" : "checkpoint shard", when);
}

std::vector<ShardDigest> hashShards(const Checkpoint& ck, const std::map<std::string, std::string>& pinned, const std::string& where) {
  std::map<std::string, std::string> left = pinned;  // what no shard has claimed yet
  std::vector<ShardDigest> out;
  for (std::size_t i = 1; i < ck.files.size(); ++i) {
    const std::string& path = ck.files[i]->path();
    const std::string name = std::filesystem::path(path).filename().string();
    ShardDigest d{path, sha256File(path), false};
    if (const auto it = left.find(name); it != left.end()) {
      requireSha256(path, it->second, d.sha256);
      d.verified = true;
      left.erase(it);
    }
    out.push_back(std::move(d));
  }
  if (!left.empty())
    throw UsageError(where + "/" + left.begin()->first + ": not a shard of " + ck.path + " (its /weight_map names no such file)");
  return out;
}

bool sameTensorBytes(const Checkpoint& ck, const TensorRef& a, const TensorRef& b) {
  if (a.dtype != b.dtype || a.shape != b.shape) return false;
  if (!a.contiguous() || !b.contiguous() || a.big_endian != b.big_endian || a.file_index >= ck.files.size() ||
      b.file_index >= ck.files.size() || ck.files[a.file_index]->data() + a.storage_file_offset != a.storage_data ||
      ck.files[b.file_index]->data() + b.storage_file_offset != b.storage_data)
    return sameBytes(a, b);  // views, byte orders, storage not at its file offset: through the mapping
  const std::size_t item = a.itemSize();
  std::uint64_t left = static_cast<std::uint64_t>(a.numel()) * item;
  std::uint64_t at_a = a.storage_file_offset + static_cast<std::uint64_t>(a.storage_offset) * item;
  std::uint64_t at_b = b.storage_file_offset + static_cast<std::uint64_t>(b.storage_offset) * item;
  constexpr std::size_t kPiece = kStreamPiece / 2;  // two buffers: together one piece
  std::vector<std::uint8_t> pa(static_cast<std::size_t>(std::min<std::uint64_t>(left, kPiece))), pb(pa.size());
  while (left > 0) {
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(left, kPiece));
    ck.files[a.file_index]->read(at_a, n, pa.data());
    ck.files[b.file_index]->read(at_b, n, pb.data());
    if (std::memcmp(pa.data(), pb.data(), n) != 0) return false;
    at_a += n, at_b += n, left -= n;
  }
  return true;
}

void groupSharedStorage(Checkpoint& ck) {
  std::map<std::string, std::vector<std::string>> by_key;
  for (const auto& t : ck.index.tensors()) by_key[t.storage_key].push_back(t.name);
  ck.shared_storage.clear();
  for (auto& [k, names] : by_key)
    if (names.size() > 1) ck.shared_storage.push_back(std::move(names));
}

}  // namespace omn::io
