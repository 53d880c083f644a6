// Force-included into every translation unit (CMakeLists.txt) before nlohmann/json.hpp: its const
// operator[] on a missing key is an assert, undefined behaviour in a Release build. As an exception,
// a reader that trusted a document too far fails (exit 1, "unexpected") instead of reading freed
// memory. One definition for every target, so nlohmann's inline functions are the same everywhere.
#pragma once
#include <stdexcept>

[[noreturn]] inline void omnJsonAssertFailed() { throw std::out_of_range("a JSON value was read that is not there"); }
#define JSON_ASSERT(x) ((x) ? static_cast<void>(0) : omnJsonAssertFailed())
