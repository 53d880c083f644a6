// A closed set of named values (an option's choices): one table per set gives its names, the
// parser, the name of a value and the list a message or a --help text shows. The CLI, manifests
// and configs all parse through the same table, naming the flag or JSON pointer they read. No
// libtorch.
#pragma once
#include <array>
#include <cstddef>
#include <string>

#include "omn/errors.h"

namespace omn::io {

template <class E>
struct Named {
  const char* name;
  E value;
};

// "a, b or c"
template <class E, std::size_t N>
std::string choiceList(const std::array<Named<E>, N>& table) {
  std::string s;
  for (std::size_t i = 0; i < N; ++i) s += std::string(i == 0 ? "" : i + 1 == N ? " or " : ", ") + table[i].name;
  return s;
}

// The value named `text`; else UsageError "<where>: expected a, b or c, got "text"".
template <class E, std::size_t N>
E parseChoice(const std::array<Named<E>, N>& table, const std::string& text, const std::string& where) {
  for (const auto& c : table)
    if (text == c.name) return c.value;
  throw UsageError(where + ": expected " + choiceList(table) + ", got \"" + text + "\"");
}

template <class E, std::size_t N>
const char* choiceName(const std::array<Named<E>, N>& table, E value) {
  for (const auto& c : table)
    if (c.value == value) return c.name;
  return "?";
}

}  // namespace omn::io
