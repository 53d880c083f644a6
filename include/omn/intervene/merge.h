// `omn-audit merge`: joins the outputs of a sharded sweep (--shard i/N) into the document the
// unsharded run would have written, after checking that the shards share their provenance (the
// same manifest, checkpoint, token set, model code and rows) and their control. No libtorch.
#pragma once
#include <string>
#include <vector>

#include "omn/documents/intervention_document.h"

namespace omn::intervene {

// Each shard read once as its document (the schema checked, then the struct); every derived number
// recomputed from their records (results.h). Throws UsageError naming the file and what differs.
documents::InterventionDocument mergeShards(const std::vector<std::string>& paths);

}  // namespace omn::intervene
