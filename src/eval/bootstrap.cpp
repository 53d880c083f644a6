#include "omn/eval/bootstrap.h"

#include <algorithm>
#include <numeric>
#include <cmath>
#include <string>

#include "omn/errors.h"
#include "omn/eval/token_set.h"
#include "omn/split_mix64.h"

namespace omn::eval {

double SequenceScores::totalNll() const {
  double s = 0;
  for (double x : nll_sum) s += x;
  return s;
}

std::int64_t SequenceScores::totalTokens() const {
  std::int64_t n = 0;
  for (auto t : tokens) n += t;
  return n;
}

double SequenceScores::perplexity() const {
  const auto n = totalTokens();
  return n ? std::exp(totalNll() / static_cast<double>(n)) : std::nan("");
}

double quantile(const std::vector<double>& v, double q) {
  if (v.empty()) return std::nan("");
  const double pos = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const std::size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (pos - static_cast<double>(lo)) * (v[hi] - v[lo]);
}

namespace {

void validate(const BootstrapSpec& spec, std::size_t n) {
  if (spec.resamples < 1) throw UsageError("bootstrap resamples must be >= 1, got " + std::to_string(spec.resamples));
  if (!(spec.confidence > 0 && spec.confidence < 1))
    throw UsageError("bootstrap confidence must be in (0, 1), got " + std::to_string(spec.confidence));
  if (n == 0) throw UsageError("no sequences to bootstrap");
}

Interval interval(std::vector<double>& stats, double estimate, double confidence) {
  std::sort(stats.begin(), stats.end());
  return {estimate, quantile(stats, (1 - confidence) / 2), quantile(stats, (1 + confidence) / 2)};
}

}  // namespace

Interval bootstrapPerplexity(const SequenceScores& s, const BootstrapSpec& spec) {
  const std::size_t n = s.nll_sum.size();
  validate(spec, n);
  if (n < kMinBootstrapSequences) return {s.perplexity(), std::nan(""), std::nan("")};
  SplitMix64 rng(spec.seed);
  std::vector<double> stats(static_cast<std::size_t>(spec.resamples));
  for (auto& st : stats) {
    double nll = 0;
    std::int64_t tok = 0;
    for (std::size_t j = 0; j < n; ++j) {
      const std::size_t i = rng.below(n);
      nll += s.nll_sum[i];
      tok += s.tokens[i];
    }
    st = tok ? std::exp(nll / static_cast<double>(tok)) : std::nan("");
  }
  return interval(stats, s.perplexity(), spec.confidence);
}

PairedInterval pairedBootstrap(const SequenceScores& a, const SequenceScores& b, const BootstrapSpec& spec,
                               double simultaneous_confidence) {
  const std::size_t n = a.nll_sum.size();
  validate(spec, n);
  if (b.nll_sum.size() != n || a.tokens != b.tokens)
    throw Error("paired bootstrap: the two conditions were not scored on the same sequences");
  if (n < kMinBootstrapSequences) {
    const double d = (b.totalNll() - a.totalNll()) / static_cast<double>(a.totalTokens());
    const Interval delta{d, std::nan(""), std::nan("")}, ratio{std::exp(d), std::nan(""), std::nan("")};
    return {delta, ratio, std::nan(""), delta, ratio};
  }
  SplitMix64 rng(spec.seed);
  std::vector<double> delta(static_cast<std::size_t>(spec.resamples)), ratio(delta.size());
  for (std::size_t r = 0; r < delta.size(); ++r) {
    double na = 0, nb = 0;
    std::int64_t tok = 0;
    for (std::size_t j = 0; j < n; ++j) {
      const std::size_t i = rng.below(n);
      na += a.nll_sum[i];
      nb += b.nll_sum[i];
      tok += a.tokens[i];
    }
    const double d = tok ? (nb - na) / static_cast<double>(tok) : std::nan("");
    delta[r] = d;
    ratio[r] = std::exp(d);  // ppl_B / ppl_A = exp(ΔNLL per token)
  }
  const double d = (b.totalNll() - a.totalNll()) / static_cast<double>(a.totalTokens());
  std::size_t at_or_below = 0, at_or_above = 0;
  for (double x : delta) {
    at_or_below += x <= 0;
    at_or_above += x >= 0;
  }
  // the Monte Carlo p-value counts the observed difference as one of the resamples: (1 + k) / (1 + B),
  // never 0 (no resample past 0 says p < 1/B, not p = 0)
  const double r = static_cast<double>(delta.size());
  const double k = static_cast<double>(std::min(at_or_below, at_or_above));
  PairedInterval out{interval(delta, d, spec.confidence), interval(ratio, std::exp(d), spec.confidence),
                     std::min(1.0, 2 * (1 + k) / (1 + r)), {}, {}};
  if (simultaneous_confidence > 0) {  // the sorted resamples again, at the wider level
    out.simultaneous_delta = interval(delta, d, simultaneous_confidence);
    out.simultaneous_ratio = interval(ratio, std::exp(d), simultaneous_confidence);
  }
  return out;
}

std::vector<double> holmAdjusted(const std::vector<double>& p) {
  const std::size_t m = p.size();
  std::vector<std::size_t> order(m);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) { return p[x] < p[y]; });
  std::vector<double> out(m);
  double running = 0;
  for (std::size_t k = 0; k < m; ++k) {
    running = std::max(running, std::min(1.0, p[order[k]] * static_cast<double>(m - k)));
    out[order[k]] = running;
  }
  return out;
}

void checkGroups(int groups, std::size_t n, const std::string& name) {
  if (groups < 1 || static_cast<std::size_t>(groups) > n)
    throw UsageError(name + " must be between 1 and the number of sequences (" + std::to_string(n) + "), got " +
                     std::to_string(groups));
}

std::vector<Group> groupPerplexities(const SequenceScores& s, int groups) {
  const std::size_t n = s.nll_sum.size();
  checkGroups(groups, n);
  std::vector<Group> out(static_cast<std::size_t>(groups));
  for (std::size_t i = 0; i < n; ++i) {
    Group& g = out[i * static_cast<std::size_t>(groups) / n];
    if (g.count == 0) g.first = i;
    ++g.count;
    g.nll += s.nll_sum[i];
    g.tokens += s.tokens[i];
  }
  for (auto& g : out) g.perplexity = g.tokens ? std::exp(g.nll / static_cast<double>(g.tokens)) : std::nan("");
  return out;
}

}  // namespace omn::eval
