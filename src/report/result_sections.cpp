// The sections of a sweep result (omn-audit/intervention@1) and of an eval result (eval@1): the
// results table, reported values beside measured ones, the groups of sequences, the summary rows.
#include <cmath>

#include "omn/eval/bootstrap.h"
#include "omn/intervene/results.h"
#include "omn/output/table.h"
#include "sections.h"

namespace omn::report {
using documents::InterventionDocument;
using documents::SweepCondition;
using output::ciLabel;
using output::fixed;
using output::significant;

// An interval as a cell: its bounds, or why there are none (one sequence scored: eval::kNoIntervalMethod)
std::string ciCell(const documents::PerplexityInterval& ci, int decimals) {
  if (!ci.low && !ci.high && ci.method == eval::kNoIntervalMethod) return "[no interval: one sequence]";
  return "[" + f(ci.low, decimals) + ", " + f(ci.high, decimals) + "]";
}

namespace {

// a paired interval: no bounds beside an estimate is a sweep of one sequence (a non-finite condition has no estimate)
std::string intervalCell(const documents::Interval& q, int decimals) {
  if (q.estimate && !q.low && !q.high) return "[no interval: one sequence]";
  return "[" + f(q.low, decimals) + ", " + f(q.high, decimals) + "]";
}

// --kl's two columns of a condition: its KL per token and its top-1 agreement with the control.
std::vector<std::string> klCells(const SweepCondition& c) {
  const auto& dv = c.vs_control.divergence;
  return {dv && dv->kl_per_token ? significant(*dv->kl_per_token, 3) : "—", dv ? f(dv->top1_agreement, 4) : "—"};
}

}  // namespace

Grid sweepGrid(const InterventionDocument& r) {
  const documents::Scores& ctl = r.control.open.result;
  const bool kl = r.kl.value_or(false);  // --kl: the distributions against the control's
  const std::string ci = ciLabel(ctl.perplexity_ci.confidence);
  Grid g{{"id", "condition", "perplexity (exp nats/token)", "perplexity " + ci, "ratio vs control (×)", "ratio " + ci + " (×)",
          "ΔNLL/token (nats)", "touched (tensors)", "restore"},
         {}};
  if (kl) g.head.insert(g.head.end(), {"KL/token (nats)", "top-1 agreement (share)"});
  g.rows.push_back({"control", intervene::kControlLabel, f(ctl.perplexity, 3), ciCell(ctl.perplexity_ci, 3), "1", "", "0", "", ""});
  if (kl) g.rows.back().insert(g.rows.back().end(), {"0", "1"});
  for (const auto& c : r.conditions) {
    const documents::Interval& q = c.vs_control.ppl_ratio;
    g.rows.push_back({c.id, c.label, f(c.result.perplexity, 3), ciCell(c.result.perplexity_ci, 3), f(q.estimate, 4), intervalCell(q, 4),
                      f(c.vs_control.delta_nll_per_token.estimate, 5), std::to_string(c.touched.size()), c.restore.ok ? "bitwise" : "FAILED"});
    if (kl) {
      const auto cells = klCells(c);
      g.rows.back().insert(g.rows.back().end(), cells.begin(), cells.end());
    }
  }
  return g;
}

bool hasReported(const InterventionDocument& r) {
  if (!r.reported) return false;
  for (const auto& c : r.conditions)
    if (c.reported) return true;
  return false;
}

// Values reported elsewhere (the historical record) beside the ones measured here, each labelled as
// what it is: a reported number is quoted, never recomputed; a measured one comes from this run.
Grid reportedGrid(const InterventionDocument& r) {
  const documents::Scores& ctl = r.control.open.result;
  const std::string ci = ciLabel(ctl.perplexity_ci.confidence);
  Grid g{{"id", "condition", "reported perplexity", "reported ratio (×)", "measured perplexity", "measured " + ci, "measured ratio (×)",
          "measured ratio " + ci + " (×)"},
         {}};
  const std::optional<double>& rc = r.reported->control_perplexity;
  g.rows.push_back({"control", intervene::kControlLabel, rc ? f(rc, 2) : "—", rc ? "1" : "—", f(ctl.perplexity, 3),
                    ciCell(ctl.perplexity_ci, 3), "1", ""});
  for (const auto& c : r.conditions) {
    if (!c.reported) continue;
    const documents::Interval& q = c.vs_control.ppl_ratio;
    const std::optional<double>& rr = c.reported->ratio_to_reported_control;
    g.rows.push_back({c.id, c.label, f(c.reported->perplexity, 2), rr ? fixed(*rr, 2) + "×" : "—", f(c.result.perplexity, 3),
                      ciCell(c.result.perplexity_ci, 3), f(q.estimate, 4) + "×", intervalCell(q, 4)});
  }
  return g;
}

std::string reportedNote(const InterventionDocument& r) {
  return "Reported: quoted from " + r.reported->source +
         ", not recomputed (no raw data). Measured: this run, recomputable from the raw per-sequence values in the result. "
         "Ratios are each against their own control.";
}

Grid evalGrid(const documents::EvalDocument& r) {
  Grid g{{"group", "first sequence (index)", "sequences (count)", "tokens (count)", "perplexity (exp nats/token)"}, {}};
  for (std::size_t i = 0; i < r.result.groups.size(); ++i) {
    const documents::ScoreGroup& x = r.result.groups[i];
    g.rows.push_back({std::to_string(i), std::to_string(x.first), std::to_string(x.count), std::to_string(x.tokens), f(x.perplexity, 4)});
  }
  return g;
}

// The control, how many conditions the paired interval resolves, the largest and the smallest change.
void sweepSummaryRows(Grid& g, const InterventionDocument& r) {
  const documents::Scores& ctl = r.control.open.result;
  const std::string ci = ciLabel(ctl.perplexity_ci.confidence);
  g.rows.push_back({"control perplexity", f(ctl.perplexity, 3) + " " + ciCell(ctl.perplexity_ci, 3) + " (" + ci + " over sequences)"});
  std::size_t resolved = 0, n = 0;
  const SweepCondition* hi = nullptr;
  const SweepCondition* lo = nullptr;
  auto size = [](const SweepCondition& c) { return std::fabs(std::log(*c.vs_control.ppl_ratio.estimate)); };
  for (const auto& c : r.conditions) {
    const documents::Interval& q = c.vs_control.ppl_ratio;
    if (!q.estimate) continue;
    ++n;
    if (q.low && q.high && (*q.low > 1 || *q.high < 1)) ++resolved;
    const double e = size(c);
    if (!hi || e > size(*hi)) hi = &c;
    if (!lo || e < size(*lo)) lo = &c;
  }
  g.rows.push_back({"conditions whose paired " + ci + " of the ratio excludes 1", std::to_string(resolved) + " of " + std::to_string(n)});
  auto cond = [&](const SweepCondition& c) {
    const documents::Interval& q = c.vs_control.ppl_ratio;
    return c.id + " " + c.label + ": ×" + f(q.estimate, 4) + " " + intervalCell(q, 4);
  };
  if (hi) g.rows.push_back({"largest change", cond(*hi)});
  if (lo && lo != hi) g.rows.push_back({"smallest change", cond(*lo)});
}

void evalSummaryRows(Grid& g, const documents::EvalDocument& r) {
  g.rows.push_back({"perplexity", f(r.result.perplexity, 4) + " " + ciCell(r.result.perplexity_ci, 4)});
}

}  // namespace omn::report
