// "Hash beside the parse", defined once: a file's SHA-256 streams on a thread while the caller
// parses the same file (the parsers execute nothing), nothing parsed is trusted before verify(),
// and a wrong digest outranks the parse error it may have caused. Used by profile and by the
// evaluation session. No libtorch.
#pragma once
#include <exception>
#include <future>
#include <string>

#include "omn/io/sha256.h"

namespace omn::io {

class HashBeside {
 public:
  // Starts hashing `path` when `hash` (else verify() returns ""); `expected` (may be empty) is the
  // digest it must have. `progress` runs on the hashing thread.
  HashBeside(const std::string& path, std::string expected, bool hash = true, ProgressFn progress = {});
  HashBeside(const HashBeside&) = delete;
  HashBeside& operator=(const HashBeside&) = delete;
  ~HashBeside();  // waits for the thread; never leaves it running past an error

  // Waits for the digest; IntegrityError when it differs from `expected`, the hashing thread's own
  // error when it could not read the file. Idempotent: a later call gives the same answer.
  const std::string& verify();

  // Runs `parse`; when it throws, verify() first (a wrong digest, or the file unreadable by the
  // hash, replaces the parse error), then the parse error goes on.
  template <class F>
  decltype(auto) guard(F&& parse) {
    try {
      return parse();
    } catch (...) {
      verify();
      throw;
    }
  }

 private:
  std::string path_, expected_, digest_;
  std::future<std::string> pending_;
  std::exception_ptr error_;
  bool done_ = false;
};

}  // namespace omn::io
