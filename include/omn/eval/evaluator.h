// Scores a fixed list of rows with a model: batching, the document layout of each batch, the
// attention path, progress. Sweeps call score() once per condition on the same rows.
#pragma once
#include <ATen/ATen.h>

#include <functional>
#include <vector>

#include "omn/eval/bootstrap.h"
#include "omn/eval/divergence.h"
#include "omn/eval/mechanism.h"
#include "omn/eval/token_set.h"
#include "omn/model/transformer.h"

namespace omn::eval {

struct Progress {
  std::size_t rows_done = 0, rows_total = 0;
  std::int64_t tokens_done = 0;  // scored tokens so far
  double nll_done = 0;
};
using ProgressFn = std::function<void(const Progress&)>;

// The residual stream entering one layer, per batch, kept from a full pass so that conditions
// touching only that layer and later ones start there (--cache-activations).
struct ActivationCache {
  int layer = 0;
  std::vector<at::Tensor> inputs;  // per batch: [B, T, D], the input of block `layer`
  std::size_t bytes() const;
};

struct ScoreOptions {
  ProgressFn progress;
  std::function<bool()> stop;  // polled between batches (Ctrl-C): true stops with the rows done
  std::vector<LayerMechanism>* mech = nullptr;  // per-layer statistics, averaged over batches
  model::ForwardObserver* observer = nullptr;    // a probe: told every intermediate it wants, batch by batch
  const model::GainOverlay* gains = nullptr;     // Q/K gains in place of the model's (intervene's condition)
  ActivationCache* cache = nullptr;
  bool capture = false;  // full pass that fills cache->inputs at cache->layer
  bool from_cache = false;  // start at cache->layer from cache->inputs (bitwise equal to a full pass)
  // --kl: the control pass keeps each batch's final hidden states (keep_final); a later pass
  // compares its next-token distributions with the ones they give (reference_final) into divergence
  std::vector<at::Tensor>* keep_final = nullptr;
  const std::vector<at::Tensor>* reference_final = nullptr;
  Divergence* divergence = nullptr;
};

// Reads the model's weights as they are at each pass and keeps nothing derived from them between
// passes except the activation cache the caller asks for. Nothing here writes the model: an
// intervention's Q/K gains reach a pass as an overlay (ScoreOptions::gains), and a condition is
// scored from the cache only when it changes no layer before it. (The trainer's optimizer changes
// the weights between evaluations, never during one.)
class Evaluator {
 public:
  Evaluator(const model::Transformer& model, std::vector<Row> rows, model::AttentionPath path, int batch,
            const at::Device& device);

  // All rows, in order; with opt.stop, possibly fewer (the rows done when it said stop).
  SequenceScores score(const ScoreOptions& opt = {}) const;

  // The bytes a cache at any layer takes: every row's [T, D] in the working dtype.
  std::size_t cacheBytes() const;

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
