// Scores a fixed list of rows with a model: batching, the document layout of each batch, the
// attention path, progress. Sweeps call score() once per condition on the same rows.
#pragma once
#include <ATen/ATen.h>

#include <functional>
#include <vector>

#include "omn/eval/bootstrap.h"
#include "omn/eval/divergence.h"
#include "omn/eval/mechanism.h"
#include "omn/eval/scorer.h"
#include "omn/eval/token_set.h"
#include "omn/model/transformer.h"

namespace omn::eval {

struct Progress {
  std::size_t rows_done = 0, rows_total = 0;
  std::int64_t tokens_done = 0;  // scored tokens so far
  double nll_done = 0;
};
using ProgressFn = std::function<void(const Progress&)>;

// The residual stream entering one layer, per batch, kept from a pass so that conditions touching
// only that layer and later ones start there (--cache-activations). Made by ActivationCapture.
struct ActivationCache {
  int layer = 0;
  std::vector<at::Tensor> inputs;  // per batch: [B, T, D], the input of block `layer`
  std::size_t bytes() const;
};

// --cache-activations, capturing: a subscriber to the forward pass that keeps, batch by batch, the
// residual stream entering block `layer` (its announced block_input; layer 0's is the embedding).
class ActivationCapture final : public model::ForwardObserver {
 public:
  explicit ActivationCapture(int layer) { cache_.layer = layer; }
  bool wants(model::Intermediate what, int layer) const override {
    return what == model::Intermediate::BlockInput && layer == cache_.layer;
  }
  void observe(const model::Announcement& a) override { cache_.inputs.push_back(a.value); }
  const ActivationCache& cache() const { return cache_; }
  ActivationCache take() { return std::move(cache_); }

 private:
  ActivationCache cache_;
};

// --kl, the control's pass: a subscriber that keeps each batch's final hidden states (what the head
// reads), the reference a later pass's DivergenceObserver (scorer.h) compares with.
class FinalStates final : public model::ForwardObserver {
 public:
  bool wants(model::Intermediate what, int) const override { return what == model::Intermediate::FinalHidden; }
  void observe(const model::Announcement& a) override { states_.push_back(a.value); }
  const std::vector<at::Tensor>& states() const { return states_; }
  std::vector<at::Tensor> take() { return std::move(states_); }

 private:
  std::vector<at::Tensor> states_;
};

// Where a pass starts: at the embeddings (layer 0: a full pass), or at a captured cache's layer from
// the inputs it holds, equal bit for bit to a full pass when nothing before that layer differs from
// the pass that captured it (an intervention's first layer at or after it).
class Start {
 public:
  static Start embeddings() { return Start(nullptr); }
  static Start at(const ActivationCache& cache) { return Start(&cache); }
  int layer() const { return cache_ ? cache_->layer : 0; }
  const ActivationCache* cache() const { return cache_; }

 private:
  explicit Start(const ActivationCache* cache) : cache_(cache) {}
  const ActivationCache* cache_;
};

// What any pass may carry. The modes are subscribers, any together: the forward pass's
// (model/forward_observer.h: ActivationCapture, FinalStates, a probe) and the scorer's (scorer.h:
// DivergenceObserver, --kl against a kept control); the --mechanism statistics, averaged over the
// batches; an intervention's gains.
struct ScoreOptions {
  ProgressFn progress;
  std::function<bool()> stop;  // polled between batches (Ctrl-C): true stops with the rows done
  std::vector<LayerMechanism>* mech = nullptr;  // per-layer statistics, averaged over batches
  std::vector<model::ForwardObserver*> observers;  // told every intermediate they want, batch by batch
  ScoreObserver* scored = nullptr;                 // told each chunk's log-probabilities
  const model::GainOverlay* gains = nullptr;       // Q/K gains in place of the model's (intervene's condition)
};

// Reads the model's weights as they are at each pass and keeps nothing derived from them between
// passes (what a subscriber keeps is the caller's). Nothing here writes the model: an
// intervention's Q/K gains reach a pass as an overlay (ScoreOptions::gains), and a condition is
// scored from the cache only when it changes no layer before it. (The trainer's optimizer changes
// the weights between evaluations, never during one.)
class Evaluator {
 public:
  Evaluator(const model::Transformer& model, std::vector<Row> rows, model::AttentionPath path, int batch,
            const at::Device& device);

  // All rows, in order, from `start`; with opt.stop, possibly fewer (the rows done when it said
  // stop). A start from a cache with another batch count than these rows' is a caller's bug
  // (std::logic_error). With opt.mech from a cache at layer L, layers before L are left zero (not run).
  SequenceScores score(const ScoreOptions& opt = {}, const Start& start = Start::embeddings()) const;

  // The bytes a cache at any layer takes: every row's [T, D] in the working dtype.
  std::size_t cacheBytes() const;

  // The float32 logits of row `i` ([T, V]), for parity checks.
  at::Tensor rowLogits(std::size_t i) const;

  const model::Transformer& model() const { return model_; }
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
