#include "omn/eval/evaluator.h"

#include <optional>

#include "omn/errors.h"

namespace omn::eval {

Evaluator::Evaluator(const model::Transformer& model, std::vector<Row> rows, model::AttentionPath path, int batch,
                     const at::Device& device)
    : model_(model), rows_(std::move(rows)), path_(path), device_(device) {
  if (batch < 1) throw UsageError("--batch must be at least 1, got " + std::to_string(batch));
  // consecutive rows of equal length share a batch
  for (std::size_t i = 0; i < rows_.size();) {
    std::size_t n = 1;
    while (i + n < rows_.size() && n < static_cast<std::size_t>(batch) && rows_[i + n].tokens.size() == rows_[i].tokens.size()) ++n;
    batches_.push_back({i, n});
    i += n;
  }
  packed_ = anyRowPacked(rows_);
}

std::pair<at::Tensor, at::Tensor> Evaluator::tensors(const Batch& b) const {
  const std::int64_t T = static_cast<std::int64_t>(rows_[b.first].tokens.size());
  at::Tensor tok = at::empty({static_cast<std::int64_t>(b.count), T}, at::kLong);
  at::Tensor doc = at::empty_like(tok);
  for (std::size_t r = 0; r < b.count; ++r) {
    const Row& row = rows_[b.first + r];
    std::copy(row.tokens.begin(), row.tokens.end(), tok.data_ptr<std::int64_t>() + r * T);
    std::copy(row.doc.begin(), row.doc.end(), doc.data_ptr<std::int64_t>() + r * T);
  }
  return {tok, doc};
}

std::size_t ActivationCache::bytes() const {
  std::size_t n = 0;
  for (const auto& t : inputs) n += static_cast<std::size_t>(t.numel()) * t.element_size();
  return n;
}

std::size_t Evaluator::cacheBytes() const {
  std::size_t n = 0;
  const auto& emb = model_.weights().embedding;
  for (const auto& r : rows_) n += r.tokens.size() * static_cast<std::size_t>(model_.config().d_model) * emb.element_size();
  return n;
}

SequenceScores Evaluator::score(const ScoreOptions& opt, const Start& start) const {
  SequenceScores s;
  Progress p;
  p.rows_total = rows_.size();
  const int n_layers = model_.config().n_layers;
  auto* mech = opt.mech;
  if (mech) mech->assign(static_cast<std::size_t>(n_layers), LayerMechanism{});
  const ActivationCache* cache = start.cache();
  if (cache && cache->inputs.size() != batches_.size())  // a caller's bug, not a user's input: exit 1
    throw std::logic_error("Evaluator::score: a start from a cache of " + std::to_string(cache->inputs.size()) + " batches for " +
                           std::to_string(batches_.size()) + " batches (capture it from these rows first)");
  for (std::size_t bi = 0; bi < batches_.size(); ++bi) {
    const Batch& b = batches_[bi];
    if (opt.stop && opt.stop()) break;
    const auto [tok, doc] = tensors(b);
    const model::DocumentLayout layout = model::documentLayout(doc);
    const at::Tensor h = cache ? cache->inputs[bi] : model_.embed(tok.to(device_));
    // who listens to this pass: the statistics, the caller's subscribers
    model::ObserverSet observers;
    std::optional<MechanismObserver> batch_mech;
    if (mech) observers.add(&batch_mech.emplace(n_layers));
    for (model::ForwardObserver* o : opt.observers) observers.add(o);
    const at::Tensor out = model_.run(h, start.layer(), layout, path_, observers.empty() ? nullptr : &observers, opt.gains);
    for (const RowScore& r : scoreRows(model_, out, tok, doc, 0, opt.scored)) {
      s.nll_sum.push_back(r.nll);
      s.tokens.push_back(r.tokens);
      p.tokens_done += r.tokens;
      p.nll_done += r.nll;
    }
    if (mech)  // a running mean over batches (each batch weighs its row count); layers before the
               // start are not run here: the caller fills them from the full pass
      for (std::size_t l = static_cast<std::size_t>(start.layer()); l < mech->size(); ++l)
        foldBatch((*mech)[l], batch_mech->layers()[l], static_cast<double>(b.count) / static_cast<double>(p.rows_done + b.count),
                  p.rows_done == 0);
    p.rows_done += b.count;
    if (opt.progress) opt.progress(p);
  }
  return s;
}

at::Tensor Evaluator::rowLogits(std::size_t i) const {
  const auto [tok, doc] = tensors({i, 1});
  const model::DocumentLayout layout = model::documentLayout(doc);
  return model_.logits(model_.run(model_.embed(tok.to(device_)), 0, layout, path_))[0].cpu();
}

}  // namespace omn::eval
