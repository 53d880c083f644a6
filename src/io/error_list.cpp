#include "omn/io/error_list.h"

namespace omn::io {

void ErrorList::throwIfAny() const {
  if (errors_.empty()) return;
  if (errors_.size() == 1) throw UsageError(errors_.front());
  const std::string prefix = label_ + ": ";
  std::vector<std::string> items;
  for (std::size_t i = 0; i < errors_.size() && i < kMaxListed; ++i) {
    const std::string& e = errors_[i];
    items.push_back(e.compare(0, prefix.size(), prefix) == 0 ? e.substr(prefix.size()) : e);
  }
  if (errors_.size() > kMaxListed) items.push_back("... and " + std::to_string(errors_.size() - kMaxListed) + " more");
  throw UsageErrors(label_ + ": " + std::to_string(errors_.size()) + " errors:", std::move(items));
}

}  // namespace omn::io
