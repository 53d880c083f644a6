// Internal to the sweep (sweep.cpp): its scoring passes, run in order with one progress line and
// the sweep's ETA, each returning what its pass record (intervene/pass_record.h) is made of.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include <optional>

#include "omn/documents/intervention_document.h"
#include "omn/eval/evaluator.h"
#include "omn/intervene/sweep.h"
#include "omn/model/gain_overlay.h"
#include "omn/output/progress.h"

namespace omn::intervene::detail {

struct Pass {
  eval::SequenceScores scores;
  double seconds = 0;
  documents::MechanismTable mechanism;                  // per layer, when asked for
  std::optional<documents::DivergenceSums> divergence;  // against the control (--kl): eval::divergenceSums
};

// What a pass does with the control's final hidden states under --kl: nothing, keep them (the
// control), or compare its next-token distributions with theirs (a condition, the closing control)
enum class Against { Nothing, Keep, Compare };

// Runs the sweep's passes in order and owns their bookkeeping (step counter, time so far for the
// ETA); a pass stopped by SIGINT/SIGTERM is Interrupted naming the journal.
class PassRunner {
 public:
  PassRunner(const eval::Evaluator& ev, eval::ActivationCache& cache, const SweepOptions& o, std::size_t total_steps,
             std::string jpath)
      : ev_(ev), cache_(cache), o_(o), tty_(o.progress && output::ProgressBar::stderrIsTerminal()), total_(total_steps),
        jpath_(std::move(jpath)) {}

  void skip() { ++step_; }      // a step whose record the journal already holds
  void addStep() { ++total_; }  // an extra pass (refilling the cache on resume)

  Pass run(const std::string& what, bool capture, bool from_cache, bool mechanism, Against against = Against::Nothing,
           const model::GainOverlay* gains = nullptr);

 private:
  // "ppl 12.345, 3456 tok/s, sweep ETA 78 s": the passes left at the mean duration of those run so far
  std::string progressText(const eval::Progress& p, double here) const;

  const eval::Evaluator& ev_;
  eval::ActivationCache& cache_;
  std::vector<at::Tensor> control_final_;  // --kl: the control's final hidden states, per batch
  const SweepOptions& o_;
  const bool tty_;
  std::size_t total_, step_ = 0, runs_ = 0;
  double seconds_ = 0;
  std::string jpath_;
};

}  // namespace omn::intervene::detail
