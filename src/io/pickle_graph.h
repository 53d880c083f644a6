// Internal to the unpickler: how values are made and how their graph is walked (cycles, teardown).
#pragma once
#include <vector>

#include "omn/io/pickle.h"

namespace omn::io::detail {

// A new value; a container (list, tuple, dict, set) is also recorded in `containers`, so that the
// unpickler can break the reference cycles a hostile pickle builds once it is done (shared_ptr
// alone would leak them).
PyPtr make(PyValue::Kind kind, std::vector<PyPtr>& containers);

// Calls f(child) for every value a container holds (items, dict keys and values, BUILD state).
template <typename F>
void forEachChild(const PyValue& v, F&& f) {
  for (const auto& x : v.items) f(x.get());
  for (const auto& [k, x] : v.dict) {
    f(k.get());
    f(x.get());
  }
  for (const auto& [k, x] : v.attrs) {
    f(k.get());
    f(x.get());
  }
}

// True when the graph under `root` has a cycle (iterative: deep nesting cannot overflow the stack).
bool hasCycle(const PyValue* root);

}  // namespace omn::io::detail
