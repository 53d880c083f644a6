// The restricted pickle VM's opcodes (its state: pickle_machine.h). Each opcode is one case; the
// allowlisted constructors are applied in reduce() (pickle_reduce.cpp). Nothing here imports, looks up
// attributes or calls code named by the input.
#include "omn/io/pickle.h"

#include <cmath>
#include <cstring>
#include <string_view>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "omn/errors.h"
#include "omn/io/pickle_allowlist.h"
#include "pickle_graph.h"
#include "pickle_machine.h"

namespace omn::io {

namespace {

using detail::forEachChild;
using detail::hasCycle;
using detail::Machine;

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

}  // namespace

namespace detail {

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

}  // namespace detail


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