// Pure cross-entropy: log-softmax in float32 over the full vocabulary, the NLL of each next token,
// never across a document boundary. The logits are made a chunk of tokens at a time so memory
// stays bounded (vocab 131,840 × 2,048 × batch would not fit).
#pragma once
#include <ATen/ATen.h>

#include <vector>

#include "omn/model/transformer.h"

namespace omn::eval {

struct RowScore {
  double nll = 0;          // sum over scored tokens, natural log
  std::int64_t tokens = 0;  // scored tokens
  // against a reference distribution on the same positions (scoreRows' `reference_hidden`), summed
  // over the scored tokens: KL(reference || this) in nats, tokens whose argmax is the reference's,
  // and p(correct) − p_reference(correct)
  double kl = 0;
  std::int64_t top1_agree = 0;
  double dp_correct = 0;
};

// final_hidden [B, T, D] (after the final norm), tokens/doc [B, T]. Position t is scored when
// t + 1 < T and doc[t + 1] == doc[t] (eval::scoredTokens counts them in a Row). `chunk_tokens` 0:
// the default chunk (scorer.cpp, the one place that states its size); tests pass a small one to
// exercise the multi-chunk loop.
// With `reference_hidden` (the same rows' final hidden states from another pass, e.g. the
// control's), each chunk's reference logits are made from it by the same head and compared with
// this pass's: RowScore's kl, top1_agree and dp_correct; `kl_tokens` receives every scored token's
// KL in order. The NLL is computed exactly as without it (the same bits). Identical hidden states
// give KL exactly 0.
std::vector<RowScore> scoreRows(const model::Transformer& m, const at::Tensor& final_hidden, const at::Tensor& tokens,
                                const at::Tensor& doc, std::int64_t chunk_tokens = 0, const at::Tensor& reference_hidden = {},
                                std::vector<float>* kl_tokens = nullptr);

}  // namespace omn::eval
