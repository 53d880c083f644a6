#include "omn/audit/profile.h"

#include <algorithm>
#include <cmath>
#include <cerrno>
#include <cstdlib>
#include <optional>
#include <sstream>

#include "omn/errors.h"
#include "omn/output/table.h"

namespace omn::audit {
namespace {

constexpr std::size_t kNonFiniteListed = 100;  // the count has them all

// Non-finite gains (NaN, +inf, -inf: a diverged run) are counted apart and enter no statistic,
// bin, share or list: one rule for every number of the profile (docs/profile.md).
struct Moments {
  std::size_t n = 0;           // finite values: the ones the moments describe
  std::size_t non_finite = 0;  // NaN and ±inf
  double mean = 0, std = 0, min = 0, max = 0;
};

// Two passes: the mean, then the population variance around it (no cancellation).
Moments moments(const std::vector<const std::vector<double>*>& parts) {
  Moments m;
  double sum = 0;
  m.min = INFINITY;
  m.max = -INFINITY;
  for (const auto* p : parts)
    for (double x : *p) {
      if (!std::isfinite(x)) {
        ++m.non_finite;
        continue;
      }
      sum += x;
      m.min = std::min(m.min, x);
      m.max = std::max(m.max, x);
      ++m.n;
    }
  if (m.n == 0) return m;
  m.mean = sum / static_cast<double>(m.n);
  double ss = 0;
  for (const auto* p : parts)
    for (double x : *p)
      if (std::isfinite(x)) ss += (x - m.mean) * (x - m.mean);
  m.std = std::sqrt(ss / static_cast<double>(m.n));
  return m;
}

// count: every value; mean/std/min/max: of the finite ones, empty (null) when there is none.
documents::Moments momentsRecord(const Moments& m) {
  documents::Moments r;
  r.count = static_cast<std::int64_t>(m.n + m.non_finite);
  r.count_non_finite = static_cast<std::int64_t>(m.non_finite);
  if (m.n) r.mean = m.mean, r.std = m.std, r.min = m.min, r.max = m.max;
  return r;
}

std::optional<double> finiteOrEmpty(double v) { return std::isfinite(v) ? std::optional<double>(v) : std::nullopt; }

const char* nonFiniteName(double x) { return std::isnan(x) ? "nan" : x > 0 ? "inf" : "-inf"; }

std::string num(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

bool closedLeft(double e, double pivot) { return e <= pivot; }

// Index of the bin holding x: 0 = below the first edge, edges.size() = above the last.
std::size_t binOf(double x, const ProfileOptions& o) {
  const auto& e = o.hist_edges;
  for (std::size_t j = 0; j < e.size(); ++j) {
    // x lies left of edge j (the edge belongs to the right interval when e_j <= pivot)
    if (closedLeft(e[j], o.pivot) ? x < e[j] : x <= e[j]) return j;
  }
  return e.size();
}

documents::RopePairAsymmetry rotaryAsymmetry(const std::vector<double>& g, std::int64_t head_dim, const std::string& style) {
  double sum = 0, mx = 0;
  std::size_t pairs = 0;
  const std::size_t hd = static_cast<std::size_t>(head_dim);
  for (std::size_t base = 0; base + hd <= g.size(); base += hd)
    for (std::size_t i = 0; i < hd / 2; ++i) {
      const std::size_t a = style == "interleaved" ? base + 2 * i : base + i;
      const std::size_t b = style == "interleaved" ? base + 2 * i + 1 : base + i + hd / 2;
      if (!std::isfinite(g[a]) || !std::isfinite(g[b])) continue;  // a pair with a non-finite gain is no pair
      const double d = std::fabs(g[a] - g[b]);
      sum += d;
      mx = std::max(mx, d);
      ++pairs;
    }
  return {static_cast<std::int64_t>(pairs), pairs ? sum / static_cast<double>(pairs) : 0.0, mx};
}

documents::Change steepest(const std::vector<double>& means) {
  documents::Change out;  // empty: no finite pair of layer means
  double best = -1;
  for (std::size_t i = 0; i + 1 < means.size(); ++i) {
    const double d = means[i + 1] - means[i];
    if (!std::isfinite(d)) continue;  // a layer without one finite gain has no mean
    if (std::fabs(d) > best) {
      best = std::fabs(d);
      out = {static_cast<std::int64_t>(i), static_cast<std::int64_t>(i + 1), d};
    }
  }
  return out;
}

constexpr std::size_t kMaxCountRanges = 64;  // each one is a pass over the gains and a key of the document

// A number of a count range: finite, or inf/-inf (strtod also reads "infinity"); never NaN.
double rangeEnd(std::string t, const std::string& text, const std::string& flag) {
  const auto b = t.find_first_not_of(' '), e = t.find_last_not_of(' ');
  t = b == std::string::npos ? "" : t.substr(b, e - b + 1);
  char* end = nullptr;
  errno = 0;
  const double v = t.empty() ? NAN : std::strtod(t.c_str(), &end);
  if (t.empty() || end != t.c_str() + t.size() || std::isnan(v))
    throw UsageError(flag + " '" + text + "': expected a number, inf or -inf, got '" + t + "'");
  if (errno == ERANGE && std::isinf(v))  // 1e400 would become inf: not the number written
    throw UsageError(flag + " '" + text + "': " + t + " is beyond the range of a double (at most ~1.8e308)");
  if (errno == ERANGE)  // 1e-400 would become zero or a denormal: not the number written either
    throw UsageError(flag + " '" + text + "': " + t + " is too close to zero for a double (below ~2.2e-308; write 0 for zero)");
  return v == 0 ? 0.0 : v;  // -0 is 0: one range, one label
}

}  // namespace

std::string CountRange::label() const {
  return std::string(lo_closed ? "[" : "(") + output::general(lo) + "," + output::general(hi) + (hi_closed ? "]" : ")");
}

bool CountRange::contains(double x) const {
  return (lo_closed ? x >= lo : x > lo) && (hi_closed ? x <= hi : x < hi);
}

CountRange parseCountRange(const std::string& text, const std::string& flag) {
  CountRange r;
  const std::string expected = "expected an interval such as [1,2] or (32,inf), or >x, >=x, <x, <=x";
  if (text.empty()) throw UsageError(flag + ": " + expected + ", got nothing");
  if (text[0] == '>' || text[0] == '<') {
    const bool closed = text.size() > 1 && text[1] == '=';
    const double v = rangeEnd(text.substr(closed ? 2 : 1), text, flag);
    if (text[0] == '>') r = {v, INFINITY, closed, false};
    else r = {-INFINITY, v, false, closed};
  } else {
    const char open = text.front(), close = text.back();
    const auto comma = text.find(',');
    if ((open != '[' && open != '(') || (close != ']' && close != ')') || comma == std::string::npos ||
        text.find(',', comma + 1) != std::string::npos || text.size() < 5)
      throw UsageError(flag + " '" + text + "': " + expected);
    r = {rangeEnd(text.substr(1, comma - 1), text, flag), rangeEnd(text.substr(comma + 1, text.size() - comma - 2), text, flag),
         open == '[', close == ']'};
  }
  if (std::isinf(r.lo) && r.lo_closed) throw UsageError(flag + " '" + text + "': an infinite end is open: write (" + output::general(r.lo) + ",...");
  if (std::isinf(r.hi) && r.hi_closed) throw UsageError(flag + " '" + text + "': an infinite end is open: write ...," + output::general(r.hi) + ")");
  if (!(r.lo < r.hi || (r.lo == r.hi && r.lo_closed && r.hi_closed)))
    throw UsageError(flag + " '" + text + "': the range holds no value (" + r.label() + ")");
  return r;
}

void validate(const ProfileOptions& o) {
  if (o.hist_edges.empty()) throw UsageError("--hist-edges: expected at least one edge");
  for (std::size_t i = 0; i < o.hist_edges.size(); ++i) {
    if (!std::isfinite(o.hist_edges[i])) throw UsageError("--hist-edges: edge " + std::to_string(i) + " is not finite");
    if (i && !(o.hist_edges[i] > o.hist_edges[i - 1]))
      throw UsageError("--hist-edges: edges must increase strictly, got " + num(o.hist_edges[i - 1]) + " then " +
                       num(o.hist_edges[i]));
  }
  if (!std::isfinite(o.threshold)) throw UsageError("--threshold: expected a finite number");
  if (!std::isfinite(o.pivot)) throw UsageError("--hist-pivot: expected a finite number, got " + num(o.pivot));
  if (o.top_k < 0) throw UsageError("--top-k: expected a count >= 0, got " + std::to_string(o.top_k));
  if (o.count_ranges.size() > kMaxCountRanges)
    throw UsageError("--count-range: at most " + std::to_string(kMaxCountRanges) + " ranges, got " +
                     std::to_string(o.count_ranges.size()));
  for (std::size_t i = 0; i < o.count_ranges.size(); ++i) {
    const CountRange& r = o.count_ranges[i];
    parseCountRange(r.label(), "--count-range");  // the same rules for ranges built in code
    for (std::size_t j = 0; j < i; ++j)
      if (o.count_ranges[j].label() == r.label()) throw UsageError("--count-range: " + r.label() + " is given twice");
  }
}

std::vector<std::string> histogramLabels(const ProfileOptions& o) {
  const auto& e = o.hist_edges;
  std::vector<std::string> labels;
  labels.push_back((closedLeft(e[0], o.pivot) ? "<" : "<=") + num(e[0]));
  for (std::size_t j = 0; j + 1 < e.size(); ++j)
    labels.push_back(std::string(closedLeft(e[j], o.pivot) ? "[" : "(") + num(e[j]) + "," + num(e[j + 1]) +
                     (closedLeft(e[j + 1], o.pivot) ? ")" : "]"));
  labels.push_back((closedLeft(e.back(), o.pivot) ? ">=" : ">") + num(e.back()));
  return labels;
}

documents::ProfileOptionsRecord optionsRecord(const ProfileOptions& o) {
  std::vector<std::string> ranges;
  for (const auto& r : o.count_ranges) ranges.push_back(r.label());
  return {o.threshold, o.hist_edges, o.pivot, o.top_k, ranges};
}

namespace {
// The gains' distribution in bins chosen from the data, not from options set for one model (the
// default edges 0,1,2,4,8,16,32 fit OMN-1 and leave 6 of 8 bins empty on a model trained here):
// equal-width bins over [min, max] of the finite gains, as many as Rice's rule gives
// (ceil(2 n^(1/3))), between 8 and 40; each bin [lo, hi), the last [lo, max].
template <class Coords>
documents::Distribution distributionOf(const Coords& coords) {
  documents::Distribution out{"equal width over [min, max], ceil(2 n^(1/3)) bins (Rice), 8 to 40", {}};
  if (coords.empty()) return out;
  double lo = INFINITY, hi = -INFINITY;
  for (const auto& c : coords) lo = std::min(lo, c.v), hi = std::max(hi, c.v);
  const double n = static_cast<double>(coords.size());
  const std::size_t k = hi > lo ? std::clamp<std::size_t>(static_cast<std::size_t>(std::ceil(2 * std::cbrt(n))), 8, 40) : 1;
  const double w = hi > lo ? (hi - lo) / static_cast<double>(k) : 0;
  std::vector<std::int64_t> count(k, 0);
  for (const auto& c : coords) {
    std::size_t j = w > 0 ? static_cast<std::size_t>((c.v - lo) / w) : 0;
    ++count[std::min(j, k - 1)];
  }
  for (std::size_t j = 0; j < k; ++j)
    out.bins.push_back({lo + w * static_cast<double>(j), j + 1 == k ? hi : lo + w * static_cast<double>(j + 1), count[j]});
  return out;
}

// A finite gain and where it is: for the distribution and the largest gains.
struct GainCoord {
  double v;
  int layer;
  Role role;
  std::size_t idx;
};

documents::Coordinate coordinateRecord(const GainCoord& c) { return {c.layer, roleName(c.role), static_cast<std::int64_t>(c.idx), c.v}; }

// One pass over every gain: the finite ones counted against the threshold, the count ranges and
// the histogram's bins, the negative ones listed, the non-finite ones listed (the first few).
struct GainTally {
  std::size_t above = 0;
  std::vector<std::size_t> in_range, hist;
  std::vector<documents::Coordinate> negatives;
  std::vector<documents::NonFiniteCoordinate> non_finite;
  std::vector<GainCoord> coords;
};

GainTally tallyGains(const GainSet& gains, const ProfileOptions& o) {
  GainTally t;
  t.in_range.assign(o.count_ranges.size(), 0);
  t.hist.assign(o.hist_edges.size() + 1, 0);
  for (const auto& v : gains.vectors)
    for (std::size_t i = 0; i < v.values.size(); ++i) {
      const double x = v.values[i];
      if (!std::isfinite(x)) {  // counted in the moments' non_finite; the first few listed with their place
        if (t.non_finite.size() < kNonFiniteListed)
          t.non_finite.push_back({v.layer, roleName(v.role), static_cast<std::int64_t>(i), nonFiniteName(x)});
        continue;
      }
      t.above += x > o.threshold;
      for (std::size_t r = 0; r < t.in_range.size(); ++r) t.in_range[r] += o.count_ranges[r].contains(x);
      ++t.hist[binOf(x, o)];
      const GainCoord c{x, v.layer, v.role, i};
      if (x < 0) t.negatives.push_back(coordinateRecord(c));
      t.coords.push_back(c);
    }
  return t;
}

// The whole set's moments, the share above the threshold (of the finite gains), and each count range.
documents::ProfileStatistics statisticsRecord(const Moments& m, const GainTally& t, const ProfileOptions& o) {
  documents::ProfileStatistics stats;
  static_cast<documents::Moments&>(stats) = momentsRecord(m);
  stats.share_above_threshold = m.n ? static_cast<double>(t.above) / static_cast<double>(m.n) : 0.0;  // of the finite
  stats.count_above_threshold = static_cast<std::int64_t>(t.above);
  stats.count_negative = static_cast<std::int64_t>(t.negatives.size());
  for (std::size_t r = 0; r < t.in_range.size(); ++r) {
    const CountRange& cr = o.count_ranges[r];  // an unbounded end is empty (null)
    stats.counts[cr.label()] = {finiteOrEmpty(cr.lo), finiteOrEmpty(cr.hi), cr.lo_closed, cr.hi_closed,
                                static_cast<std::int64_t>(t.in_range[r])};
  }
  return stats;
}

// The bins of --hist-edges with their labels; the outer two are unbounded (null).
std::vector<documents::HistogramBin> histogramOf(const std::vector<std::size_t>& hist, const ProfileOptions& o) {
  std::vector<documents::HistogramBin> histogram;
  const auto labels = histogramLabels(o);
  for (std::size_t j = 0; j < hist.size(); ++j) {
    documents::HistogramBin bin{labels[j], std::nullopt, std::nullopt, static_cast<std::int64_t>(hist[j])};
    if (j > 0) bin.lo = o.hist_edges[j - 1];
    if (j + 1 < hist.size()) bin.hi = o.hist_edges[j];
    histogram.push_back(bin);
  }
  return histogram;
}

// One Q or K vector of a layer: its moments, tensor, dtype and RoPE pair asymmetry.
documents::GainVector vectorRecord(const GainVector& v, const Moments& m, const GainSet& gains) {
  documents::GainVector r;
  static_cast<documents::Moments&>(r) = momentsRecord(m);
  r.tensor = v.tensor;
  r.dtype = io::dtypeName(v.dtype);
  r.rope_pair_asymmetry = rotaryAsymmetry(v.values, gains.head_dim, gains.rope_style);
  return r;
}

// Each layer's Q and K vectors, and the layer means (NaN for a layer without a finite gain) the
// steepest change is found in.
struct LayerTable {
  std::vector<documents::ProfileLayer> layers;
  std::vector<double> mean_all, mean_q, mean_k;
};

LayerTable layerTable(const GainSet& gains) {
  LayerTable t;
  for (int l = 0; l < gains.n_layers; ++l) {
    const GainVector& q = gains.at(l, Role::Q);
    const GainVector& k = gains.at(l, Role::K);
    const Moments mq = moments({&q.values}), mk = moments({&k.values}), ma = moments({&q.values, &k.values});
    const double mean = ma.n ? ma.mean : NAN, mean_q_l = mq.n ? mq.mean : NAN, mean_k_l = mk.n ? mk.mean : NAN;
    t.layers.push_back(
        {l, vectorRecord(q, mq, gains), vectorRecord(k, mk, gains), finiteOrEmpty(mean), finiteOrEmpty(mean_q_l - mean_k_l)});
    t.mean_all.push_back(mean);
    t.mean_q.push_back(mean_q_l);
    t.mean_k.push_back(mean_k_l);
  }
  return t;
}

// The top_k largest finite gains, largest first (ties in the gains' order).
std::vector<documents::Coordinate> topGains(std::vector<GainCoord> coords, int top_k) {
  std::stable_sort(coords.begin(), coords.end(), [](const GainCoord& a, const GainCoord& b) { return a.v > b.v; });
  std::vector<documents::Coordinate> top;
  for (std::size_t i = 0; i < coords.size() && i < static_cast<std::size_t>(top_k); ++i) top.push_back(coordinateRecord(coords[i]));
  return top;
}

// What the preset says of the gains: how they are stored and laid out.
documents::GainLayout gainLayoutOf(const GainSet& gains) {
  const bool one_plus = gains.parametrisation == model::GainParametrisation::OnePlus;
  return {gains.preset,
          one_plus ? "one_plus" : "direct",
          one_plus ? "1 + stored weight" : "stored weight",
          gains.layout == model::GainLayout::Head ? "head" : "projection",
          gains.head_dim,
          gains.rope_style,
          gains.n_layers,
          static_cast<std::int64_t>(gains.vectors.size())};
}
}  // namespace

documents::ProfileDocument computeProfile(const GainSet& gains, const ProfileOptions& o) {
  validate(o);
  std::vector<const std::vector<double>*> all;
  for (const auto& v : gains.vectors) all.push_back(&v.values);
  const Moments m = moments(all);
  GainTally tally = tallyGains(gains, o);
  LayerTable per_layer = layerTable(gains);
  documents::ProfileDocument p;
  p.options = optionsRecord(o);
  p.gains = gainLayoutOf(gains);
  p.statistics = statisticsRecord(m, tally, o);
  p.histogram = histogramOf(tally.hist, o);
  p.distribution = distributionOf(tally.coords);
  p.layers = std::move(per_layer.layers);
  p.steepest_change = {steepest(per_layer.mean_all), steepest(per_layer.mean_q), steepest(per_layer.mean_k)};
  p.top = topGains(tally.coords, o.top_k);
  p.negatives = std::move(tally.negatives);
  p.non_finite = std::move(tally.non_finite);
  return p;
}

}  // namespace omn::audit
