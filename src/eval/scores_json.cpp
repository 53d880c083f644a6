#include "omn/eval/scores_json.h"

#include <cmath>

#include "omn/output/json_file.h"

namespace omn::eval {

nlohmann::json scoresJson(const SequenceScores& sc, const BootstrapSpec& b, int groups) {
  using output::finiteOrNull;
  const Interval ci = bootstrapPerplexity(sc, b);
  nlohmann::json g = nlohmann::json::array();
  for (const auto& x : groupPerplexities(sc, groups))
    g.push_back({{"first", x.first}, {"count", x.count}, {"nll_sum", x.nll}, {"tokens", x.tokens},
                 {"perplexity", finiteOrNull(x.perplexity)}});
  const double total = sc.totalNll();
  const auto tokens = sc.totalTokens();
  nlohmann::json nll = nlohmann::json::array();
  for (double x : sc.nll_sum) nll.push_back(finiteOrNull(x));
  const double ppl = sc.perplexity();
  return {{"sequences", {{"nll_sum", nll}, {"tokens", sc.tokens}}},
          {"nll_sum", finiteOrNull(total)},
          {"tokens", tokens},
          {"mean_nll", finiteOrNull(total / static_cast<double>(tokens))},
          {"perplexity", finiteOrNull(ppl)},
          {"non_finite", !std::isfinite(ppl)},
          {"perplexity_ci",
           {{"low", finiteOrNull(ci.low)}, {"high", finiteOrNull(ci.high)}, {"confidence", b.confidence},
            {"resamples", b.resamples}, {"seed", b.seed}, {"method", "percentile bootstrap over sequences"}}},
          {"groups", g}};
}

}  // namespace omn::eval
