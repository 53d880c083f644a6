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
};

// final_hidden [B, T, D] (after the final norm), tokens/doc [B, T]. Position t is scored when
// t + 1 < T and doc[t + 1] == doc[t]. `chunk_tokens` 0: the default chunk (scorer.cpp, the one place
// that states its size); tests pass a small one to exercise the multi-chunk loop.
std::vector<RowScore> scoreRows(const model::Transformer& m, const at::Tensor& final_hidden, const at::Tensor& tokens,
                                const at::Tensor& doc, std::int64_t chunk_tokens = 0);

}  // namespace omn::eval
