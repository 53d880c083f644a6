// `omn-audit merge`: joins the outputs of a sharded sweep (--shard i/N) into the document the
// unsharded run would have written, after checking that the shards share their provenance (the
// same manifest, checkpoint, token set, model code and rows) and their control. No libtorch.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace omn::intervene {

// Throws UsageError naming the file and what differs.
nlohmann::json mergeShards(const std::vector<std::string>& paths);

}  // namespace omn::intervene
