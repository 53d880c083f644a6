// Scores a fixed list of rows with a model: batching, the document layout of each batch, the
// attention path, progress. Sweeps call score() once per condition on the same rows.
#pragma once
#include <ATen/ATen.h>

#include <functional>
#include <vector>

#include "omn/eval/bootstrap.h"
#include "omn/eval/token_set.h"
#include "omn/model/transformer.h"

namespace omn::eval {

struct Progress {
  std::size_t rows_done = 0, rows_total = 0;
  std::int64_t tokens_done = 0;  // scored tokens so far
  double nll_done = 0;
};
using ProgressFn = std::function<void(const Progress&)>;

class Evaluator {
 public:
  Evaluator(const model::Transformer& model, std::vector<Row> rows, model::AttentionPath path, int batch,
            const at::Device& device);

  // All rows, in order. `stop` is polled between batches (Ctrl-C): when it returns true, scoring
  // stops and the result holds only the rows done. `mech` (optional) averages the per-layer
  // statistics over batches.
  SequenceScores score(const ProgressFn& progress = {}, const std::function<bool()>& stop = {},
                       std::vector<model::LayerMechanism>* mech = nullptr) const;

  // The float32 logits of row `i` ([T, V]), for parity checks.
  at::Tensor rowLogits(std::size_t i) const;

  std::size_t size() const { return rows_.size(); }
  const std::vector<Row>& rows() const { return rows_; }
  bool packed() const { return packed_; }

 private:
  struct Batch {
    std::size_t first, count;
  };
  std::pair<at::Tensor, at::Tensor> tensors(const Batch& b) const;  // tokens, doc [B, T]

  const model::Transformer& model_;
  std::vector<Row> rows_;
  std::vector<Batch> batches_;
  model::AttentionPath path_;
  at::Device device_;
  bool packed_ = false;  // some row holds several documents
};

}  // namespace omn::eval
