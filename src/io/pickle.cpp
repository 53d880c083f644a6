// The restricted pickle VM. Each opcode is one case; the allowlisted constructors are applied
// in reduce(). Nothing here imports, looks up attributes or calls code named by the input.
#include "omn/io/pickle.h"

#include <cmath>
#include <cstring>
#include <string_view>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "omn/errors.h"
#include "omn/io/pickle_allowlist.h"
#include "pickle_graph.h"

namespace omn::io {

namespace {

using detail::forEachChild;
using detail::hasCycle;
using detail::make;

using K = PyValue::Kind;

const char* opName(std::uint8_t op) {
  switch (op) {
    case 0x93: return "STACK_GLOBAL";
    case 'i': return "INST";
    case 'o': return "OBJ";
    case 0x82: return "EXT1";
    case 0x83: return "EXT2";
    case 0x84: return "EXT4";
    case 'R': return "REDUCE";
    case 0x81: return "NEWOBJ";
    case 0x92: return "NEWOBJ_EX";
    case 'P': return "PERSID";
    case 'c': return "GLOBAL";
    case 0x95: return "FRAME";
    case 'B': return "BINBYTES";
    case 'C': return "SHORT_BINBYTES";
    case 'S': return "STRING";
    case 'V': return "UNICODE";
    case 'I': return "INT";
    case 'L': return "LONG";
    case 'F': return "FLOAT";
    default: return nullptr;
  }
}

// What a value costs in memory, for the budget: the PyValue with its shared_ptr control block
// and allocator header, and one owning pointer (a stack slot or a container item).
constexpr std::uint64_t kValueCost = sizeof(PyValue) + 32;
constexpr std::uint64_t kSlotCost = sizeof(PyPtr);
constexpr std::uint64_t kMemoCost = 64;  // an unordered_map node

class Machine {
 public:
  // `containers` receives every container the machine makes (unpickle() breaks their cycles)
  Machine(const std::uint8_t* d, std::size_t n, const std::string& where, const PersistentLoad& load,
          std::vector<PyPtr>& containers)
      : d_(d), n_(n), where_(where), load_(load), containers_(containers), budget_(unpickleBudget(n)) {}

  PyPtr run();

 private:
  [[noreturn]] void fail(std::uint64_t at, const std::string& what) const {
    throw FormatError(where_ + ": pickle byte " + std::to_string(at) + ": " + what);
  }
  const std::uint8_t* take(std::size_t k) {
    if (n_ - p_ < k) fail(op_at_, "truncated: opcode needs " + std::to_string(k) + " more bytes, " +
                                      std::to_string(n_ - p_) + " left");
    const std::uint8_t* r = d_ + p_;
    p_ += k;
    return r;
  }
  std::uint32_t le(std::size_t k) {
    const std::uint8_t* b = take(k);
    std::uint32_t v = 0;
    for (std::size_t i = 0; i < k; ++i) v |= static_cast<std::uint32_t>(b[i]) << (8 * i);
    return v;
  }
  std::string line() {
    const void* nl = std::memchr(d_ + p_, '\n', n_ - p_);
    if (!nl) fail(op_at_, "truncated: GLOBAL name without a newline");
    const std::size_t len = static_cast<const std::uint8_t*>(nl) - (d_ + p_);
    std::string s(reinterpret_cast<const char*>(d_ + p_), len);
    p_ += len + 1;
    return s;
  }
  // Every value, slot, mark and memo entry is charged before it is made: a pickle may build at
  // most unpickleBudget(n) bytes, so a few hundred bytes cannot ask for gigabytes.
  void charge(std::uint64_t bytes) {
    charged_ += bytes;
    if (charged_ > budget_)
      fail(op_at_, "the pickle builds more than " + std::to_string(budget_ >> 20) + " MiB of values from " + std::to_string(n_) +
                       " bytes (the limit is " + std::to_string(kUnpickleBudgetFloor >> 20) + " MiB + " +
                       std::to_string(kUnpickleBytesPerByte) + " bytes per pickle byte, twice what torch.save's pickles need): "
                       "refused as a size bomb");
  }
  PyPtr mk(K kind) {
    charge(kValueCost);
    return make(kind, containers_);
  }
  void room() const {
    if (stack_.size() + marks_.size() >= kMaxStack)
      fail(op_at_, "more than " + std::to_string(kMaxStack) + " values and marks wait on the pickle stack (torch.save writes "
                       "lists and dicts in batches of 1,000): refused as a size bomb");
  }
  void push(PyPtr v) {
    room();
    charge(kSlotCost);
    stack_.push_back(std::move(v));
  }
  PyPtr pop() {
    if (stack_.empty() || (!marks_.empty() && stack_.size() <= marks_.back()))
      fail(op_at_, "stack underflow");
    PyPtr v = std::move(stack_.back());
    stack_.pop_back();
    return v;
  }
  PyPtr& top() {
    if (stack_.empty()) fail(op_at_, "stack underflow");
    return stack_.back();
  }
  std::vector<PyPtr> popMark() {
    if (marks_.empty()) fail(op_at_, "no MARK on the stack");
    const std::size_t m = marks_.back();
    marks_.pop_back();
    charge(kSlotCost * (stack_.size() - m));
    std::vector<PyPtr> items(std::make_move_iterator(stack_.begin() + static_cast<std::ptrdiff_t>(m)),
                             std::make_move_iterator(stack_.end()));
    stack_.resize(m);
    return items;
  }
  void setItems(PyValue& dict, std::vector<PyPtr>& kv) {
    if (dict.kind != K::Dict) fail(op_at_, "SETITEM(S) on a value that is not a dict");
    if (kv.size() % 2) fail(op_at_, "SETITEMS with an odd number of values");
    // A string key set again replaces its value, found through an index: a scan per key made a
    // dict of n keys cost n^2 (a hang for a few MB of pickle). Dicts live until the machine ends
    // (containers_), so their addresses and their keys' strings stay valid.
    auto& index = key_index_[&dict];
    for (std::size_t i = 0; i < kv.size(); i += 2) {
      if (kv[i]->kind == K::Str) {
        const auto [it, fresh] = index.emplace(std::string_view(kv[i]->s), dict.dict.size());
        if (!fresh) {
          dict.dict[it->second].second = kv[i + 1];
          continue;
        }
        charge(kMemoCost);
      }
      charge(2 * kSlotCost);
      dict.dict.emplace_back(kv[i], kv[i + 1]);
    }
  }
  // the opcode families run() dispatches to; each says whether the opcode was one of its own
  bool protocolOrCall(std::uint8_t op);
  bool memoOp(std::uint8_t op);
  bool containerOp(std::uint8_t op);
  bool scalarOp(std::uint8_t op);
  void build();
  PyPtr long1();
  PyPtr stop();
  [[noreturn]] void refuseOpcode(std::uint8_t op);
  PyPtr reduce(const PyValue& callable, const PyValue& args, const char* how);
  PyPtr rebuildTensor(const std::vector<PyPtr>& a, bool v3);
  std::vector<std::int64_t> intTuple(const PyValue& v, const char* what);

  const std::uint8_t* d_;
  std::size_t n_, p_ = 0;
  std::uint64_t op_at_ = 0;
  const std::string& where_;
  const PersistentLoad& load_;
  std::vector<PyPtr>& containers_;
  std::vector<PyPtr> stack_;
  std::vector<std::size_t> marks_;
  std::unordered_map<std::uint32_t, PyPtr> memo_;
  std::unordered_map<const PyValue*, std::unordered_map<std::string_view, std::size_t>> key_index_;
  std::uint64_t charged_ = 0;
  const std::uint64_t budget_;
};

std::vector<std::int64_t> Machine::intTuple(const PyValue& v, const char* what) {
  if (v.kind != K::Tuple && v.kind != K::List) fail(op_at_, std::string(what) + ": expected a tuple of ints");
  std::vector<std::int64_t> out;
  charge(sizeof(std::int64_t) * v.items.size());
  for (const auto& x : v.items) {
    if (x->kind != K::Int) fail(op_at_, std::string(what) + ": expected a tuple of ints");
    out.push_back(x->i);
  }
  return out;
}

PyPtr Machine::rebuildTensor(const std::vector<PyPtr>& a, bool v3) {
  const char* fn = v3 ? "_rebuild_tensor_v3" : "_rebuild_tensor_v2";
  const std::size_t need = v3 ? 7 : 6;
  if (a.size() < need || a.size() > need + 1)
    fail(op_at_, std::string(fn) + ": expected " + std::to_string(need) + " or " + std::to_string(need + 1) +
                     " arguments, got " + std::to_string(a.size()));
  if (a[0]->kind != K::Storage) fail(op_at_, std::string(fn) + ": argument 0 must be a storage (BINPERSID)");
  if (a[1]->kind != K::Int) fail(op_at_, std::string(fn) + ": storage offset must be an int");
  charge(sizeof(PyTensor));
  auto t = std::make_shared<PyTensor>();
  t->storage = a[0]->storage;
  t->dtype = t->storage->dtype;
  t->offset = a[1]->i;
  t->size = intTuple(*a[2], "tensor size");
  t->stride = intTuple(*a[3], "tensor stride");
  if (v3) {
    if (a[6]->kind != K::Global) fail(op_at_, "_rebuild_tensor_v3: argument 6 must be a dtype");
    GlobalInfo gi;
    if (!lookupGlobal(a[6]->s, &gi) || gi.kind != AllowedGlobal::DTypeValue)
      fail(op_at_, "_rebuild_tensor_v3: argument 6 must be a dtype");
    if (!gi.supported) fail(op_at_, "tensor dtype " + a[6]->s + " is not supported by omn-audit");
    t->dtype = gi.dtype;
  }
  auto v = mk(K::Tensor);
  v->tensor = std::move(t);
  return v;
}

PyPtr Machine::reduce(const PyValue& callable, const PyValue& args, const char* how) {
  if (callable.kind != K::Global) fail(op_at_, std::string(how) + " on a value that is not an allowlisted global");
  if (args.kind != K::Tuple) fail(op_at_, std::string(how) + " of " + callable.s + ": arguments must be a tuple");
  GlobalInfo gi;
  if (!lookupGlobal(callable.s, &gi))
    fail(op_at_, "global '" + callable.s + "' is not allowed");  // unreachable: GLOBAL checked it
  const auto& a = args.items;
  switch (gi.kind) {
    case AllowedGlobal::OrderedDict: {
      auto d = mk(K::Dict);
      d->ordered = true;
      if (!a.empty()) fail(op_at_, "OrderedDict() with arguments is not what torch.save writes");
      return d;
    }
    case AllowedGlobal::RebuildTensorV2: return rebuildTensor(a, false);
    case AllowedGlobal::RebuildTensorV3: return rebuildTensor(a, true);
    case AllowedGlobal::RebuildParameter:
    case AllowedGlobal::RebuildParameterWithState: {
      if (a.empty() || a[0]->kind != K::Tensor) fail(op_at_, callable.s + ": argument 0 must be a tensor");
      auto v = mk(K::Tensor);
      charge(sizeof(PyTensor) + 2 * sizeof(std::int64_t) * a[0]->tensor->size.size());
      v->tensor = std::make_shared<PyTensor>(*a[0]->tensor);
      v->tensor->parameter = true;
      return v;
    }
    case AllowedGlobal::TorchSize: {
      if (a.size() != 1) fail(op_at_, "torch.Size: expected one tuple argument");
      auto v = mk(K::Tuple);
      intTuple(*a[0], "torch.Size");
      charge(kSlotCost * a[0]->items.size());
      v->items = a[0]->items;
      return v;
    }
    case AllowedGlobal::CodecsEncode: {
      if (a.size() != 2 || a[0]->kind != K::Str || a[1]->kind != K::Str || a[1]->s != "latin1")
        fail(op_at_, "_codecs.encode: expected (str, 'latin1')");
      // The str holds code points < 256 as UTF-8; latin1-encode them back into bytes.
      auto v = mk(K::Bytes);
      const std::string& s = a[0]->s;
      charge(s.size());
      for (std::size_t i = 0; i < s.size(); ++i) {
        const auto c = static_cast<unsigned char>(s[i]);
        if (c < 0x80) v->s.push_back(static_cast<char>(c));
        else if ((c & 0xE0) == 0xC0 && i + 1 < s.size() && c <= 0xC3) {
          v->s.push_back(static_cast<char>(((c & 0x1F) << 6) | (static_cast<unsigned char>(s[i + 1]) & 0x3F)));
          ++i;
        } else fail(op_at_, "_codecs.encode: character outside latin-1");
      }
      return v;
    }
    case AllowedGlobal::BuiltinSet: {
      auto v = mk(K::Set);
      if (a.size() == 1) {
        if (a[0]->kind != K::List && a[0]->kind != K::Tuple) fail(op_at_, "set(): expected a list");
        charge(kSlotCost * a[0]->items.size());
        v->items = a[0]->items;
      } else if (!a.empty()) fail(op_at_, "set(): expected at most one argument");
      return v;
    }
    case AllowedGlobal::StorageType:
    case AllowedGlobal::DTypeValue: break;
  }
  fail(op_at_, std::string(how) + " of '" + callable.s + "' is not allowed (it is not a constructor)");
}

// One opcode at a time: each family of opcodes is one step, and an opcode no family knows is refused.
PyPtr Machine::run() {
  while (p_ < n_) {
    op_at_ = p_;
    const std::uint8_t op = d_[p_++];
    if (op == '.') return stop();
    const bool done = protocolOrCall(op) || memoOp(op) || containerOp(op) || scalarOp(op);
    if (!done) refuseOpcode(op);
  }
  fail(p_, "truncated: the pickle ends without STOP");
}

// PROTO, GLOBAL, REDUCE, NEWOBJ, BUILD and BINPERSID: the opcodes that name or apply something.
bool Machine::protocolOrCall(std::uint8_t op) {
  switch (op) {
    case 0x80: {  // PROTO
      const std::uint8_t v = *take(1);
      if (v > 2) fail(op_at_, "pickle protocol " + std::to_string(v) + " (torch.save writes protocol 2)");
      return true;
    }
    case 'c': {  // GLOBAL
      const std::string module = line(), name = line();
      GlobalInfo gi;
      if (!lookupGlobal(module, name, &gi))
        fail(op_at_, "GLOBAL '" + module + "." + name + "' is not in the allowlist (refused; nothing was run)");
      auto v = mk(K::Global);
      v->s = module + "." + name;
      push(std::move(v));
      return true;
    }
    case 'R': {  // REDUCE
      PyPtr args = pop();
      PyPtr fn = pop();
      push(reduce(*fn, *args, "REDUCE"));
      return true;
    }
    case 0x81: {  // NEWOBJ: cls.__new__(cls, *args), only for allowlisted constructors
      PyPtr args = pop();
      PyPtr cls = pop();
      push(reduce(*cls, *args, "NEWOBJ"));
      return true;
    }
    case 'b':  // BUILD
      build();
      return true;
    case 'Q': {  // BINPERSID
      PyPtr pid = pop();
      if (!load_) fail(op_at_, "persistent id without a storage loader");
      push(load_(*pid, op_at_));
      return true;
    }
    default: return false;
  }
}

// BUILD: an object's state; only a dict's attributes are kept.
void Machine::build() {
  PyPtr state = pop();
  PyValue& obj = *top();
  if (obj.kind == K::Dict && state->kind == K::Dict) {
    charge(2 * kSlotCost * state->dict.size());  // a memoised state can be applied again and again
    for (auto& kv : state->dict) obj.attrs.push_back(kv);
  } else if (obj.kind == K::Tensor || state->kind == K::None) {
    // parameter state / empty state: nothing to keep
  } else {
    fail(op_at_, "BUILD on a value of this kind is not allowed");
  }
}

// BINGET, LONG_BINGET, BINPUT, LONG_BINPUT: the memo.
bool Machine::memoOp(std::uint8_t op) {
  switch (op) {
    case 'h': case 'j': {  // BINGET / LONG_BINGET
      const std::uint32_t idx = op == 'h' ? le(1) : le(4);
      auto it = memo_.find(idx);
      if (it == memo_.end()) fail(op_at_, "memo key " + std::to_string(idx) + " was never stored");
      push(it->second);
      return true;
    }
    case 'q': case 'r': {  // BINPUT / LONG_BINPUT
      const std::uint32_t idx = op == 'q' ? le(1) : le(4);
      if (!memo_.count(idx)) charge(kMemoCost);
      memo_[idx] = top();
      return true;
    }
    default: return false;
  }
}

// MARK, the tuples, the empty containers, APPEND(S) and SETITEM(S).
bool Machine::containerOp(std::uint8_t op) {
  switch (op) {
    case '(':  // MARK
      room();
      charge(sizeof(std::size_t));
      marks_.push_back(stack_.size());
      return true;
    case 't': {  // TUPLE
      auto v = mk(K::Tuple);
      v->items = popMark();
      push(std::move(v));
      return true;
    }
    case 0x85: case 0x86: case 0x87: {  // TUPLE1..3
      const std::size_t k = op - 0x84u;
      auto v = mk(K::Tuple);
      v->items.resize(k);
      for (std::size_t i = k; i-- > 0;) v->items[i] = pop();
      push(std::move(v));
      return true;
    }
    case ')': push(mk(K::Tuple)); return true;  // EMPTY_TUPLE
    case ']': push(mk(K::List)); return true;   // EMPTY_LIST
    case '}': push(mk(K::Dict)); return true;   // EMPTY_DICT
    case 0x8f: push(mk(K::Set)); return true;   // EMPTY_SET
    case 'a': {  // APPEND
      PyPtr v = pop();
      if (top()->kind != K::List) fail(op_at_, "APPEND to a value that is not a list");
      charge(kSlotCost);
      top()->items.push_back(std::move(v));
      return true;
    }
    case 'e': {  // APPENDS
      auto items = popMark();
      if (top()->kind != K::List) fail(op_at_, "APPENDS to a value that is not a list");
      charge(kSlotCost * items.size());
      for (auto& v : items) top()->items.push_back(std::move(v));
      return true;
    }
    case 's': {  // SETITEM
      PyPtr v = pop();
      PyPtr k = pop();
      std::vector<PyPtr> kv{k, v};
      setItems(*top(), kv);
      return true;
    }
    case 'u': {  // SETITEMS
      auto kv = popMark();
      setItems(*top(), kv);
      return true;
    }
    default: return false;
  }
}

// None, the booleans, the integers, BINFLOAT and the strings.
bool Machine::scalarOp(std::uint8_t op) {
  switch (op) {
    case 'N': push(mk(K::None)); return true;
    case 0x88: case 0x89: {  // NEWTRUE / NEWFALSE
      auto v = mk(K::Bool);
      v->b = op == 0x88;
      push(std::move(v));
      return true;
    }
    case 'J': {  // BININT
      auto v = mk(K::Int);
      v->i = static_cast<std::int32_t>(le(4));
      push(std::move(v));
      return true;
    }
    case 'K': case 'M': {  // BININT1 / BININT2
      auto v = mk(K::Int);
      v->i = le(op == 'K' ? 1 : 2);
      push(std::move(v));
      return true;
    }
    case 0x8a: push(long1()); return true;  // LONG1
    case 'G': {  // BINFLOAT: big-endian double
      const std::uint8_t* b = take(8);
      std::uint64_t u = 0;
      for (int i = 0; i < 8; ++i) u = (u << 8) | b[i];
      auto v = mk(K::Float);
      std::memcpy(&v->f, &u, 8);
      push(std::move(v));
      return true;
    }
    case 'X': case 'U': {  // BINUNICODE / SHORT_BINSTRING
      const std::uint32_t len = op == 'X' ? le(4) : le(1);
      const std::uint8_t* b = take(len);
      charge(len);
      auto v = mk(K::Str);
      v->s.assign(reinterpret_cast<const char*>(b), len);
      push(std::move(v));
      return true;
    }
    default: return false;
  }
}

// LONG1: a little-endian two's-complement integer of up to 8 bytes.
PyPtr Machine::long1() {
  const std::uint8_t k = *take(1);
  if (k > 8) fail(op_at_, "LONG1 of " + std::to_string(k) + " bytes: integers wider than 64 bits are refused");
  const std::uint8_t* b = take(k);
  std::uint64_t u = 0;
  for (std::size_t i = 0; i < k; ++i) u |= static_cast<std::uint64_t>(b[i]) << (8 * i);
  if (k > 0 && k < 8 && (b[k - 1] & 0x80)) u |= ~0ull << (8 * k);  // sign-extend
  auto v = mk(K::Int);
  std::memcpy(&v->i, &u, 8);
  return v;
}

// STOP: the one value left on the stack is the result.
PyPtr Machine::stop() {
  if (stack_.size() != 1 || !marks_.empty())
    fail(op_at_, "STOP with " + std::to_string(stack_.size()) + " values on the stack, expected 1");
  return stack_.back();
}

// An opcode no family knows: named, with the global it would have imported, and refused.
void Machine::refuseOpcode(std::uint8_t op) {
  const char* name = opName(op);
  char hex[8];
  std::snprintf(hex, sizeof hex, "0x%02x", op);
  std::string what = std::string("opcode ") + (name ? name : "") + (name ? " (" : "") + hex + (name ? ")" : "");
  if (op == 0x93 && stack_.size() >= 2 && stack_[stack_.size() - 2]->isStr() && stack_.back()->isStr())
    what += " naming global '" + stack_[stack_.size() - 2]->s + "." + stack_.back()->s + "'";
  if (op == 'i' && std::memchr(d_ + p_, '\n', n_ - p_)) {  // INST module\nname\n: name it, run nothing
    const std::string module = line();
    if (std::memchr(d_ + p_, '\n', n_ - p_)) what += " naming global '" + module + "." + line() + "'";
  }
  fail(op_at_, what + " is not allowed in a checkpoint (refused; nothing was run)");
}

}  // namespace

PyPtr unpickle(const std::uint8_t* data, std::size_t len, const std::string& where, const PersistentLoad& load) {
  std::vector<PyPtr> containers;
  struct Scope {  // on every exit: break the links of all containers the result does not own
    std::vector<PyPtr>& all;
    PyPtr result;
    ~Scope() {
      std::unordered_map<const PyValue*, bool> keep;
      if (result) {
        std::vector<const PyValue*> todo{result.get()};
        while (!todo.empty()) {
          const PyValue* v = todo.back();
          todo.pop_back();
          if (!keep.emplace(v, true).second) continue;
          forEachChild(*v, [&](const PyValue* ch) { todo.push_back(ch); });
        }
      }
      for (auto& c : all)
        if (!keep.count(c.get())) {
          c->items.clear();
          c->dict.clear();
          c->attrs.clear();
        }
    }
  } scope{containers, nullptr};
  Machine m(data, len, where, load, containers);
  PyPtr result = m.run();
  if (hasCycle(result.get())) throw FormatError(where + ": the pickle builds a cyclic structure; a checkpoint has none");
  scope.result = result;
  return result;
}

}  // namespace omn::io
