// `omn-audit merge` of a sharded study (study --shard i/N): the shards must be one study (the same
// manifest, base config, corpus, grid and model code); their runs are joined and every per-arm and
// comparison number recomputed from them, as the unsharded study would have. No libtorch.
#pragma once
#include <string>
#include <vector>

#include "omn/documents/study_document.h"

namespace omn::study {

// `out`: where the merged document goes (each run's directory is rebased to it).
documents::StudyDocument mergeStudyShards(const std::vector<std::string>& paths, const std::string& out);

}  // namespace omn::study
