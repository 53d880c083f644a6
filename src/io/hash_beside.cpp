#include "omn/io/hash_beside.h"

#include <utility>

namespace omn::io {

HashBeside::HashBeside(const std::string& path, std::string expected, bool hash, ProgressFn progress)
    : path_(path), expected_(std::move(expected)) {
  if (hash) pending_ = std::async(std::launch::async, [path, progress] { return sha256File(path, progress); });
  else done_ = true;
}

HashBeside::~HashBeside() {
  if (pending_.valid()) pending_.wait();  // an error thrown on the thread is dropped with it
}

const std::string& HashBeside::verify() {
  if (!done_) {
    done_ = true;
    try {
      digest_ = pending_.get();
    } catch (...) {  // the hashing thread's error (an unreadable file), kept for every later call
      error_ = std::current_exception();
    }
  }
  if (error_) std::rethrow_exception(error_);
  if (!expected_.empty()) requireSha256(path_, expected_, digest_);
  return digest_;
}

}  // namespace omn::io
