// The outputs of one sharded job (--shard i/N), read and checked as a set before they are merged:
// each has `schema`, every index 0..N-1 appears exactly once, and the values at `same` (JSON
// pointers: the inputs, the code, the settings) agree. One definition for `merge` of sweeps and of
// studies. No libtorch.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace omn::output {

// The documents in the order given; throws UsageError naming the file and the pointer that differs.
std::vector<nlohmann::json> readShardSet(const std::vector<std::string>& paths, const std::string& schema,
                                         const std::vector<std::string>& same, const std::string& what);

// /merged_from of the merged document: each shard's path, shard and start time.
nlohmann::json mergedFrom(const std::vector<std::string>& paths, const std::vector<nlohmann::json>& docs);

}  // namespace omn::output
