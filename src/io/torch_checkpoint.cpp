#include "omn/io/torch_checkpoint.h"

#include <map>

#include "omn/errors.h"
#include "omn/io/pickle.h"
#include "omn/io/pickle_allowlist.h"
#include "omn/io/zip_reader.h"

namespace omn::io {
namespace {

using K = PyValue::Kind;

std::size_t tensorCount(const PyValue& d) {
  std::size_t n = 0;
  for (const auto& kv : d.dict) n += kv.second->kind == K::Tensor;
  return n;
}

bool isStateDict(const PyValue& v) {
  return v.kind == K::Dict && !v.dict.empty() && tensorCount(v) == v.dict.size();
}

// Where is the state dict? Returns the value and its key path ("" = top, "model", "a/b").
const PyValue* findStateDict(const PyValue& top, const std::string& wanted, std::string* key,
                             const std::string& where) {
  if (!wanted.empty()) {
    const PyValue* cur = &top;
    std::size_t start = 0;
    while (start <= wanted.size()) {
      const std::size_t slash = wanted.find('/', start);
      const std::string part = wanted.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
      const PyValue* next = cur->kind == K::Dict ? cur->get(part) : nullptr;
      if (!next) throw FormatError(where + ": --state-key '" + wanted + "': no key '" + part + "' in the envelope");
      cur = next;
      if (slash == std::string::npos) break;
      start = slash + 1;
    }
    if (cur->kind != K::Dict || tensorCount(*cur) == 0)
      throw FormatError(where + ": --state-key '" + wanted + "' names a value that holds no tensors");
    *key = wanted;
    return cur;
  }
  if (isStateDict(top)) {
    key->clear();
    return &top;
  }
  if (top.kind != K::Dict) throw FormatError(where + ": the pickled object is neither a state dict nor a dict holding one");
  // Candidates: dicts of tensors one or two levels down; the one with most tensors wins,
  // ties broken by the conventional names.
  static const char* preferred[] = {"state_dict", "model", "model_state_dict", "module", "ema"};
  auto rank = [](const std::string& k) {
    for (std::size_t i = 0; i < 5; ++i)
      if (k == preferred[i]) return i;
    return std::size_t{5};
  };
  const PyValue* best = nullptr;
  std::string best_key;
  auto consider = [&](const PyValue& v, const std::string& k) {
    if (!isStateDict(v)) return;
    const std::string leaf = k.substr(k.rfind('/') + 1);
    if (!best || tensorCount(v) > tensorCount(*best) ||
        (tensorCount(v) == tensorCount(*best) && rank(leaf) < rank(best_key.substr(best_key.rfind('/') + 1)))) {
      best = &v;
      best_key = k;
    }
  };
  for (const auto& [k, v] : top.dict) {
    if (k->kind != K::Str || v->kind != K::Dict) continue;
    consider(*v, k->s);
    for (const auto& [k2, v2] : v->dict)
      if (k2->kind == K::Str && v2->kind == K::Dict) consider(*v2, k->s + "/" + k2->s);
  }
  if (!best) {
    std::string keys;
    for (const auto& kv : top.dict) {
      if (keys.size() > 2000) {  // a message, not a dump: the first keys say enough
        keys += ", ... (" + std::to_string(top.dict.size()) + " keys)";
        break;
      }
      keys += (keys.empty() ? "" : ", ") + jsonText(*kv.first);
    }
    throw FormatError(where + ": no state dict (a dict of tensors) found in the envelope; top-level keys: [" + keys +
                      "]; name it with --state-key");
  }
  *key = best_key;
  return best;
}

// The archive's prefix: the first entry's directory (never assume a name), in an archive that is
// not TorchScript's.
std::string torchArchivePrefix(const ZipReader& zip, const std::string& path) {
  if (zip.entries().empty()) throw FormatError(path + ": empty zip archive, not a torch.save file");
  const std::string& first = zip.entries().front().name;
  const auto slash = first.find('/');
  if (slash == std::string::npos || slash == 0)
    throw FormatError(path + ": first zip entry '" + first + "' has no '<prefix>/' directory: not a torch.save archive");
  const std::string prefix = first.substr(0, slash + 1);
  if (zip.find(prefix + "constants.pkl") || zip.find(prefix + "code/"))
    throw FormatError(path + ": a TorchScript archive (torch.jit.save), not a torch.save state dict");
  return prefix;
}

// Whether the archive's byteorder record says "big" (no record: little-endian).
bool torchArchiveIsBigEndian(const ZipReader& zip, const std::string& prefix, const std::string& path) {
  const ZipEntry* bo = zip.find(prefix + "byteorder");
  if (!bo) return false;
  const std::string order(reinterpret_cast<const char*>(zip.dataChecked(*bo)), bo->size);
  if (order == "big") return true;
  if (order != "little")
    throw FormatError(path + ": record '" + bo->name + "' says \"" + order + "\", expected \"little\" or \"big\"");
  return false;
}

// BINPERSID's loader: ('storage', type, key, location, numel) resolved to the archive's record
// data/<key>, its size checked against the declaration; each key made once.
PyPtr loadTorchStorage(const PyValue& pid, std::uint64_t at, const ZipReader& zip, const std::string& prefix,
                       const std::string& where, std::map<std::string, PyPtr>& storages) {
  const std::string here = where + ": pickle byte " + std::to_string(at) + ": persistent id";
  if (pid.kind != K::Tuple || pid.items.size() != 5 || pid.items[0]->kind != K::Str || pid.items[0]->s != "storage")
    throw FormatError(here + ": expected ('storage', type, key, location, numel)");
  const PyValue &type = *pid.items[1], &key = *pid.items[2], &loc = *pid.items[3], &numel = *pid.items[4];
  if (type.kind != K::Global || key.kind != K::Str || loc.kind != K::Str || numel.kind != K::Int || numel.i < 0)
    throw FormatError(here + ": expected ('storage', <torch storage type>, str, str, int >= 0)");
  GlobalInfo gi;
  if (!lookupGlobal(type.s, &gi) || gi.kind != AllowedGlobal::StorageType)
    throw FormatError(here + ": '" + type.s + "' is not a storage type");
  if (!gi.supported) throw FormatError(here + ": storage type " + type.s + " is not supported by omn-audit");
  if (auto it = storages.find(key.s); it != storages.end()) return it->second;
  const ZipEntry* rec = zip.find(prefix + "data/" + key.s);
  if (!rec) throw FormatError(here + ": storage record '" + prefix + "data/" + key.s + "' is missing from the archive");
  const std::uint64_t item = dtypeSize(gi.dtype);
  if (static_cast<std::uint64_t>(numel.i) > UINT64_MAX / item || rec->size != static_cast<std::uint64_t>(numel.i) * item)
    throw FormatError(here + ": storage '" + key.s + "' declares " + std::to_string(numel.i) + " elements of " +
                      dtypeName(gi.dtype) + " (" + std::to_string(numel.i * item) + " bytes) but its record holds " +
                      std::to_string(rec->size) + " bytes");
  auto s = std::make_shared<PyStorage>();
  s->key = key.s;
  s->location = loc.s;
  s->dtype = gi.dtype;
  s->numel = static_cast<std::uint64_t>(numel.i);
  s->data = zip.data(*rec);
  s->file_offset = rec->data_offset;
  s->bytes = rec->size;
  auto v = std::make_shared<PyValue>();
  v->kind = K::Storage;
  v->storage = std::move(s);
  storages.emplace(key.s, v);
  return v;
}

// Every tensor of the state dict into the index (each view checked against its storage); the
// summary the metadata shows in the state dict's place: the tensors, the entries that are not.
nlohmann::json indexStateDict(Checkpoint& ck, const PyValue& sd, bool big_endian, const std::string& path) {
  std::size_t skipped = 0;
  for (const auto& [k, v] : sd.dict) {
    if (k->kind != K::Str) throw FormatError(path + ": state dict key " + jsonText(*k) + " is not a string");
    if (v->kind != K::Tensor) {
      ++skipped;
      continue;
    }
    const PyTensor& pt = *v->tensor;
    TensorRef t;
    t.name = k->s;
    t.dtype = pt.dtype;
    t.shape = pt.size;
    t.strides = pt.stride;
    t.storage_offset = pt.offset;
    t.storage_key = pt.storage->key;
    t.storage_data = pt.storage->data;
    t.storage_file_offset = pt.storage->file_offset;
    t.storage_bytes = pt.storage->bytes;
    t.big_endian = big_endian;
    checkViewBounds(t, pt.storage->bytes / dtypeSize(pt.dtype), path);
    ck.index.add(std::move(t));
  }
  nlohmann::json summary = {{"tensors", ck.index.size()}};
  if (skipped) summary["non_tensor_entries"] = skipped;
  for (const auto& [k, v] : sd.attrs)
    if (k->kind == K::Str && k->s == "_metadata" && v->kind == K::Dict) summary["module_metadata_entries"] = v->dict.size();
  return summary;
}

}  // namespace

void readTorchZip(Checkpoint& ck, const OpenOptions& options) {
  const MappedFile& file = *ck.files[0];
  const std::string& path = file.path();
  ZipReader zip(file);
  const std::string prefix = torchArchivePrefix(zip, path);
  const ZipEntry* pkl = zip.find(prefix + "data.pkl");
  if (!pkl) throw FormatError(path + ": no '" + prefix + "data.pkl' record: not a torch.save archive");
  const bool big_endian = torchArchiveIsBigEndian(zip, prefix, path);

  const std::string where = path + ":" + pkl->name;
  std::map<std::string, PyPtr> storages;
  PersistentLoad load = [&](const PyValue& pid, std::uint64_t at) { return loadTorchStorage(pid, at, zip, prefix, where, storages); };
  PyPtr top = unpickle(zip.dataChecked(*pkl), pkl->size, where, load);

  const PyValue* sd = findStateDict(*top, options.state_key, &ck.state_key, path);
  const nlohmann::json summary = indexStateDict(ck, *sd, big_endian, path);
  // the envelope as JSON, the state dict as its summary (never walked: it is the tensors above)
  const nlohmann::json state_dict_summary = {{"$state_dict", summary}};
  JsonRendering how;
  how.where = where;
  how.replace = sd;
  how.replacement = &state_dict_summary;
  ck.metadata = toJson(*top, how);
  ck.format = "torch-zip";
  groupSharedStorage(ck);
}

}  // namespace omn::io
