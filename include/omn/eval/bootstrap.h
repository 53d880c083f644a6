// Uncertainty of perplexity from per-sequence NLL sums: contiguous groups, and seeded bootstrap
// over sequences (percentile intervals). Sweeps reuse the paired form: both conditions resampled
// with the same sequence indices. No libtorch.
#pragma once
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "omn/io/choice.h"

namespace omn::eval {

struct SequenceScores {
  std::vector<double> nll_sum;       // per sequence, natural log
  std::vector<std::int64_t> tokens;  // scored tokens per sequence
  double totalNll() const;
  std::int64_t totalTokens() const;
  double perplexity() const;  // exp(total NLL / total tokens)
};

// How intervals and p-values account for the many conditions of one sweep: not at all, Bonferroni
// (intervals at 1 − α/m, p-values × m), or Holm's step-down p-values (with the Bonferroni intervals,
// which Holm's procedure does not improve on).
enum class Multiplicity { None, Bonferroni, Holm };
inline constexpr std::array<io::Named<Multiplicity>, 3> kMultiplicity{
    {{"none", Multiplicity::None}, {"bonferroni", Multiplicity::Bonferroni}, {"holm", Multiplicity::Holm}}};

struct BootstrapSpec {
  int resamples = 10000;
  double confidence = 0.95;
  std::uint64_t seed = 0;
  Multiplicity multiplicity = Multiplicity::None;
};

struct Interval {
  double estimate = 0, low = 0, high = 0;
};

// A bootstrap over sequences needs two: of one sequence every resample is that sequence, and its
// interval would have no width and its p-value no meaning. With fewer than kMinBootstrapSequences the
// intervals' bounds and the p-value are NaN (recorded as null: no interval), the estimates kept.
inline constexpr std::size_t kMinBootstrapSequences = 2;
inline constexpr const char* kNoIntervalMethod = "none: a bootstrap over sequences needs at least two, and one was scored";

// Percentile bootstrap of the corpus perplexity, resampling whole sequences with replacement.
Interval bootstrapPerplexity(const SequenceScores& s, const BootstrapSpec& spec);

// Paired bootstrap of condition B against control A on the same sequences: ΔNLL per token
// (B − A) and the perplexity ratio B / A, both from the same resampled indices.
// `p_value`: two-sided percentile-bootstrap p-value of ΔNLL = 0, min(1, 2 · (1 + k) / (1 + B)) with k
// the fewer of the resamples with Δ ≤ 0 and with Δ ≥ 0 and B the resamples: never 0, at least
// 2 / (1 + B) (the observed difference counts as one draw; Davison & Hinkley 1997, §4.2). With `simultaneous_confidence` > 0 the same resamples also give
// intervals at that level (Bonferroni: 1 − α/m).
struct PairedInterval {
  Interval delta_nll_per_token, ppl_ratio;
  double p_value = 1;
  Interval simultaneous_delta, simultaneous_ratio;
};
PairedInterval pairedBootstrap(const SequenceScores& a, const SequenceScores& b, const BootstrapSpec& spec,
                               double simultaneous_confidence = 0);

// Holm's step-down adjustment of m p-values (in their order): p_(i) · (m − i + 1) over the sorted
// p-values, made monotone, capped at 1.
std::vector<double> holmAdjusted(const std::vector<double>& p);

// G contiguous groups (sequence i goes to group floor(i·G/N)); each group's perplexity.
struct Group {
  std::size_t first = 0, count = 0;
  double nll = 0;
  std::int64_t tokens = 0;
  double perplexity = 0;
};
// UsageError unless 1 <= groups <= n (the sequences scored), naming `name` (the flag or the manifest's
// pointer): checked before scoring, and again here.
void checkGroups(int groups, std::size_t n, const std::string& name = "--groups");
// The groups a run splits its rows into: as given (--groups, a manifest's /groups), else the default
// (5) or every row where fewer were scored (a long-context eval of three rows, --up-to's short set).
inline constexpr int kDefaultGroups = 5;
inline int resolveGroups(int groups, bool given, std::size_t rows) {
  return given ? groups : static_cast<int>(std::max<std::size_t>(1, std::min<std::size_t>(static_cast<std::size_t>(groups), rows)));
}
std::vector<Group> groupPerplexities(const SequenceScores& s, int groups);

// The q-quantile of sorted values, linear interpolation between order statistics (type 7).
double quantile(const std::vector<double>& sorted, double q);

}  // namespace omn::eval
