#include "omn/eval/scores_record.h"

#include <cmath>

namespace omn::eval {

namespace {
std::optional<double> finiteScore(double v) { return std::isfinite(v) ? std::optional<double>(v) : std::nullopt; }
}  // namespace

documents::Scores scoresRecord(const SequenceScores& sc, const BootstrapSpec& b, int groups) {
  const Interval ci = bootstrapPerplexity(sc, b);
  documents::Scores out;
  for (const auto& x : groupPerplexities(sc, groups))
    out.groups.push_back({static_cast<std::int64_t>(x.first), static_cast<std::int64_t>(x.count), finiteScore(x.nll),
                          static_cast<std::int64_t>(x.tokens), finiteScore(x.perplexity)});
  for (double x : sc.nll_sum) out.sequences.nll_sum.push_back(finiteScore(x));
  out.sequences.tokens = sc.tokens;
  const double total = sc.totalNll();
  out.tokens = sc.totalTokens();
  out.nll_sum = finiteScore(total);
  out.mean_nll = finiteScore(total / static_cast<double>(out.tokens));
  const double ppl = sc.perplexity();
  out.perplexity = finiteScore(ppl);
  out.non_finite = !std::isfinite(ppl);
  out.perplexity_ci = {finiteScore(ci.low), finiteScore(ci.high), b.confidence, b.resamples, b.seed,
                       sc.nll_sum.size() < kMinBootstrapSequences ? kNoIntervalMethod : "percentile bootstrap over sequences"};
  return out;
}

}  // namespace omn::eval
