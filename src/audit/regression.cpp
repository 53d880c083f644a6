#include "omn/audit/regression.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <string_view>

#include "omn/audit/profile.h"
#include "omn/errors.h"
#include "omn/json_pointer.h"
#include "omn/documents/document.h"
#include "omn/documents/legacy_documents.h"
#include "omn/io/json_document.h"

namespace omn::audit {
namespace {

using nlohmann::json;

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

Tolerances parseTolerance(const json& t, const std::string& file) {
  Tolerances tol;
  if (t.is_null()) return tol;
  tol.given = true;
  documents::checkDocument(t, "tolerance " + file, {documents::DocumentKind::tolerance});  // every field below is present and typed
  tol.def_abs = t.value("default", json::object()).value("abs", 0.0);
  tol.def_rel = t.value("default", json::object()).value("rel", 0.0);
  for (const json& r : t.value("rules", json::array()))
    tol.rules.push_back({r["pointer"].get<std::string>(), r.value("abs", 0.0), r.value("rel", 0.0)});
  return tol;
}

// A baseline statistic on a count range this profile does not count is a usage error that names
// the flag, not drift: "--count-range '(32,inf)'" brings it back.
void requireCountRange(const std::string& ptr, const json& options, const std::string& baseline_path) {
  const std::string prefix = "/statistics/counts/";
  if (ptr.rfind(prefix, 0) != 0) return;
  const auto slash = ptr.find('/', prefix.size());
  json::json_pointer range;
  try {
    range = json::json_pointer("/" + ptr.substr(prefix.size(), slash == std::string::npos ? std::string::npos : slash - prefix.size()));
  } catch (const json::exception&) {
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
  const json ranges = options.value("count_ranges", json::array());
  if (std::find(ranges.begin(), ranges.end(), json(label)) != ranges.end()) return;
  throw UsageError(baseline_path + ": " + ptr + ": the baseline counts the gains in " + label +
                   ", this profile does not: add --count-range '" + label + "'");
}

const json* at(const json& doc, const std::string& ptr) {
  try {
    const json& v = doc.at(json::json_pointer(ptr));
    return v.is_number() ? &v : nullptr;
  } catch (const json::exception&) {
    return nullptr;
  }
}

}  // namespace

std::string countPointer(const std::string& range_label) {
  return "/statistics/counts/" + escapePointerToken(range_label) + "/count";
}

bool Check::ok() const { return present && std::fabs(actual - baseline) <= allowed; }

nlohmann::json regressionJson(const RegressionReport& r, const std::string& baseline_path, const std::string& tolerance_path) {
  nlohmann::json drifts = nlohmann::json::array();
  for (const auto& c : r.checks)
    if (!c.ok())
      drifts.push_back({{"pointer", c.pointer}, {"label", c.label}, {"baseline", c.baseline},
                        {"actual", c.present ? nlohmann::json(c.actual) : nlohmann::json(nullptr)}, {"allowed", c.allowed}});
  const bool pass = r.drifted() == 0;
  return {{"baseline", baseline_path}, {"baseline_kind", r.baseline_kind},
          {"tolerance", tolerance_path.empty() ? nlohmann::json(nullptr) : nlohmann::json(tolerance_path)},
          {"verdict", pass ? "pass" : "drift"}, {"exit_code", pass ? 0 : 3},
          {"checked", r.checks.size()}, {"drifted", r.drifted()}, {"drifts", drifts}};
}

std::size_t RegressionReport::drifted() const {
  std::size_t n = 0;
  for (const auto& c : checks) n += !c.ok();
  return n;
}

std::vector<std::pair<std::string, double>> comparableStatistics(const json& p) {
  std::vector<std::pair<std::string, double>> out;
  auto add = [&](const std::string& ptr) {
    if (const json* v = at(p, ptr)) out.emplace_back(ptr, v->get<double>());
  };
  for (const char* k : {"count", "count_non_finite", "mean", "std", "min", "max", "share_above_threshold",
                        "count_above_threshold", "count_negative"})
    add(std::string("/statistics/") + k);
  if (const json* counts = p.contains("statistics") ? &p["statistics"] : nullptr; counts && counts->contains("counts"))
    for (const auto& [label, range] : (*counts)["counts"].items()) add(countPointer(label));
  if (p.contains("histogram"))
    for (std::size_t j = 0; j < p["histogram"].size(); ++j) add("/histogram/" + std::to_string(j) + "/count");
  if (p.contains("layers"))
    for (std::size_t l = 0; l < p["layers"].size(); ++l)
      for (const char* r : {"q", "k"})
        for (const char* k : {"count", "mean", "std", "min", "max"})
          add("/layers/" + std::to_string(l) + "/" + r + "/" + k);
  for (const char* r : {"all", "q", "k"}) {
    add(std::string("/steepest_change/") + r + "/from");
    add(std::string("/steepest_change/") + r + "/to");
  }
  return out;
}

namespace {

bool isReference(const json& baseline) {
  return baseline.value("schema", "") == documents::schemaId(documents::DocumentKind::reference_profile);
}

// The pointers a baseline is checked at: a reference's figures, or a profile's statistics.
std::vector<std::string> baselinePointers(const json& baseline) {
  std::vector<std::string> pointers;
  if (isReference(baseline)) {
    for (const auto& f : baseline.value("figures", json::array()))
      if (f.contains("pointer") && f["pointer"].is_string()) pointers.push_back(f["pointer"]);
  } else {
    for (const auto& [ptr, v] : comparableStatistics(baseline)) pointers.push_back(ptr);
  }
  return pointers;
}

}  // namespace

void checkComparable(const json& baseline, const json& options, const std::string& baseline_path) {
  const json none = json::object();
  const json& bo = baseline.contains("options") && baseline["options"].is_object() ? baseline["options"] : none;
  if (isReference(baseline)) {
    if (bo.contains("threshold") && bo["threshold"] != options.value("threshold", json()))
      throw UsageError(baseline_path + ": /options/threshold: the reference's figures use threshold " + bo["threshold"].dump() +
                       ", this profile " + options.value("threshold", json()).dump() + ": pass --threshold " + bo["threshold"].dump());
  } else {
    for (const char* opt : {"threshold", "hist_edges", "pivot"})
      if (bo.contains(opt) && bo[opt] != options.value(opt, json()))
        throw UsageError(baseline_path + ": /options/" + opt + ": the baseline was computed with " + bo[opt].dump() +
                         ", this profile with " + options.value(opt, json()).dump() + "; use the same options");
  }
  for (const auto& ptr : baselinePointers(baseline)) requireCountRange(ptr, options, baseline_path);
}

void checkSameArchitecture(const json& profile, const json& baseline, const std::string& baseline_path) {
  const json* layers = at(profile, "/gains/n_layers");
  if (layers == nullptr || !layers->is_number_integer()) return;  // a profile without them: compared statistic by statistic
  const std::int64_t n = layers->get<std::int64_t>();
  const std::string here = " (this checkpoint: " + std::to_string(n) + " layers";
  const json* hd = at(profile, "/gains/head_dim");
  const std::string here_hd = hd != nullptr ? ", head_dim " + hd->dump() + ")" : ")";
  if (isReference(baseline)) {
    // a reference records figures, not its shape: the deepest layer a figure names is the least it needs
    std::int64_t need = -1;
    std::string which;
    for (const auto& ptr : baselinePointers(baseline)) {
      if (ptr.rfind("/layers/", 0) != 0) continue;
      std::int64_t l = 0;
      std::size_t i = 8;
      for (; i < ptr.size() && i < 14 && std::isdigit(static_cast<unsigned char>(ptr[i])); ++i) l = l * 10 + (ptr[i] - '0');
      if (i > 8 && l > need) need = l, which = ptr;
    }
    if (need >= n)
      throw UsageError(baseline_path + ": another architecture: its figure " + which + " is of layer " + std::to_string(need) +
                       here + here_hd + "; compare a checkpoint of the reference's shape, or against a profile of its own kind");
    return;
  }
  const json* bl = at(baseline, "/gains/n_layers");
  const json* bh = at(baseline, "/gains/head_dim");
  if ((bl != nullptr && *bl != *layers) || (bh != nullptr && hd != nullptr && *bh != *hd))
    throw UsageError(baseline_path + ": another architecture: the baseline has " + (bl ? bl->dump() : "?") + " layers, head_dim " +
                     (bh ? bh->dump() : "?") + here + here_hd + "; a drift check compares checkpoints of one shape");
}

std::vector<std::string> unmatchedRules(const json& baseline, const json& tolerance, const std::string& tolerance_path) {
  const Tolerances tol = parseTolerance(tolerance, tolerance_path);
  const std::vector<std::string> pointers = baselinePointers(baseline);
  std::vector<std::string> out;
  for (std::size_t i = 0; i < tol.rules.size(); ++i)
    if (std::none_of(pointers.begin(), pointers.end(), [&](const std::string& p) { return ruleMatches(tol.rules[i].pattern, p); }))
      out.push_back("/rules/" + std::to_string(i) + " \"" + tol.rules[i].pattern + "\"");
  return out;
}

RegressionReport checkRegression(const json& profile, const json& baseline, const json& tolerance,
                                 const std::string& baseline_path, const std::string& tolerance_path) {
  const Tolerances tol = parseTolerance(tolerance, tolerance_path);
  RegressionReport rep;
  // validated on entry: a baseline that is not a whole profile or reference is exit 2 here
  const auto kind = documents::checkDocument(baseline, "baseline " + baseline_path,
                                      {documents::DocumentKind::profile, documents::DocumentKind::reference_profile});
  // `floor`: a deviation always allowed, whatever the tolerance file says (a published figure's rounding)
  auto check = [&](const std::string& ptr, const std::string& label, double b, double fallback, double floor = 0) {
    Check c;
    c.pointer = ptr;
    c.label = label;
    c.baseline = b;
    c.allowed = std::max(tol.allowed(ptr, b, fallback), floor);
    if (const json* v = at(profile, ptr)) c.actual = v->get<double>();
    else c.present = false;
    rep.checks.push_back(c);
  };
  checkComparable(baseline, profile.value("options", json::object()), baseline_path);
  checkSameArchitecture(profile, baseline, baseline_path);
  if (kind == documents::DocumentKind::reference_profile) {
    rep.baseline_kind = "reference";
    const json& figs = baseline["figures"];
    for (std::size_t i = 0; i < figs.size(); ++i) {
      const json& f = figs[i];
      const double b = f["value"].get<double>();
      const int d = f["decimals"].get<int>();
      // the published figure is the true value rounded to d decimals: half a unit either way,
      // plus a hair for the binary representation of both numbers. A tolerance file may widen
      // that, never narrow it: a figure cannot be checked closer than it was published
      const double half = 0.5 * std::pow(10.0, -d) * (1 + 1e-9) + 1e-12 * std::fabs(b);
      check(f["pointer"].get<std::string>(), f.value("label", f["pointer"].get<std::string>()), b, half, half);
    }
  } else {
    rep.baseline_kind = "profile";
    for (const auto& [ptr, b] : comparableStatistics(baseline)) check(ptr, ptr, b, 1e-12 * std::fabs(b));
  }
  // NaN or infinite gains are drift from any baseline that does not have them itself (a reference,
  // or a profile written before they were counted): the statistics leave them out, the gate must not
  const std::string nf = "/statistics/count_non_finite";
  const json* actual_nf = at(profile, nf);
  if (actual_nf && actual_nf->get<double>() > 0 &&
      std::none_of(rep.checks.begin(), rep.checks.end(), [&](const Check& c) { return c.pointer == nf; }))
    check(nf, "non-finite gains (NaN, inf)", 0, 0);
  // a gate that checks nothing must not pass
  if (rep.checks.empty()) throw FormatError("baseline " + baseline_path + ": no statistic to compare against");
  return rep;
}

}  // namespace omn::audit
