#include "omn/intervene/results.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "omn/errors.h"
#include "omn/eval/divergence.h"
#include "omn/eval/scores_record.h"
#include "omn/io/choice.h"
#include "omn/output/table.h"

namespace omn::intervene {

using nlohmann::json;

namespace {

// A finite number as itself, NaN/inf empty (null in the document)
std::optional<double> finiteResult(double v) { return std::isfinite(v) ? std::optional<double>(v) : std::nullopt; }

documents::Interval intervalRecord(const eval::Interval& i) {
  return {finiteResult(i.estimate), finiteResult(i.low), finiteResult(i.high)};
}

documents::ControlPass controlPass(const PassRecord& rec, const eval::BootstrapSpec& b, int groups) {
  // the closing control's divergence: against the opening one
  return {eval::scoresRecord(rec.scores, b, groups), rec.gain_sha256, rec.seconds, rec.mechanism, rec.divergence};
}

// The control before and after: their scores, and whether the closing one reproduced the opening one
// bitwise -- every sum equal, NaN matching NaN -- with the largest difference over every sequence
// (the loop once stopped at the first difference, so the "max" was the first one).
documents::ControlRecord controlRecord(const ResultsInput& in) {
  const eval::SequenceScores& open = in.control_open.scores;
  const eval::SequenceScores& close = in.control_close.scores;
  double max_diff = 0;
  bool identical = open.nll_sum.size() == close.nll_sum.size() && open.tokens == close.tokens;
  const std::size_t n = std::min(open.nll_sum.size(), close.nll_sum.size());
  for (std::size_t i = 0; i < n; ++i) {
    const bool both_nan = std::isnan(open.nll_sum[i]) && std::isnan(close.nll_sum[i]);
    if (!both_nan) max_diff = std::max(max_diff, std::fabs(open.nll_sum[i] - close.nll_sum[i]));
    identical = identical && (open.nll_sum[i] == close.nll_sum[i] || both_nan);
  }
  documents::ControlRecord c;
  c.open = controlPass(in.control_open, in.bootstrap, in.groups);
  c.close = controlPass(in.control_close, in.bootstrap, in.groups);
  c.reproduced_bitwise = identical;
  c.max_abs_nll_difference = finiteResult(max_diff);  // empty: infinite (a sum finite in one pass only)
  return c;
}

// On CPU the closing control must be the opening one: its scores bitwise, and under --kl its
// next-token distributions the same (KL 0). IntegrityError otherwise.
void requireReproduced(const ResultsInput& in, const documents::ControlRecord& control) {
  if (!in.exact_control) return;
  if (!control.reproduced_bitwise)
    throw IntegrityError("the closing control did not reproduce the opening one bitwise (largest NLL difference " +
                         output::general(control.max_abs_nll_difference.value_or(INFINITY)) +
                         "): the restore or the evaluation is not deterministic");
  if (const auto& d = in.control_close.divergence)
    for (const std::optional<double>& v : d->kl_sum)
      if (!v || *v != 0)
        throw IntegrityError("the closing control's next-token distributions differ from the opening one's (KL " +
                             (v ? output::general(*v) : std::string("NaN")) +
                             " nats in a sequence): the restore or the evaluation is not deterministic");
}

// The family every condition of the manifest belongs to, in every shard (multiplicity's m)
struct Family {
  bool adjust = false;           // a multiplicity correction was asked for
  std::size_t size = 0;          // m
  double simultaneous = 0;       // the simultaneous intervals' level, 1 - α/m (0: none)
};

Family familyOf(const ResultsInput& in) {
  Family f;
  f.adjust = in.bootstrap.multiplicity != eval::Multiplicity::None;
  f.size = std::max<std::size_t>(in.family_size, in.conditions.size());
  f.simultaneous = f.adjust ? 1 - (1 - in.bootstrap.confidence) / static_cast<double>(f.size) : 0;
  return f;
}

// A condition against the control: the paired bootstrap's intervals and p-value, the noise floor's
// flag, the simultaneous intervals (with multiplicity) and --kl's summary.
documents::VsControl vsControl(const eval::PairedInterval& p, const PassRecord& rec, const ResultsInput& in, const Family& f) {
  documents::VsControl v;
  v.delta_nll_per_token = intervalRecord(p.delta_nll_per_token);
  v.ppl_ratio = intervalRecord(p.ppl_ratio);
  v.method = rec.scores.nll_sum.size() < eval::kMinBootstrapSequences
                 ? eval::kNoIntervalMethod
                 : "paired percentile bootstrap: the same resampled sequences for control and condition";
  v.resamples = in.bootstrap.resamples;
  v.confidence = in.bootstrap.confidence;
  v.seed = in.bootstrap.seed;
  if (std::isfinite(p.p_value)) v.p_value = p.p_value;  // none of one sequence (no interval either)
  v.below_noise_floor = std::fabs(p.delta_nll_per_token.estimate) < in.noise_floor;
  if (f.adjust)
    v.simultaneous = documents::SimultaneousIntervals{f.simultaneous, intervalRecord(p.simultaneous_delta), intervalRecord(p.simultaneous_ratio)};
  if (rec.divergence) v.divergence = eval::divergenceSummary(*rec.divergence, rec.scores.tokens);
  return v;
}

// One condition of the document: what it was and did (its record), its scores, against the control,
// and a value reported elsewhere beside the measured one (never mixed into any computed number).
documents::SweepCondition conditionResult(const PassRecord& rec, const eval::PairedInterval& p, const ResultsInput& in, const Family& f) {
  documents::SweepCondition c = conditionIdentity(rec);
  c.result = eval::scoresRecord(rec.scores, in.bootstrap, in.groups);
  c.divergence = rec.divergence;  // --kl: the raw per-sequence sums as journaled
  c.vs_control = vsControl(p, rec, in, f);
  if (rec.reported_perplexity) {
    const auto& rc = in.base.reported;
    c.reported = documents::ReportedValue{
        *rec.reported_perplexity,
        rc && rc->control_perplexity ? std::optional<double>(*rec.reported_perplexity / *rc->control_perplexity) : std::nullopt};
  }
  return c;
}

// Adjusted p-values: Bonferroni per condition; Holm needs the whole family (a shard records null).
void adjustPValues(std::vector<documents::SweepCondition>& conditions, const std::vector<double>& p_values, const ResultsInput& in,
                   const Family& f) {
  if (!f.adjust) return;
  const bool whole = in.conditions.size() == f.size;
  const bool none = std::any_of(p_values.begin(), p_values.end(), [](double p) { return !std::isfinite(p); });  // one sequence
  const std::vector<double> holm = whole && !none ? eval::holmAdjusted(p_values) : std::vector<double>{};
  for (std::size_t k = 0; k < conditions.size(); ++k) {
    auto& adjusted = conditions[k].vs_control.p_value_adjusted;  // present: null for Holm in a shard
    if (none) adjusted.emplace(std::nullopt);
    else if (in.bootstrap.multiplicity == eval::Multiplicity::Bonferroni) adjusted.emplace(std::min(1.0, p_values[k] * static_cast<double>(f.size)));
    else if (whole) adjusted.emplace(holm[k]);
    else adjusted.emplace(std::nullopt);
  }
}

}  // namespace

documents::InterventionDocument assembleResults(const ResultsInput& in) {
  documents::InterventionDocument out = in.base;
  out.control = controlRecord(in);
  const Family f = familyOf(in);
  out.multiplicity.reset();
  if (f.adjust)
    out.multiplicity = documents::Multiplicity{io::choiceName(eval::kMultiplicity, in.bootstrap.multiplicity),
                                               static_cast<std::int64_t>(f.size), f.simultaneous, in.conditions.size() == f.size};
  out.noise_floor.reset();
  if (in.noise_floor > 0) out.noise_floor = documents::NoiseFloor{in.noise_floor, in.noise_floor_basis};
  std::vector<double> p_values;
  out.conditions.clear();
  for (const PassRecord& rec : in.conditions) {
    const eval::PairedInterval p = eval::pairedBootstrap(in.control_open.scores, rec.scores, in.bootstrap, f.simultaneous);
    p_values.push_back(p.p_value);
    out.conditions.push_back(conditionResult(rec, p, in, f));
  }
  adjustPValues(out.conditions, p_values, in, f);
  requireReproduced(in, out.control);
  return out;
}

namespace {

std::string resultCsvNumber(const std::optional<double>& v) { return v ? output::general(*v) : std::string("nan"); }

// layers in one form: "all", or ranges "0-1;5"
std::string csvLayers(const json& v) {
  if (!v.is_array()) return v.is_string() ? v.get<std::string>() : std::string();
  std::string out;
  for (std::size_t i = 0; i < v.size();) {
    std::size_t j = i;
    while (j + 1 < v.size() && v[j + 1].is_number_integer() && v[j].is_number_integer() && v[j + 1].get<long long>() == v[j].get<long long>() + 1) ++j;
    out += (out.empty() ? "" : ";") + v[i].dump() + (j > i ? "-" + v[j].dump() : "");
    i = j + 1;
  }
  return out;
}

// One parameter of the op as the manifest recorded it (empty where the op has none): a string quoted
// where it needs it (RFC 4180), a number as written, a list or object as its JSON
std::string csvOpField(const json& op, const char* k) {
  if (!op.contains(k)) return std::string();
  const json& v = op[k];
  if (v.is_string()) return output::csvField(v.get<std::string>());
  if (v.is_number_float()) return output::general(v.get<double>());
  return v.is_number() ? v.dump() : output::csvField(v.dump());
}

void csvCondition(std::ostream& os, const documents::SweepCondition& c) {
  const json& op = c.op.recorded;
  std::string params;
  for (const char* k : {"value", "seed", "mode", "source_layer", "coordinates"}) params += csvOpField(op, k) + ",";
  const std::string layer_text = op.contains("layers") ? output::csvField(csvLayers(op["layers"])) : "";
  const documents::Scores& res = c.result;
  const documents::VsControl& v = c.vs_control;
  os << c.id << "," << output::csvField(c.label) << "," << c.op.name << "," << csvOpField(op, "target") << "," << layer_text << ","
     << params << resultCsvNumber(res.perplexity) << "," << resultCsvNumber(res.perplexity_ci.low) << "," << resultCsvNumber(res.perplexity_ci.high) << ","
     << resultCsvNumber(v.ppl_ratio.estimate) << "," << resultCsvNumber(v.ppl_ratio.low) << "," << resultCsvNumber(v.ppl_ratio.high) << ","
     << resultCsvNumber(v.delta_nll_per_token.estimate) << "," << resultCsvNumber(v.delta_nll_per_token.low) << ","
     << resultCsvNumber(v.delta_nll_per_token.high) << "," << res.tokens << "," << (c.restore.ok ? "true" : "false");
  if (v.divergence)
    os << "," << resultCsvNumber(v.divergence->kl_per_token) << "," << resultCsvNumber(v.divergence->top1_agreement) << ","
       << resultCsvNumber(v.divergence->delta_p_correct) << "\n";
  else
    os << ",,,\n";
}

}  // namespace

std::string resultsCsv(const documents::InterventionDocument& r) {
  std::ostringstream os;
  // the op's parameters in typed columns (empty where the op has none); a composite's steps are
  // in its label and the JSON
  os << "id,label,op,target,layers,value,seed,mode,source_layer,coordinates,perplexity,ci_low,ci_high,ppl_ratio,ratio_low,ratio_high,"
        "delta_nll_per_token,delta_low,delta_high,tokens,restore_ok,kl_per_token,top1_agreement,delta_p_correct\n";
  const documents::Scores& ctl = r.control.open.result;
  os << "control," << output::csvField(kControlLabel) << ",none,,,,,,,," << resultCsvNumber(ctl.perplexity) << ","
     << resultCsvNumber(ctl.perplexity_ci.low) << "," << resultCsvNumber(ctl.perplexity_ci.high) << ",1,1,1,0,0,0," << ctl.tokens << ",true"
     << (r.kl.value_or(false) ? ",0,1,0" : ",,,") << "\n";
  for (const documents::SweepCondition& c : r.conditions) csvCondition(os, c);
  return os.str();
}

namespace {

std::string tableNumber(const std::optional<double>& v, int digits) { return v ? output::fixed(*v, digits) : std::string("nan"); }

std::vector<std::string> tableRow(const documents::SweepCondition& c, bool kl) {
  const documents::Scores& res = c.result;
  const documents::Interval& q = c.vs_control.ppl_ratio;
  std::vector<std::string> row = {c.id, c.label, tableNumber(res.perplexity, 3),
                                  "[" + tableNumber(res.perplexity_ci.low, 3) + ", " + tableNumber(res.perplexity_ci.high, 3) + "]",
                                  tableNumber(q.estimate, 4), "[" + tableNumber(q.low, 4) + ", " + tableNumber(q.high, 4) + "]",
                                  c.restore.ok ? "bitwise" : "FAILED"};
  if (kl && c.vs_control.divergence) {
    const documents::DivergenceSummary& d = *c.vs_control.divergence;
    row.insert(row.end(), {output::significant(d.kl_per_token.value_or(NAN), 3), tableNumber(d.top1_agreement, 4)});
  } else if (kl) {
    row.insert(row.end(), {"", ""});
  }
  return row;
}

}  // namespace

void printResultsTable(std::ostream& os, const documents::InterventionDocument& r) {
  const documents::Scores& ctl = r.control.open.result;
  const bool kl = r.kl.value_or(false);
  std::vector<std::string> head = {"id", "condition", "perplexity", output::ciLabel(ctl.perplexity_ci.confidence),
                                   "ratio vs control", "ratio CI", "restore"};
  if (kl) head.insert(head.end(), {"KL/token (nats)", "top-1 agree"});
  output::Table t(head);
  std::vector<std::string> control_row = {"control", kControlLabel, tableNumber(ctl.perplexity, 3),
                                          "[" + tableNumber(ctl.perplexity_ci.low, 3) + ", " + tableNumber(ctl.perplexity_ci.high, 3) + "]",
                                          "1", "", ""};
  if (kl) control_row.insert(control_row.end(), {"0", "1"});
  t.add(control_row);
  for (const documents::SweepCondition& c : r.conditions) t.add(tableRow(c, kl));
  t.print(os);
  std::string below;
  for (const documents::SweepCondition& c : r.conditions)
    if (c.vs_control.below_noise_floor.value_or(false)) below += (below.empty() ? "" : ", ") + c.id;
  if (ctl.sequences.nll_sum.size() < eval::kMinBootstrapSequences)
    os << "warning: one sequence scored: no interval and no p-value (a bootstrap over sequences needs at least two rows)\n";
  if (!below.empty())
    os << "warning: " << below << ": |ΔNLL| below the noise floor of the working dtype ("
       << output::general(r.noise_floor ? r.noise_floor->nats_per_token : 0) << " nats/token): confirm in fp32 (/model/dtype fp32)\n";
  const double largest = r.control.max_abs_nll_difference.value_or(INFINITY);  // empty: infinite
  os << "closing control "
     << (r.control.reproduced_bitwise ? "reproduced the opening one bitwise" : "differs from the opening one by up to " + output::general(largest))
     << "\n";
}

}  // namespace omn::intervene
