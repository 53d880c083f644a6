#include "omn/audit/regression.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <string_view>

#include "omn/audit/profile.h"
#include "omn/errors.h"
#include "omn/json_pointer.h"
#include "omn/documents/document.h"
#include "omn/documents/legacy_documents.h"

namespace omn::audit {
namespace {

struct Rule {
  std::string pattern;
  double abs = 0, rel = 0;
};

}  // namespace

// One segment against a pattern where '*' is any run of characters: the greedy matcher that backs
// up only to the last star, O(|pattern| * |segment|) at worst (a regex of 40 stars backtracked
// exponentially).
static bool segmentMatches(std::string_view pat, std::string_view s) {
  std::size_t p = 0, i = 0, star = std::string_view::npos, mark = 0;
  while (i < s.size()) {
    if (p < pat.size() && pat[p] == '*') {
      star = p++;
      mark = i;
    } else if (p < pat.size() && pat[p] == s[i]) {
      ++p;
      ++i;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      i = ++mark;
    } else {
      return false;
    }
  }
  while (p < pat.size() && pat[p] == '*') ++p;
  return p == pat.size();
}

bool pointerMatches(std::string_view pattern, std::string_view pointer) {
  while (true) {
    const std::size_t a = pattern.find('/'), b = pointer.find('/');
    if (!segmentMatches(pattern.substr(0, a), pointer.substr(0, b))) return false;
    if (a == std::string_view::npos || b == std::string_view::npos) return a == b;
    pattern.remove_prefix(a + 1);
    pointer.remove_prefix(b + 1);
  }
}

namespace {

// A rule written before the counts were ranges (2026-12-01) names their old fields; it still means
// them: /statistics/count_in_1_2 is counts/[1,2]/count, count_above_32 counts/(32,inf)/count.
bool ruleMatches(const std::string& pattern, const std::string& pointer) {
  if (pointerMatches(pattern, pointer)) return true;
  for (const auto& c : documents::kLegacyCounts)
    if (pointer == c.pointer) return pointerMatches(pattern, c.field);
  return false;
}

struct Tolerances {
  bool given = false;
  double def_abs = 0, def_rel = 0;
  std::vector<Rule> rules;

  // allowed deviation for pointer p around baseline b; `fallback` when no file was given.
  double allowed(const std::string& p, double b, double fallback) const {
    if (!given) return fallback;
    for (const auto& r : rules)
      if (ruleMatches(r.pattern, p)) return std::max(r.abs, r.rel * std::fabs(b));
    return std::max(def_abs, def_rel * std::fabs(b));
  }
};

// An absent allowance allows nothing.
Tolerances tolerancesOf(const std::optional<documents::ToleranceDocument>& t) {
  Tolerances tol;
  if (!t) return tol;
  tol.given = true;
  if (t->fallback) tol.def_abs = t->fallback->abs.value_or(0.0), tol.def_rel = t->fallback->rel.value_or(0.0);
  if (t->rules)
    for (const auto& r : *t->rules) tol.rules.push_back({r.pointer, r.abs.value_or(0.0), r.rel.value_or(0.0)});
  return tol;
}

// An option's value as the document writes it: what a message shows the two of.
template <class T>
std::string asWritten(const T& v) {
  return nlohmann::json(v).dump();
}

// A baseline statistic on a count range this profile does not count is a usage error that names
// the flag, not drift: "--count-range '(32,inf)'" brings it back.
void requireCountRange(const std::string& ptr, const documents::ProfileOptionsRecord& options, const std::string& baseline_path) {
  const std::string prefix = "/statistics/counts/";
  if (ptr.rfind(prefix, 0) != 0) return;
  const auto slash = ptr.find('/', prefix.size());
  const std::string token = ptr.substr(prefix.size(), slash == std::string::npos ? std::string::npos : slash - prefix.size());
  nlohmann::json::json_pointer range;  // the range's token, unescaped (RFC 6901)
  try {
    range = nlohmann::json::json_pointer("/" + token);
  } catch (const nlohmann::json::exception&) {
    return;  // not a pointer any profile could hold: the check reports it absent
  }
  const std::string label = range.back();
  // the baseline's key must be a range written as a profile writes it, or no run could match it
  std::string canonical;
  try {
    canonical = parseCountRange(label, "count range").label();
  } catch (const UsageError& e) {
    throw FormatError(baseline_path + ": " + ptr + ": " + e.what());
  }
  if (canonical != label)
    throw FormatError(baseline_path + ": " + ptr + ": the count range '" + label + "' is written '" + canonical +
                      "' in a profile: use that");
  const std::vector<std::string> ranges = options.count_ranges.value_or(std::vector<std::string>{});
  if (std::find(ranges.begin(), ranges.end(), label) != ranges.end()) return;
  throw UsageError(baseline_path + ": " + ptr + ": the baseline counts the gains in " + label +
                   ", this profile does not: add --count-range '" + label + "'");
}

}  // namespace

std::string countPointer(const std::string& range_label) {
  return "/statistics/counts/" + escapePointerToken(range_label) + "/count";
}

bool Check::ok() const { return baseline ? present && std::fabs(actual - *baseline) <= allowed : !present; }

std::size_t RegressionReport::drifted() const {
  std::size_t n = 0;
  for (const auto& c : checks) n += !c.ok();
  return n;
}

std::vector<documents::Drift> RegressionReport::drifts() const {
  std::vector<documents::Drift> out;
  for (const auto& c : checks)
    if (!c.ok()) out.push_back({c.pointer, c.label, c.baseline, c.present ? std::optional<double>(c.actual) : std::nullopt, c.allowed});
  return out;
}

documents::RegressionVerdict regressionVerdict(const RegressionReport& r, const std::string& baseline_path,
                                               const std::string& tolerance_path) {
  const bool pass = r.drifted() == 0;
  documents::RegressionVerdict v;
  v.baseline = baseline_path;
  v.baseline_kind = r.baseline_kind;
  if (!tolerance_path.empty()) v.tolerance = tolerance_path;
  v.verdict = pass ? "pass" : "drift";
  v.exit_code = pass ? 0 : 3;
  v.checked = static_cast<std::int64_t>(r.checks.size());
  v.drifted = static_cast<std::int64_t>(r.drifted());
  v.drifts = r.drifts();
  return v;
}

Baseline readBaseline(nlohmann::json doc, const std::string& label) {
  const auto kind = documents::acceptDocument(doc, label, {documents::DocumentKind::profile, documents::DocumentKind::reference_profile});
  if (kind == documents::DocumentKind::reference_profile) return documents::ReferenceProfileDocument::fromJson(doc, label);
  return documents::ProfileDocument::fromJson(doc, label);
}

std::vector<std::pair<std::string, std::optional<double>>> comparableStatistics(const documents::ProfileDocument& p) {
  std::vector<std::pair<std::string, std::optional<double>>> out;
  auto add = [&](const std::string& ptr, std::optional<double> v) { out.emplace_back(ptr, v); };
  auto whole = [](std::optional<std::int64_t> n) { return n ? std::optional<double>(static_cast<double>(*n)) : std::nullopt; };
  const documents::ProfileStatistics& s = p.statistics;
  const std::pair<const char*, std::optional<double>> headline[] = {
      {"count", whole(s.count)},
      {"mean", s.mean},                {"std", s.std},
      {"min", s.min},                  {"max", s.max},
      {"share_above_threshold", s.share_above_threshold}, {"count_above_threshold", whole(s.count_above_threshold)},
      {"count_negative", whole(s.count_negative)}};
  for (const auto& [k, v] : headline) add(std::string("/statistics/") + k, v);
  if (s.count_non_finite) add("/statistics/count_non_finite", whole(s.count_non_finite));  // absent before it was counted
  for (const auto& [label, range] : s.counts) add(countPointer(label), whole(range.count));
  for (std::size_t j = 0; j < p.histogram.size(); ++j) add("/histogram/" + std::to_string(j) + "/count", whole(p.histogram[j].count));
  for (std::size_t l = 0; l < p.layers.size(); ++l)
    for (const char r : {'q', 'k'}) {
      const documents::GainVector& v = p.layers[l].role(r);
      const std::string at = "/layers/" + std::to_string(l) + "/" + r + "/";
      for (const auto& [k, x] : {std::pair<const char*, std::optional<double>>{"count", whole(v.count)}, {"mean", v.mean}, {"std", v.std},
                                 {"min", v.min}, {"max", v.max}})
        add(at + k, x);
    }
  const std::pair<const char*, const documents::Change*> changes[] = {
      {"all", &p.steepest_change.all}, {"q", &p.steepest_change.q}, {"k", &p.steepest_change.k}};
  for (const auto& [r, c] : changes) {
    add(std::string("/steepest_change/") + r + "/from", whole(c->from));
    add(std::string("/steepest_change/") + r + "/to", whole(c->to));
  }
  return out;
}

namespace {

// The pointers a baseline is checked at: a reference's figures, or a profile's statistics.
std::vector<std::string> baselinePointers(const Baseline& baseline) {
  std::vector<std::string> pointers;
  if (const auto* ref = std::get_if<documents::ReferenceProfileDocument>(&baseline)) {
    for (const auto& f : ref->figures) pointers.push_back(f.pointer);
  } else {
    for (const auto& [ptr, v] : comparableStatistics(std::get<documents::ProfileDocument>(baseline))) pointers.push_back(ptr);
  }
  return pointers;
}

// A profile baseline's threshold, histogram edges and pivot are this profile's: else the numbers
// would not mean the same thing.
void requireSameOptions(const documents::ProfileOptionsRecord& base, const documents::ProfileOptionsRecord& mine,
                        const std::string& baseline_path) {
  auto differ = [&](const char* opt, const std::string& b, const std::string& m) {
    throw UsageError(baseline_path + ": /options/" + opt + ": the baseline was computed with " + b + ", this profile with " + m +
                     "; use the same options");
  };
  if (base.threshold != mine.threshold) differ("threshold", asWritten(base.threshold), asWritten(mine.threshold));
  if (base.hist_edges != mine.hist_edges) differ("hist_edges", asWritten(base.hist_edges), asWritten(mine.hist_edges));
  if (base.pivot != mine.pivot) differ("pivot", asWritten(base.pivot), asWritten(mine.pivot));
}

// The deepest layer a reference's figure names (-1: none), and that figure's pointer.
std::pair<std::int64_t, std::string> deepestLayerNamed(const documents::ReferenceProfileDocument& ref) {
  std::int64_t need = -1;
  std::string which;
  for (const auto& f : ref.figures) {
    const std::string& ptr = f.pointer;
    if (ptr.rfind("/layers/", 0) != 0) continue;
    std::int64_t l = 0;
    std::size_t i = 8;
    for (; i < ptr.size() && i < 14 && std::isdigit(static_cast<unsigned char>(ptr[i])); ++i) l = l * 10 + (ptr[i] - '0');
    if (i > 8 && l > need) need = l, which = ptr;
  }
  return {need, which};
}

}  // namespace

void checkComparable(const Baseline& baseline, const documents::ProfileOptionsRecord& options, const std::string& baseline_path) {
  if (const auto* ref = std::get_if<documents::ReferenceProfileDocument>(&baseline)) {
    const std::optional<double> t = ref->options ? ref->options->threshold : std::nullopt;
    if (t && *t != options.threshold)
      throw UsageError(baseline_path + ": /options/threshold: the reference's figures use threshold " + asWritten(*t) + ", this profile " +
                       asWritten(options.threshold) + ": pass --threshold " + asWritten(*t));
  } else {
    requireSameOptions(std::get<documents::ProfileDocument>(baseline).options, options, baseline_path);
  }
  for (const auto& ptr : baselinePointers(baseline)) requireCountRange(ptr, options, baseline_path);
}

void checkSameArchitecture(const documents::ProfileDocument& profile, const Baseline& baseline, const std::string& baseline_path) {
  const std::int64_t n = profile.gains.n_layers, hd = profile.gains.head_dim;
  const std::string here = " (this checkpoint: " + std::to_string(n) + " layers, head_dim " + std::to_string(hd) + ")";
  if (const auto* ref = std::get_if<documents::ReferenceProfileDocument>(&baseline)) {
    // a reference records figures, not its shape: the deepest layer a figure names is the least it needs
    const auto [need, which] = deepestLayerNamed(*ref);
    if (need >= n)
      throw UsageError(baseline_path + ": another architecture: its figure " + which + " is of layer " + std::to_string(need) + here +
                       "; compare a checkpoint of the reference's shape, or against a profile of its own kind");
    return;
  }
  const documents::GainLayout& b = std::get<documents::ProfileDocument>(baseline).gains;
  if (b.n_layers != n || b.head_dim != hd)
    throw UsageError(baseline_path + ": another architecture: the baseline has " + std::to_string(b.n_layers) + " layers, head_dim " +
                     std::to_string(b.head_dim) + here + "; a drift check compares checkpoints of one shape");
}

std::vector<std::string> unmatchedRules(const Baseline& baseline, const std::optional<documents::ToleranceDocument>& tolerance) {
  const Tolerances tol = tolerancesOf(tolerance);
  const std::vector<std::string> pointers = baselinePointers(baseline);
  std::vector<std::string> out;
  for (std::size_t i = 0; i < tol.rules.size(); ++i)
    if (std::none_of(pointers.begin(), pointers.end(), [&](const std::string& p) { return ruleMatches(tol.rules[i].pattern, p); }))
      out.push_back("/rules/" + std::to_string(i) + " \"" + tol.rules[i].pattern + "\"");
  return out;
}

RegressionReport checkRegression(const documents::ProfileDocument& profile, const Baseline& baseline,
                                 const std::optional<documents::ToleranceDocument>& tolerance, const std::string& baseline_path) {
  const Tolerances tol = tolerancesOf(tolerance);
  checkComparable(baseline, profile.options, baseline_path);
  checkSameArchitecture(profile, baseline, baseline_path);
  const std::map<std::string, double> actual = profile.numbers();
  RegressionReport rep;
  // `floor`: a deviation always allowed, whatever the tolerance file says (a published figure's rounding)
  auto check = [&](const std::string& ptr, const std::string& label, std::optional<double> b, double fallback, double floor = 0) {
    Check c;
    c.pointer = ptr;
    c.label = label;
    c.baseline = b;
    c.allowed = b ? std::max(tol.allowed(ptr, *b, fallback), floor) : 0;  // a null matches only a null
    const auto it = actual.find(ptr);
    if (it != actual.end()) c.actual = it->second;
    else c.present = false;
    rep.checks.push_back(c);
  };
  if (const auto* ref = std::get_if<documents::ReferenceProfileDocument>(&baseline)) {
    rep.baseline_kind = "reference";
    for (const auto& f : ref->figures) {
      // the published figure is the true value rounded to d decimals: half a unit either way,
      // plus a hair for the binary representation of both numbers. A tolerance file may widen
      // that, never narrow it: a figure cannot be checked closer than it was published
      const double half = 0.5 * std::pow(10.0, -static_cast<int>(f.decimals)) * (1 + 1e-9) + 1e-12 * std::fabs(f.value);
      check(f.pointer, f.label.value_or(f.pointer), f.value, half, half);
    }
  } else {
    rep.baseline_kind = "profile";
    for (const auto& [ptr, b] : comparableStatistics(std::get<documents::ProfileDocument>(baseline)))
      check(ptr, ptr, b, 1e-12 * std::fabs(b.value_or(0)));
  }
  // NaN or infinite gains are drift from any baseline that does not have them itself (a reference,
  // or a profile written before they were counted): the statistics leave them out, the gate must not
  const std::string nf = "/statistics/count_non_finite";
  if (profile.statistics.count_non_finite.value_or(0) > 0 &&
      std::none_of(rep.checks.begin(), rep.checks.end(), [&](const Check& c) { return c.pointer == nf; }))
    check(nf, "non-finite gains (NaN, inf)", 0, 0);
  // a gate that checks nothing must not pass
  if (rep.checks.empty()) throw FormatError("baseline " + baseline_path + ": no statistic to compare against");
  return rep;
}

}  // namespace omn::audit
