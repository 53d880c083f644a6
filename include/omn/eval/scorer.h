// Pure cross-entropy: log-softmax in float32 over the full vocabulary, the NLL of each next token,
// never across a document boundary. The logits are made a chunk of tokens at a time so memory
// stays bounded (vocab 131,840 × 2,048 × batch would not fit).
#pragma once
#include <ATen/ATen.h>

#include <vector>

#include "omn/eval/divergence.h"
#include "omn/model/transformer.h"

namespace omn::eval {

struct RowScore {
  double nll = 0;          // sum over scored tokens, natural log
  std::int64_t tokens = 0;  // scored tokens
};

// What scoreRows announces, chunk by chunk, to a ScoreObserver: the pass's log-probabilities
// `logp` [len, V] (float32, log-softmax of the chunk's logits), the next tokens `target` [len, 1],
// each position's row in the batch `rows` [len] and its place `positions` [len] among the batch's
// B·(T−1) positions (row-major). The observer must not write them.
struct ScoredChunk {
  const at::Tensor& logp;
  const at::Tensor& target;
  const at::Tensor& rows;
  const at::Tensor& positions;
};

// Subscribes to the scorer's log-probabilities (the output side's counterpart of
// model::ForwardObserver): for each batch, beginBatch, then each chunk in order, then endBatch.
// Without one the scorer keeps no copy of the logits.
class ScoreObserver {
 public:
  virtual ~ScoreObserver() = default;
  // B rows of T tokens, in chunks of at most `max_chunk` positions
  virtual void beginBatch(std::int64_t B, std::int64_t T, std::int64_t max_chunk) = 0;
  virtual void observe(const ScoredChunk& chunk) = 0;
  virtual void endBatch() = 0;
};

// --kl, a pass compared with a kept control: KL(reference || this pass) in nats, the tokens whose
// most likely next token is the reference's and p(correct) − p_reference(correct), per row into
// `out` (and every scored token's KL into out.kl_tokens), the reference's log-probabilities made from
// `reference` (the control's final hidden states, one [B, T, D] per batch, eval::FinalStates) by the
// same head and the same log-sum-exp as the pass's. Identical hidden states give KL exactly 0.
// std::logic_error when the pass has more batches than `reference` or another shape (a caller's bug).
class DivergenceObserver final : public ScoreObserver {
 public:
  DivergenceObserver(const model::Transformer& m, const std::vector<at::Tensor>& reference, Divergence& out);
  void beginBatch(std::int64_t B, std::int64_t T, std::int64_t max_chunk) override;
  void observe(const ScoredChunk& chunk) override;
  void endBatch() override;

 private:
  const model::Transformer& m_;
  const std::vector<at::Tensor>& reference_;
  Divergence& out_;
  at::Tensor head_;  // model::products::weight(m.head()), once per pass
  std::size_t batch_ = 0;
  at::Tensor h_ref_, ref_buf_, scratch_buf_;       // this batch's reference hidden [B·(T−1), D]; chunk buffers
  at::Tensor kl_per_row_, agree_per_row_, dp_per_row_;
};

// final_hidden [B, T, D] (after the final norm), tokens/doc [B, T]. Position t is scored when
// t + 1 < T and doc[t + 1] == doc[t] (eval::scoredTokens counts them in a Row). `chunk_tokens` 0:
// the default chunk (scorer.cpp, the one place that states its size); tests pass a small one to
// exercise the multi-chunk loop. `observer` (optional) is told each chunk's log-probabilities; the
// NLL is computed exactly as without it (the same bits).
std::vector<RowScore> scoreRows(const model::Transformer& m, const at::Tensor& final_hidden, const at::Tensor& tokens,
                                const at::Tensor& doc, std::int64_t chunk_tokens = 0, ScoreObserver* observer = nullptr);

}  // namespace omn::eval
