// The sections of a training study (omn-audit/study@1): each arm's learning-rate sensitivity, the
// arms compared by seed, the summary rows.
#include "omn/output/table.h"
#include "sections.h"

namespace omn::report {
using output::ciLabel;
using output::significant;

namespace {

// a learning rate and the like: three significant digits, "—" for none
std::string sci(const std::optional<double>& v) { return v ? significant(*v, 3) : "—"; }
std::string lossOrDash(const std::optional<double>& v) { return v ? f(v, 4) : "—"; }

// why an arm has no LR sensitivity; a study written before the reason was recorded has none
std::string noteOf(const documents::StudyArm& arm) { return arm.lr_sensitivity_note.value_or("reason not recorded"); }

}  // namespace

Grid studyArmsGrid(const documents::StudyDocument& s) {
  Grid g{{"arm", "runs (count)", "diverged (count)", "LR sensitivity (nats)", "largest stable LR", "best LR", "best held-out loss (nats)", "seed sd (nats)"}, {}};
  for (const auto& a : s.arms)
    g.rows.push_back({a.arm, std::to_string(a.runs), std::to_string(a.diverged),
                      a.lr_sensitivity ? f(a.lr_sensitivity, 4) : "— (" + noteOf(a) + ")", sci(a.largest_stable_lr), sci(a.best_lr),
                      lossOrDash(a.best_loss), lossOrDash(a.seed_spread)});
  return g;
}

Grid studyComparisonGrid(const documents::StudyDocument& s) {
  Grid g{{"learning rate", "arms", "pairs (count)", "held-out loss on − off (nats)", ciLabel(s.confidence) + " (nats)", "diverged on / off (count)"}, {}};
  for (const auto& c : s.comparison)
    for (const auto& p : c.per_lr) {
      const documents::SeriesSummary& d = p.difference;
      g.rows.push_back({sci(p.lr), c.on + " − " + c.off, std::to_string(d.n), lossOrDash(d.mean),
                        d.ci_low ? "[" + f(d.ci_low, 4) + ", " + f(d.ci_high, 4) + "]" : "—",
                        std::to_string(p.diverged.on) + " / " + std::to_string(p.diverged.off)});
    }
  return g;
}

// Each arm's best learning rate and held-out loss.
void studySummaryRows(Grid& g, const documents::StudyDocument& s) {
  for (const auto& a : s.arms)
    g.rows.push_back({"arm " + a.arm + ": best LR, held-out loss", sci(a.best_lr) + ", " + lossOrDash(a.best_loss) + " (" +
                                                                       std::to_string(a.diverged) + " of " + std::to_string(a.runs) +
                                                                       " runs diverged)"});
}

}  // namespace omn::report
