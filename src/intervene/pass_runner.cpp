#include "pass_runner.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>

#include "omn/errors.h"
#include "omn/eval/divergence.h"
#include "omn/output/json_file.h"
#include "omn/output/table.h"

namespace omn::intervene::detail {

namespace {

// one entry per layer: every row of documents::kLayerMetrics, under its one name
std::vector<documents::MechanismLayer> mechanismTable(const std::vector<eval::LayerMechanism>& m) {
  std::vector<documents::MechanismLayer> table;
  for (std::size_t l = 0; l < m.size(); ++l) table.push_back({static_cast<std::int64_t>(l), m[l]});
  return table;
}

}  // namespace

Pass PassRunner::run(const std::string& what, bool capture, bool from_cache, bool mechanism, Against against,
                     const model::GainOverlay* gains) {
  ++step_;
  output::ProgressBar bar("[" + std::to_string(step_) + "/" + std::to_string(total_) + "] " + what, ev_.size(), tty_, false, "rows");
  eval::ScoreOptions so;
  std::int64_t tokens_done = 0;
  const auto started = std::chrono::steady_clock::now();
  so.progress = [&](const eval::Progress& p) {
    tokens_done = p.tokens_done;
    bar.update(p.rows_done, progressText(p, std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count()));
  };
  so.stop = o_.stop;
  std::vector<eval::LayerMechanism> mech;
  if (mechanism) so.mech = &mech;
  so.gains = gains;
  eval::ActivationCapture capturing(cache_.layer);  // the modes, as subscribers to the pass
  if (capture) so.observers.push_back(&capturing);
  eval::FinalStates control;
  if (against == Against::Keep) so.observers.push_back(&control);
  eval::Divergence divergence;
  std::optional<eval::DivergenceObserver> compare;
  if (against == Against::Compare) so.scored = &compare.emplace(ev_.model(), control_final_, divergence);
  Pass pass;
  pass.scores = ev_.score(so, from_cache ? eval::Start::at(cache_) : eval::Start::embeddings());
  if (capture) cache_ = capturing.take();
  if (against == Against::Keep) control_final_ = control.take();
  if (against == Against::Compare) pass.divergence = eval::divergenceSums(divergence);
  bar.finish();
  pass.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  seconds_ += pass.seconds;
  ++runs_;
  if (pass.scores.nll_sum.size() < ev_.size())
    throw Interrupted("interrupted during " + what + "; finished conditions are in " + jpath_ + ": rerun with --resume");
  if (mechanism) pass.mechanism = mechanismTable(mech);
  if (!tty_)
    spdlog::info("{}: perplexity {:.4f} ({} tokens, {:.1f} s, {:.0f} tokens/s)", what, pass.scores.perplexity(),
                 pass.scores.totalTokens(), pass.seconds, static_cast<double>(tokens_done) / std::max(pass.seconds, 1e-9));
  return pass;
}

std::string PassRunner::progressText(const eval::Progress& p, double here) const {
  const double frac = static_cast<double>(p.rows_done) / static_cast<double>(std::max<std::size_t>(1, p.rows_total));
  const double per_pass = (seconds_ + here) / (static_cast<double>(runs_) + frac);
  const double eta = per_pass * (static_cast<double>(total_ - step_) + (1 - frac));
  return "ppl " + output::fixed(std::exp(p.nll_done / std::max<std::int64_t>(1, p.tokens_done)), 3) + ", " +
         output::fixed(static_cast<double>(p.tokens_done) / std::max(here, 1e-9), 0) + " tok/s, sweep ETA " + output::fixed(eta, 0) + " s";
}

}  // namespace omn::intervene::detail
