// How a pass's next-token distributions differ from a reference pass's on the same positions
// (`intervene --kl`, against the control): per sequence, the sums of KL(reference || pass) in nats,
// of the tokens whose most likely next token is the reference's, and of p(correct) − p_ref(correct);
// plus every token's KL for its quantiles. llama.cpp's `perplexity --kl-divergence` reports the same
// quantities. No libtorch.
#pragma once
#include <cstdint>
#include <vector>

#include "omn/documents/intervention_document.h"

namespace omn::eval {

struct Divergence {
  std::vector<double> kl_sum;             // per sequence, nats
  std::vector<std::int64_t> top1_agree;   // per sequence, tokens
  std::vector<double> dp_correct_sum;     // per sequence
  std::vector<float> kl_tokens;           // every scored token's KL, in order (not journaled)
};

// The raw per-sequence sums and the KL quantiles, as journaled and as a result holds them: the sums
// (non-finite: empty), the quantiles by nearest rank over every finite token KL, and how many
// token KLs were not finite.
documents::DivergenceSums divergenceSums(const Divergence& d);

// The summary a result shows, recomputed from the raw sums and the pass's token counts: KL per
// token, top-1 agreement, the change in p(correct), the quantiles, how they were computed.
documents::DivergenceSummary divergenceSummary(const documents::DivergenceSums& raw, const std::vector<std::int64_t>& tokens);

}  // namespace omn::eval
