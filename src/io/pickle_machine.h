// Internal to the unpickler: the restricted pickle VM's state and its stack, memo and budget
// primitives. Its opcode families are defined in pickle.cpp; the allowlisted constructors it applies
// (REDUCE, NEWOBJ) in pickle_reduce.cpp. Nothing here imports, looks up attributes or calls code named
// by the input.
#pragma once
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "omn/errors.h"
#include "omn/io/pickle.h"
#include "pickle_graph.h"

namespace omn::io::detail {

using K = PyValue::Kind;

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

}  // namespace omn::io::detail
