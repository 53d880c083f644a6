// The "result" block of eval and sweep outputs, from raw per-sequence scores: totals, perplexity,
// its bootstrap interval and the group perplexities (docs/eval.md). No libtorch.
#pragma once
#include <nlohmann/json.hpp>

#include "omn/eval/bootstrap.h"

namespace omn::eval {

nlohmann::json scoresJson(const SequenceScores& s, const BootstrapSpec& b, int groups);

}  // namespace omn::eval
