// Uncertainty of perplexity from per-sequence NLL sums: contiguous groups, and seeded bootstrap
// over sequences (percentile intervals). Sweeps reuse the paired form: both conditions resampled
// with the same sequence indices. No libtorch.
#pragma once
#include <cstdint>
#include <vector>

namespace omn::eval {

struct SequenceScores {
  std::vector<double> nll_sum;       // per sequence, natural log
  std::vector<std::int64_t> tokens;  // scored tokens per sequence
  double totalNll() const;
  std::int64_t totalTokens() const;
  double perplexity() const;  // exp(total NLL / total tokens)
};

struct BootstrapSpec {
  int resamples = 10000;
  double confidence = 0.95;
  std::uint64_t seed = 0;
};

struct Interval {
  double estimate = 0, low = 0, high = 0;
};

// Percentile bootstrap of the corpus perplexity, resampling whole sequences with replacement.
Interval bootstrapPerplexity(const SequenceScores& s, const BootstrapSpec& spec);

// Paired bootstrap of condition B against control A on the same sequences: ΔNLL per token
// (B − A) and the perplexity ratio B / A, both from the same resampled indices.
struct PairedInterval {
  Interval delta_nll_per_token, ppl_ratio;
};
PairedInterval pairedBootstrap(const SequenceScores& a, const SequenceScores& b, const BootstrapSpec& spec);

// G contiguous groups (sequence i goes to group floor(i·G/N)); each group's perplexity.
struct Group {
  std::size_t first = 0, count = 0;
  double nll = 0;
  std::int64_t tokens = 0;
  double perplexity = 0;
};
std::vector<Group> groupPerplexities(const SequenceScores& s, int groups);

// The q-quantile of sorted values, linear interpolation between order statistics (type 7).
double quantile(const std::vector<double>& sorted, double q);

}  // namespace omn::eval
