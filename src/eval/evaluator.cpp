#include "omn/eval/evaluator.h"

#include <optional>

#include "omn/errors.h"
#include "omn/eval/scorer.h"

namespace omn::eval {

namespace {
// --cache-activations: the residual stream entering block `layer`, batch after batch.
class CacheCapture final : public model::ForwardObserver {
 public:
  explicit CacheCapture(ActivationCache& cache) : cache_(cache) {}
  bool wants(model::Intermediate what, int layer) const override {
    return what == model::Intermediate::BlockOutput && layer + 1 == cache_.layer;
  }
  void observe(const model::Announcement& a) override { cache_.inputs.push_back(a.value); }

 private:
  ActivationCache& cache_;
};
}  // namespace

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

SequenceScores Evaluator::score(const ScoreOptions& opt) const {
  SequenceScores s;
  Progress p;
  p.rows_total = rows_.size();
  const int n_layers = model_.config().n_layers;
  auto* mech = opt.mech;
  if (mech) mech->assign(static_cast<std::size_t>(n_layers), LayerMechanism{});
  // checked on entry: capture and from_cache both go through the cache
  // (a caller's bug, not a user's input: std::logic_error, exit 1)
  if ((opt.capture || opt.from_cache) && !opt.cache)
    throw std::logic_error("Evaluator::score: capture/from_cache need ScoreOptions::cache");
  if (opt.capture && opt.from_cache) throw std::logic_error("Evaluator::score: capture and from_cache exclude each other");
  if (opt.from_cache && opt.cache->inputs.size() != batches_.size())
    throw std::logic_error("Evaluator::score: from_cache with " + std::to_string(opt.cache->inputs.size()) + " cached batches for " +
                     std::to_string(batches_.size()) + " batches (capture first)");
  if (opt.capture) opt.cache->inputs.clear();
  if ((opt.reference_final == nullptr) != (opt.divergence == nullptr))
    throw std::logic_error("Evaluator::score: reference_final and divergence go together");
  if (opt.reference_final && opt.reference_final->size() != batches_.size())
    throw std::logic_error("Evaluator::score: " + std::to_string(opt.reference_final->size()) + " reference batches for " +
                           std::to_string(batches_.size()));
  if (opt.keep_final) opt.keep_final->clear();
  for (std::size_t bi = 0; bi < batches_.size(); ++bi) {
    const Batch& b = batches_[bi];
    if (opt.stop && opt.stop()) break;
    const auto [tok, doc] = tensors(b);
    const model::DocumentLayout layout = model::documentLayout(doc);
    at::Tensor h;
    int from = 0;
    if (opt.from_cache) {
      h = opt.cache->inputs.at(bi);
      from = opt.cache->layer;
    } else {
      h = model_.embed(tok.to(device_));
      if (opt.capture && opt.cache->layer == 0) opt.cache->inputs.push_back(h);
    }
    // who listens to this pass: the statistics, the cache, the caller's probe
    model::ObserverSet observers;
    std::optional<MechanismObserver> batch_mech;
    if (mech) observers.add(&batch_mech.emplace(n_layers));
    std::optional<CacheCapture> capture;
    if (opt.capture && opt.cache->layer > 0) observers.add(&capture.emplace(*opt.cache));
    observers.add(opt.observer);
    const at::Tensor out = model_.run(h, from, layout, path_, observers.empty() ? nullptr : &observers, opt.gains);
    if (opt.keep_final) opt.keep_final->push_back(out);
    const at::Tensor reference = opt.reference_final ? (*opt.reference_final)[bi] : at::Tensor();
    for (const RowScore& r : scoreRows(model_, out, tok, doc, 0, reference, opt.divergence ? &opt.divergence->kl_tokens : nullptr)) {
      s.nll_sum.push_back(r.nll);
      s.tokens.push_back(r.tokens);
      if (opt.divergence) {
        opt.divergence->kl_sum.push_back(r.kl);
        opt.divergence->top1_agree.push_back(r.top1_agree);
        opt.divergence->dp_correct_sum.push_back(r.dp_correct);
      }
      p.tokens_done += r.tokens;
      p.nll_done += r.nll;
    }
    if (mech)  // a running mean over batches (each batch weighs its row count); layers before
               // `from` are not run here: the caller fills them from the full pass
      for (std::size_t l = static_cast<std::size_t>(from); l < mech->size(); ++l) {
        auto& m = (*mech)[l];
        const auto& x = batch_mech->layers()[l];
        foldBatch(m, x, static_cast<double>(b.count) / static_cast<double>(p.rows_done + b.count), p.rows_done == 0);
      }
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
