// Values the unpickler builds: lookup, iterative teardown, cycle detection.
#include <unordered_map>

#include "omn/io/pickle.h"
#include "pickle_graph.h"

namespace omn::io {

const PyValue* PyValue::get(const std::string& key) const {
  for (const auto& [k, v] : dict)
    if (k->kind == Kind::Str && k->s == key) return v.get();
  return nullptr;
}

PyValue::~PyValue() {
  std::vector<PyPtr> pending;
  auto take = [&pending](PyValue& v) {
    for (auto& x : v.items) pending.push_back(std::move(x));
    for (auto& [k, x] : v.dict) {
      pending.push_back(std::move(k));
      pending.push_back(std::move(x));
    }
    for (auto& [k, x] : v.attrs) {
      pending.push_back(std::move(k));
      pending.push_back(std::move(x));
    }
    v.items.clear();
    v.dict.clear();
    v.attrs.clear();
  };
  take(*this);
  while (!pending.empty()) {
    PyPtr p = std::move(pending.back());
    pending.pop_back();
    if (p && p.use_count() == 1) take(*p);  // the last owner: empty it before it dies
  }
}

namespace detail {

using K = PyValue::Kind;

PyPtr make(K kind, std::vector<PyPtr>& containers) {
  auto p = std::make_shared<PyValue>();
  p->kind = kind;
  if (kind == K::List || kind == K::Tuple || kind == K::Dict || kind == K::Set) containers.push_back(p);
  return p;
}

bool hasCycle(const PyValue* root) {
  enum Colour { Grey = 1, Black = 2 };
  std::unordered_map<const PyValue*, int> colour;
  std::vector<std::pair<const PyValue*, bool>> todo{{root, false}};
  while (!todo.empty()) {
    auto [v, done] = todo.back();
    todo.pop_back();
    if (done) {
      colour[v] = Black;
      continue;
    }
    auto& c = colour[v];
    if (c == Black) continue;
    if (c == Grey) return true;
    c = Grey;
    todo.push_back({v, true});
    bool cycle = false;
    forEachChild(*v, [&](const PyValue* ch) {
      auto it = colour.find(ch);
      if (it != colour.end() && it->second == Grey) cycle = true;
      else if (it == colour.end() || it->second != Black) todo.push_back({ch, false});
    });
    if (cycle) return true;
  }
  return false;
}

}  // namespace detail

}  // namespace omn::io
