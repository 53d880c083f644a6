// How a pass's next-token distributions differ from a reference pass's on the same positions
// (`intervene --kl`, against the control): per sequence, the sums of KL(reference || pass) in nats,
// of the tokens whose most likely next token is the reference's, and of p(correct) − p_ref(correct);
// plus every token's KL for its quantiles. llama.cpp's `perplexity --kl-divergence` reports the same
// quantities. No libtorch.
#pragma once
#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

namespace omn::eval {

struct Divergence {
  std::vector<double> kl_sum;             // per sequence, nats
  std::vector<std::int64_t> top1_agree;   // per sequence, tokens
  std::vector<double> dp_correct_sum;     // per sequence
  std::vector<float> kl_tokens;           // every scored token's KL, in order (not journaled)
};

// The raw per-sequence sums and the KL quantiles, as journaled:
// {"kl_sum": [...], "top1_agree": [...], "dp_correct_sum": [...],
//  "kl_quantiles": {"p50", "p90", "p99", "max"}, "non_finite_tokens"} (nearest rank over every
// finite token KL; non-finite sums are null)
nlohmann::json divergenceRaw(const Divergence& d);

// The summary a result shows, recomputed from the raw block and the pass's token counts:
// {"kl_per_token", "top1_agreement", "delta_p_correct", "kl_quantiles", "method"}
nlohmann::json divergenceSummary(const nlohmann::json& raw, const std::vector<std::int64_t>& tokens);

}  // namespace omn::eval
