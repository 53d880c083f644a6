#include "omn/io/error_list.h"

namespace omn::io {

void ErrorList::throwIfAny() const {
  if (errors_.empty()) return;
  if (errors_.size() == 1) throw UsageError(errors_.front());
  std::string msg = label_ + ": " + std::to_string(errors_.size()) + " errors:";
  const std::string prefix = label_ + ": ";
  for (std::size_t i = 0; i < errors_.size() && i < kMaxListed; ++i) {
    const std::string& e = errors_[i];
    msg += "\n  " + (e.compare(0, prefix.size(), prefix) == 0 ? e.substr(prefix.size()) : e);
  }
  if (errors_.size() > kMaxListed) msg += "\n  ... and " + std::to_string(errors_.size() - kMaxListed) + " more";
  throw UsageError(msg);
}

}  // namespace omn::io
