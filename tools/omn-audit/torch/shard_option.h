// --shard i/N, parsed strictly (the whole text, 0 <= i < N <= 100000), for intervene and study.
#pragma once
#include <regex>
#include <string>
#include <utility>

#include "omn/errors.h"

namespace omn::cli {

inline std::pair<int, int> parseShard(const std::string& s) {
  std::smatch m;
  if (!std::regex_match(s, m, std::regex("([0-9]{1,6})/([0-9]{1,6})")))
    throw UsageError("--shard: expected i/N (e.g. 0/4), got \"" + s + "\"");
  const int i = std::stoi(m[1]), n = std::stoi(m[2]);
  if (n < 1 || n > 100000 || i >= n) throw UsageError("--shard " + s + ": expected 0 <= i < N <= 100000");
  return {i, n};
}

}  // namespace omn::cli
