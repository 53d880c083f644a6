// Opening a checkpoint: format detection, then the matching reader fills a TensorIndex over the
// mapped file(s) and renders every non-tensor value (envelope, __metadata__) as JSON.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "omn/io/mapped_file.h"
#include "omn/io/tensor_index.h"

namespace omn::io {

struct OpenOptions {
  std::string state_key;  // where the state dict lives in an envelope ("model", "a/b"); empty: find it
};

struct Checkpoint {
  std::string path;
  std::string format;  // "torch-zip" | "safetensors" | "safetensors-sharded"
  std::vector<std::unique_ptr<MappedFile>> files;  // the tensors point into these maps
  TensorIndex index;
  nlohmann::json metadata = nlohmann::json::object();  // envelope without the state dict / __metadata__
  std::string state_key;  // where the state dict was found ("" = the top object)
  // Groups of tensor names that share one storage record (tied weights).
  std::vector<std::vector<std::string>> shared_storage;
};

// Throws FormatError naming the file and the place for anything that is not a readable checkpoint.
std::unique_ptr<Checkpoint> openCheckpoint(const std::string& path, const OpenOptions& options = {});

// Throws IntegrityError naming the file and what changed when any of ck.files is no longer the file
// it was when opened (size, mtime, inode, device): the run's weights may point into it.
void requireUnchanged(const Checkpoint& ck, const std::string& when);

// Whether two tensors of `ck` hold the same values bit for bit (sameBytes), reading contiguous ones
// through the file descriptors a few MiB at a time: no page of the mapping is touched, so comparing
// OMN-1's 540 MB head with its embedding does not add a gigabyte of mapped page cache to the RSS.
bool sameTensorBytes(const Checkpoint& ck, const TensorRef& a, const TensorRef& b);

// The shards of a sharded set (ck.files after the index), each hashed; `pinned` maps a shard's file
// name (as /weight_map writes it) to its expected digest: a mismatch is IntegrityError naming the
// shard, a name that is no shard of `ck` UsageError naming `where`. Empty for a single file.
struct ShardDigest {
  std::string path, sha256;
  bool verified = false;
};
std::vector<ShardDigest> hashShards(const Checkpoint& ck, const std::map<std::string, std::string>& pinned, const std::string& where);

// Fills ck.shared_storage from the storage keys of ck.index.
void groupSharedStorage(Checkpoint& ck);

}  // namespace omn::io
