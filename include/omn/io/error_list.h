// Every mistake in a document people wrote, reported in one run instead of one per run: the
// reader reads each independent part (a section, one condition) inside `check`, which keeps that
// part's UsageError and goes on to the next; `throwIfAny` then throws one UsageError naming them
// all. One error reads exactly as it would alone. No libtorch.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "omn/errors.h"

namespace omn::io {

class ErrorList {
 public:
  // `label` is the reader's ("manifest m.json"): each error's message starts with it
  explicit ErrorList(std::string label) : label_(std::move(label)) {}

  // false when `read` failed (a part read against it would only repeat the mistake)
  template <class Read>
  bool check(Read&& read) {
    try {
      read();
      return true;
    } catch (const UsageError& e) {
      errors_.emplace_back(e.what());
      return false;
    }
  }

  // None: returns. One: that error, as it was. Several: UsageErrors, "label: N errors:" and one
  // item each, the label left off (the first kMaxListed; then how many more).
  void throwIfAny() const;

  static constexpr std::size_t kMaxListed = 20;

 private:
  std::string label_;
  std::vector<std::string> errors_;
};

}  // namespace omn::io
