// A restricted unpickler: a small virtual machine for the protocol-2 opcodes torch.save emits,
// building plain values. It never imports or calls anything: a GLOBAL must be in the allowlist
// (pickle_allowlist.h) and a REDUCE may only apply the allowlisted constructors below.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "omn/io/tensor_index.h"

namespace omn::io {

struct PyValue;
using PyPtr = std::shared_ptr<PyValue>;

// A storage record resolved by the caller's persistent-load callback.
struct PyStorage {
  std::string key;       // record name under <prefix>/data/
  std::string location;  // "cpu", "cuda:0", ...
  DType dtype = DType::U8;
  std::uint64_t numel = 0;  // elements of `dtype`
  const std::uint8_t* data = nullptr;
  std::uint64_t file_offset = 0;
  std::uint64_t bytes = 0;
};

struct PyTensor {
  std::shared_ptr<PyStorage> storage;
  DType dtype = DType::U8;
  std::int64_t offset = 0;
  std::vector<std::int64_t> size, stride;
  bool parameter = false;
};

struct PyValue {
  enum class Kind { None, Bool, Int, Float, Str, Bytes, List, Tuple, Dict, Set, Global, Storage, Tensor };
  Kind kind = Kind::None;
  bool b = false;
  std::int64_t i = 0;
  double f = 0;
  std::string s;                                // Str, Bytes, Global ("module.name")
  std::vector<PyPtr> items;                     // List, Tuple, Set
  std::vector<std::pair<PyPtr, PyPtr>> dict;    // Dict, in insertion order
  std::vector<std::pair<PyPtr, PyPtr>> attrs;   // Dict: state set by BUILD (a state dict's _metadata)
  bool ordered = false;                         // Dict made by collections.OrderedDict
  std::shared_ptr<PyStorage> storage;           // Storage
  std::shared_ptr<PyTensor> tensor;             // Tensor

  PyValue() = default;
  PyValue(const PyValue&) = default;
  ~PyValue();  // iterative: a deeply nested value cannot overflow the stack when it dies
  bool isStr() const { return kind == Kind::Str; }
  const PyValue* get(const std::string& key) const;  // Dict lookup by string key, nullptr if absent
};

// Resolves a BINPERSID id (a tuple) to a Storage value; `offset` is the opcode's byte offset.
using PersistentLoad = std::function<PyPtr(const PyValue& pid, std::uint64_t offset)>;

// The work the unpickler may do, bounded by the input: the values, stack slots, marks and memo
// entries a pickle of `len` bytes builds may take at most kUnpickleBudgetFloor +
// kUnpickleBytesPerByte * len bytes (torch.save's own pickles need about 40 bytes per byte: one
// value per 7 bytes), and at most kMaxStack values and marks may wait on the stack at once.
constexpr std::uint64_t kUnpickleBudgetFloor = std::uint64_t{64} << 20;
constexpr std::uint64_t kUnpickleBytesPerByte = 80;
constexpr std::size_t kMaxStack = 1'000'000;
inline std::uint64_t unpickleBudget(std::uint64_t len) { return kUnpickleBudgetFloor + kUnpickleBytesPerByte * len; }

// Runs the pickle in data[0, len). `where` names the file and record in every error message.
// Throws FormatError naming the opcode or global and its byte offset on anything outside the
// allowed set, on truncation, on malformed arguments and past the budget above; never executes
// anything.
PyPtr unpickle(const std::uint8_t* data, std::size_t len, const std::string& where, const PersistentLoad& load);

// How toJson renders: the depth it accepts, the text it may produce, and one value it shows as
// a given JSON instead (the state dict, shown as its summary and never walked).
struct JsonRendering {
  std::string where;                 // names the file in errors
  int max_depth = 64;                // deeper: FormatError naming the JSON pointer
  std::size_t max_chars = 1u << 20;  // about this much JSON text; past it values become {"$omitted": ...}
  const PyValue* replace = nullptr;
  const nlohmann::json* replacement = nullptr;
};

// Renders a value as JSON: tensors as {"$tensor": {dtype, shape}}, bytes as {"$bytes": length},
// non-finite floats as null, dict keys as strings (other keys as their JSON text). A value met a
// second time (a shared reference: the pickle memo) is rendered once, then as {"$ref": "<JSON
// pointer of the first>"}, so a list doubled 40 times costs 40 entries, not 2^40. Past
// `max_chars` of text, containers and strings become {"$omitted": {"type", "length"}}: the work
// and the result are bounded whatever the pickle.
nlohmann::json toJson(const PyValue& v, const JsonRendering& how = {});

// A dict key or other value as one short line of JSON text (at most ~200 characters), for messages.
std::string jsonText(const PyValue& v);

}  // namespace omn::io
