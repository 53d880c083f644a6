#include "omn/audit/regression.h"

#include <algorithm>
#include <cmath>
#include <regex>

#include "omn/errors.h"

namespace omn::audit {
namespace {

using nlohmann::json;

struct Rule {
  std::regex pattern;
  double abs = 0, rel = 0;
};

std::regex globPointer(const std::string& glob) {
  std::string re;
  for (char c : glob) {
    if (c == '*') re += "[^/]*";
    else if (std::string("\\^$.|?+()[]{}").find(c) != std::string::npos) (re += '\\') += c;
    else re += c;
  }
  return std::regex(re);
}

double number(const json& j, const std::string& file, const std::string& ptr) {
  if (!j.is_number()) throw UsageError(file + ": " + ptr + ": expected a number, got " + j.type_name());
  return j.get<double>();
}

struct Tolerances {
  bool given = false;
  double def_abs = 0, def_rel = 0;
  std::vector<Rule> rules;

  // allowed deviation for pointer p around baseline b; `fallback` when no file was given.
  double allowed(const std::string& p, double b, double fallback) const {
    if (!given) return fallback;
    for (const auto& r : rules)
      if (std::regex_match(p, r.pattern)) return std::max(r.abs, r.rel * std::fabs(b));
    return std::max(def_abs, def_rel * std::fabs(b));
  }
};

Tolerances parseTolerance(const json& t, const std::string& file) {
  Tolerances tol;
  if (t.is_null()) return tol;
  tol.given = true;
  if (!t.is_object()) throw UsageError(file + ": expected a JSON object");
  for (auto it = t.begin(); it != t.end(); ++it)
    if (it.key() != "schema" && it.key() != "default" && it.key() != "rules")
      throw UsageError(file + ": /" + it.key() + ": unknown key (expected schema, default, rules)");
  if (t.value("schema", "") != "omn-audit/tolerance@1")
    throw UsageError(file + ": /schema: expected \"omn-audit/tolerance@1\"");
  auto absRel = [&](const json& o, const std::string& ptr, double* a, double* r) {
    if (!o.is_object()) throw UsageError(file + ": " + ptr + ": expected {\"abs\": x, \"rel\": y}");
    for (auto it = o.begin(); it != o.end(); ++it)
      if (it.key() != "abs" && it.key() != "rel" && it.key() != "pointer")
        throw UsageError(file + ": " + ptr + "/" + it.key() + ": unknown key");
    if (o.contains("abs")) *a = number(o["abs"], file, ptr + "/abs");
    if (o.contains("rel")) *r = number(o["rel"], file, ptr + "/rel");
    if (*a < 0 || *r < 0) throw UsageError(file + ": " + ptr + ": tolerances must be >= 0");
  };
  if (t.contains("default")) absRel(t["default"], "/default", &tol.def_abs, &tol.def_rel);
  if (t.contains("rules")) {
    if (!t["rules"].is_array()) throw UsageError(file + ": /rules: expected an array");
    for (std::size_t i = 0; i < t["rules"].size(); ++i) {
      const json& r = t["rules"][i];
      const std::string ptr = "/rules/" + std::to_string(i);
      if (!r.is_object() || !r.contains("pointer") || !r["pointer"].is_string())
        throw UsageError(file + ": " + ptr + "/pointer: expected a JSON pointer pattern (\"/layers/*/q/mean\")");
      Rule rule;
      rule.pattern = globPointer(r["pointer"].get<std::string>());
      absRel(r, ptr, &rule.abs, &rule.rel);
      tol.rules.push_back(rule);
    }
  }
  return tol;
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

bool Check::ok() const { return present && std::fabs(actual - baseline) <= allowed; }

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
                        "count_above_threshold", "count_negative", "count_in_1_2", "count_above_32"})
    add(std::string("/statistics/") + k);
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

RegressionReport checkRegression(const json& profile, const json& baseline, const json& tolerance,
                                 const std::string& baseline_path, const std::string& tolerance_path) {
  const Tolerances tol = parseTolerance(tolerance, tolerance_path);
  RegressionReport rep;
  const std::string schema = baseline.is_object() ? baseline.value("schema", "") : "";
  auto check = [&](const std::string& ptr, const std::string& label, double b, double fallback) {
    Check c;
    c.pointer = ptr;
    c.label = label;
    c.baseline = b;
    c.allowed = tol.allowed(ptr, b, fallback);
    if (const json* v = at(profile, ptr)) c.actual = v->get<double>();
    else c.present = false;
    rep.checks.push_back(c);
  };
  if (schema == "omn-audit/reference-profile@1") {
    rep.baseline_kind = "reference";
    if (baseline.contains("options") && baseline["options"].contains("threshold") &&
        baseline["options"]["threshold"] != profile["options"]["threshold"])
      throw UsageError(baseline_path + ": /options/threshold: the reference's figures use threshold " +
                       baseline["options"]["threshold"].dump() + ", this profile " + profile["options"]["threshold"].dump());
    if (!baseline.contains("figures") || !baseline["figures"].is_array())
      throw UsageError(baseline_path + ": /figures: expected an array of {pointer, value, decimals}");
    const json& figs = baseline["figures"];
    for (std::size_t i = 0; i < figs.size(); ++i) {
      const std::string ptr = "/figures/" + std::to_string(i);
      const json& f = figs[i];
      if (!f.is_object() || !f.contains("pointer") || !f["pointer"].is_string() || !f.contains("value") ||
          !f.contains("decimals") || !f["decimals"].is_number_integer())
        throw UsageError(baseline_path + ": " + ptr + ": expected {\"pointer\": str, \"value\": number, \"decimals\": int}");
      const double b = number(f["value"], baseline_path, ptr + "/value");
      const int d = f["decimals"].get<int>();
      // the published figure is the true value rounded to d decimals: half a unit either way,
      // plus a hair for the binary representation of both numbers
      const double half = 0.5 * std::pow(10.0, -d);
      check(f["pointer"].get<std::string>(), f.value("label", f["pointer"].get<std::string>()), b,
            half * (1 + 1e-9) + 1e-12 * std::fabs(b));
    }
  } else if (schema.rfind("omn-audit/profile@", 0) == 0) {
    rep.baseline_kind = "profile";
    for (const char* opt : {"threshold", "hist_edges", "pivot"})
      if (baseline.contains("options") && baseline["options"].value(opt, json()) != profile["options"].value(opt, json()))
        throw UsageError(baseline_path + ": /options/" + opt + ": the baseline was computed with " +
                         baseline["options"].value(opt, json()).dump() + ", this profile with " +
                         profile["options"].value(opt, json()).dump() + "; use the same options");
    for (const auto& [ptr, b] : comparableStatistics(baseline)) check(ptr, ptr, b, 1e-12 * std::fabs(b));
  } else {
    throw UsageError(baseline_path + ": /schema: expected \"omn-audit/profile@1\" or "
                     "\"omn-audit/reference-profile@1\", got " + (schema.empty() ? std::string("none") : "\"" + schema + "\""));
  }
  // NaN or infinite gains are drift from any baseline that does not have them itself (a reference,
  // or a profile written before they were counted): the statistics leave them out, the gate must not
  const std::string nf = "/statistics/count_non_finite";
  const json* actual_nf = at(profile, nf);
  if (actual_nf && actual_nf->get<double>() > 0 &&
      std::none_of(rep.checks.begin(), rep.checks.end(), [&](const Check& c) { return c.pointer == nf; }))
    check(nf, "non-finite gains (NaN, inf)", 0, 0);
  return rep;
}

}  // namespace omn::audit
