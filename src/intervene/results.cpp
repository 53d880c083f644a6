#include "omn/intervene/results.h"

#include <cmath>
#include <sstream>

#include "omn/errors.h"
#include "omn/io/choice.h"
#include "omn/eval/divergence.h"
#include "omn/eval/scores_json.h"
#include "omn/output/json_file.h"
#include "omn/output/table.h"

namespace omn::intervene {

using nlohmann::json;

namespace {

json intervalJson(const eval::Interval& i) {
  return {{"estimate", output::finiteOrNull(i.estimate)}, {"low", output::finiteOrNull(i.low)}, {"high", output::finiteOrNull(i.high)}};
}

json controlBlock(const PassRecord& rec, const eval::BootstrapSpec& b, int groups) {
  json c = {{"result", eval::scoresJson(rec.scores, b, groups)},
            {"gain_sha256", rec.gain_sha256},
            {"seconds", rec.seconds},
            {"mechanism", rec.mechanism}};
  if (!rec.divergence.is_null()) c["divergence"] = rec.divergence;  // the closing control against the opening one
  return c;
}

// --kl: the raw per-sequence sums as journaled, and the summary recomputed from them
void addDivergence(json& c, const PassRecord& rec, json& vs_control) {
  if (rec.divergence.is_null()) return;
  c["divergence"] = rec.divergence;
  vs_control["divergence"] = eval::divergenceSummary(rec.divergence, rec.scores.tokens);
}

}  // namespace

json assembleResults(const ResultsInput& in) {
  json out = in.base;
  const eval::SequenceScores& open = in.control_open.scores;
  const eval::SequenceScores& close = in.control_close.scores;
  // The largest difference over every sequence (the loop once stopped at the first difference, so
  // the "max" was the first one); identical means every sum equal, NaN matching NaN.
  double max_diff = 0;
  bool identical = open.nll_sum.size() == close.nll_sum.size() && open.tokens == close.tokens;
  const std::size_t n = std::min(open.nll_sum.size(), close.nll_sum.size());
  for (std::size_t i = 0; i < n; ++i) {
    const bool both_nan = std::isnan(open.nll_sum[i]) && std::isnan(close.nll_sum[i]);
    if (!both_nan) max_diff = std::max(max_diff, std::fabs(open.nll_sum[i] - close.nll_sum[i]));
    identical = identical && (open.nll_sum[i] == close.nll_sum[i] || both_nan);
  }
  out["control"] = {{"open", controlBlock(in.control_open, in.bootstrap, in.groups)},
                    {"close", controlBlock(in.control_close, in.bootstrap, in.groups)},
                    {"reproduced_bitwise", identical},
                    {"max_abs_nll_difference", output::finiteOrNull(max_diff)}};  // null: infinite (a sum finite in one pass only)
  // multiplicity: the family is every condition of the manifest, in every shard
  const bool adjust = in.bootstrap.multiplicity != eval::Multiplicity::None;
  const std::size_t m = std::max<std::size_t>(in.family_size, in.conditions.size());
  const double simultaneous = adjust ? 1 - (1 - in.bootstrap.confidence) / static_cast<double>(m) : 0;
  if (adjust)
    out["multiplicity"] = {{"method", io::choiceName(eval::kMultiplicity, in.bootstrap.multiplicity)},
                           {"family_size", m},
                           {"simultaneous_confidence", simultaneous},
                           {"complete", in.conditions.size() == m}};
  if (in.noise_floor > 0) out["noise_floor"] = {{"nats_per_token", in.noise_floor}, {"basis", in.noise_floor_basis}};
  std::vector<double> p_values;
  json conds = json::array();
  for (const PassRecord& rec : in.conditions) {
    const eval::SequenceScores& sc = rec.scores;
    const eval::PairedInterval p = eval::pairedBootstrap(open, sc, in.bootstrap, simultaneous);
    p_values.push_back(p.p_value);
    json c = conditionIdentity(rec);
    c["result"] = eval::scoresJson(sc, in.bootstrap, in.groups);
    c["vs_control"] = {{"delta_nll_per_token", intervalJson(p.delta_nll_per_token)},
                       {"ppl_ratio", intervalJson(p.ppl_ratio)},
                       {"method", "paired percentile bootstrap: the same resampled sequences for control and condition"},
                       {"resamples", in.bootstrap.resamples},
                       {"confidence", in.bootstrap.confidence},
                       {"seed", in.bootstrap.seed},
                       {"p_value", p.p_value},
                       {"below_noise_floor", std::fabs(p.delta_nll_per_token.estimate) < in.noise_floor}};
    if (adjust)
      c["vs_control"]["simultaneous"] = {{"confidence", simultaneous},
                                         {"delta_nll_per_token", intervalJson(p.simultaneous_delta)},
                                         {"ppl_ratio", intervalJson(p.simultaneous_ratio)}};
    addDivergence(c, rec, c["vs_control"]);
    // a value reported elsewhere, beside the measured one: never mixed into any computed number
    if (rec.reported_perplexity) {
      c["reported"] = {{"perplexity", *rec.reported_perplexity}, {"ratio_to_reported_control", nullptr}};
      if (out.contains("reported") && out["reported"]["control_perplexity"].is_number())
        c["reported"]["ratio_to_reported_control"] = *rec.reported_perplexity / out["reported"]["control_perplexity"].get<double>();
    }
    conds.push_back(std::move(c));
  }
  // adjusted p-values: Bonferroni per condition; Holm needs the whole family (a shard records null)
  if (adjust) {
    const bool whole = in.conditions.size() == m;
    const std::vector<double> holm = whole ? eval::holmAdjusted(p_values) : std::vector<double>{};
    for (std::size_t k = 0; k < conds.size(); ++k)
      conds[k]["vs_control"]["p_value_adjusted"] =
          in.bootstrap.multiplicity == eval::Multiplicity::Bonferroni ? json(std::min(1.0, p_values[k] * static_cast<double>(m)))
          : whole                                                     ? json(holm[k])
                                                                      : json(nullptr);
  }
  out["conditions"] = conds;
  if (in.exact_control && !identical)
    throw IntegrityError("the closing control did not reproduce the opening one bitwise (largest NLL difference " +
                         output::general(max_diff) + "): the restore or the evaluation is not deterministic");
  // --kl: the closing control's distributions against the opening one's must be the same, KL 0
  if (const json& d = in.control_close.divergence; in.exact_control && !d.is_null())
    for (const json& v : d.at("kl_sum"))
      if (v.is_null() || v.get<double>() != 0)
        throw IntegrityError("the closing control's next-token distributions differ from the opening one's (KL " +
                             (v.is_null() ? std::string("NaN") : output::general(v.get<double>())) +
                             " nats in a sequence): the restore or the evaluation is not deterministic");
  return out;
}

std::string resultsCsv(const json& r) {
  std::ostringstream os;
  // the op's parameters in typed columns (empty where the op has none); a composite's steps are
  // in its label and the JSON
  os << "id,label,op,target,layers,value,seed,mode,source_layer,coordinates,perplexity,ci_low,ci_high,ppl_ratio,ratio_low,ratio_high,"
        "delta_nll_per_token,delta_low,delta_high,tokens,restore_ok,kl_per_token,top1_agreement,delta_p_correct\n";
  auto num = [](const json& v) { return v.is_null() ? std::string("nan") : output::general(v.get<double>()); };
  // RFC 4180: quoted only where a field needs it, so every column reads the same way
  auto quote = [](const std::string& s) { return output::csvField(s); };
  // layers in one form: "all", or ranges "0-1;5"
  auto layers = [](const json& v) {
    if (!v.is_array()) return v.is_string() ? v.get<std::string>() : std::string();
    std::string out;
    for (std::size_t i = 0; i < v.size();) {
      std::size_t j = i;
      while (j + 1 < v.size() && v[j + 1].is_number_integer() && v[j].is_number_integer() && v[j + 1].get<long long>() == v[j].get<long long>() + 1) ++j;
      out += (out.empty() ? "" : ";") + v[i].dump() + (j > i ? "-" + v[j].dump() : "");
      i = j + 1;
    }
    return out;
  };
  const auto& ctl = r["control"]["open"]["result"];
  os << "control," << quote(kControlLabel) << ",none,,,,,,,," << num(ctl["perplexity"]) << "," << num(ctl["perplexity_ci"]["low"]) << ","
     << num(ctl["perplexity_ci"]["high"]) << ",1,1,1,0,0,0," << ctl["tokens"] << ",true" << (r.value("kl", false) ? ",0,1,0" : ",,,")
     << "\n";
  for (const auto& c : r["conditions"]) {
    const auto& op = c["op"];
    auto field = [&](const char* k) {
      if (!op.contains(k)) return std::string();
      const json& v = op[k];
      if (v.is_string()) return quote(v.get<std::string>());
      if (v.is_number_float()) return output::general(v.get<double>());
      return v.is_number() ? v.dump() : quote(v.dump());  // an integer as is; a list or object as its JSON
    };
    std::string params;
    for (const char* k : {"value", "seed", "mode", "source_layer", "coordinates"}) params += field(k) + ",";
    const std::string layer_text = op.contains("layers") ? quote(layers(op["layers"])) : "";
    const auto& res = c["result"];
    const auto& v = c["vs_control"];
    os << c["id"].get<std::string>() << "," << quote(c["label"]) << "," << op["op"].get<std::string>() << "," << field("target") << ","
       << layer_text << "," << params << num(res["perplexity"]) << "," << num(res["perplexity_ci"]["low"]) << ","
       << num(res["perplexity_ci"]["high"]) << "," << num(v["ppl_ratio"]["estimate"]) << "," << num(v["ppl_ratio"]["low"]) << ","
       << num(v["ppl_ratio"]["high"]) << "," << num(v["delta_nll_per_token"]["estimate"]) << ","
       << num(v["delta_nll_per_token"]["low"]) << "," << num(v["delta_nll_per_token"]["high"]) << "," << res["tokens"] << ","
       << (c["restore"]["ok"].get<bool>() ? "true" : "false");
    if (v.contains("divergence")) {
      const json& d = v["divergence"];
      os << "," << num(d["kl_per_token"]) << "," << num(d["top1_agreement"]) << "," << num(d["delta_p_correct"]) << "\n";
    } else {
      os << ",,,\n";
    }
  }
  return os.str();
}

void printResultsTable(std::ostream& os, const json& r) {
  auto f = [](const json& v, int d) { return v.is_null() ? std::string("nan") : output::fixed(v.get<double>(), d); };
  const auto& ctl = r["control"]["open"]["result"];
  const bool kl = r.value("kl", false);
  std::vector<std::string> head = {"id", "condition", "perplexity", output::ciLabel(ctl["perplexity_ci"]["confidence"].get<double>()),
                                   "ratio vs control", "ratio CI", "restore"};
  if (kl) head.insert(head.end(), {"KL/token (nats)", "top-1 agree"});
  output::Table t(head);
  std::vector<std::string> control_row = {"control", kControlLabel, f(ctl["perplexity"], 3),
                                          "[" + f(ctl["perplexity_ci"]["low"], 3) + ", " + f(ctl["perplexity_ci"]["high"], 3) + "]", "1", "", ""};
  if (kl) control_row.insert(control_row.end(), {"0", "1"});
  t.add(control_row);
  for (const auto& c : r["conditions"]) {
    const auto& res = c["result"];
    const auto& q = c["vs_control"]["ppl_ratio"];
    std::vector<std::string> row = {c["id"].get<std::string>(), c["label"].get<std::string>(), f(res["perplexity"], 3),
                                    "[" + f(res["perplexity_ci"]["low"], 3) + ", " + f(res["perplexity_ci"]["high"], 3) + "]",
                                    f(q["estimate"], 4), "[" + f(q["low"], 4) + ", " + f(q["high"], 4) + "]",
                                    c["restore"]["ok"].get<bool>() ? "bitwise" : "FAILED"};
    if (kl && c["vs_control"].contains("divergence")) {
      const json& d = c["vs_control"]["divergence"];
      row.insert(row.end(), {output::significant(d["kl_per_token"].is_null() ? NAN : d["kl_per_token"].get<double>(), 3),
                             f(d["top1_agreement"], 4)});
    } else if (kl) {
      row.insert(row.end(), {"", ""});
    }
    t.add(row);
  }
  t.print(os);
  std::string below;
  for (const auto& c : r["conditions"])
    if (c["vs_control"].value("below_noise_floor", false)) below += (below.empty() ? "" : ", ") + c["id"].get<std::string>();
  if (!below.empty())
    os << "warning: " << below << ": |ΔNLL| below the noise floor of the working dtype (" << output::general(r["noise_floor"]["nats_per_token"].get<double>())
       << " nats/token): confirm in fp32 (/model/dtype fp32)\n";
  const json& diff = r["control"]["max_abs_nll_difference"];  // null: infinite
  const double largest = diff.is_number() ? diff.get<double>() : INFINITY;
  os << "closing control "
     << (r["control"]["reproduced_bitwise"].get<bool>() ? "reproduced the opening one bitwise"
                                                        : "differs from the opening one by up to " + output::general(largest))
     << "\n";
}

}  // namespace omn::intervene
