// The "result" block of eval and sweep outputs, from raw per-sequence scores: totals, perplexity,
// its bootstrap interval and the group perplexities (docs/eval.md). No libtorch.
#pragma once
#include "omn/documents/eval_document.h"
#include "omn/eval/bootstrap.h"

namespace omn::eval {

// Every number recomputed from the per-sequence sums (a non-finite one: empty, null in the document).
documents::Scores scoresRecord(const SequenceScores& s, const BootstrapSpec& b, int groups);

}  // namespace omn::eval
