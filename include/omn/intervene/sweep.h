// A manifest's sweep: the unmodified checkpoint as control (first and last), each condition applied
// to the gains, scored on the same rows, restored and verified bitwise; every finished condition
// journaled; the result assembled from the raw records (results.h).
#pragma once
#include <cstddef>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <optional>

#include "omn/documents/intervention_document.h"
#include "omn/eval/evaluator.h"
#include "omn/eval/session.h"
#include "omn/intervene/manifest.h"
#include "omn/intervene/ops.h"

namespace omn::intervene {

struct SweepOptions {
  std::string output_json, output_csv;
  bool force = false, resume = false;
  int shard_index = 0, shard_count = 1;
  bool cache_activations = false;
  std::size_t cache_budget_bytes = std::size_t{2} << 30;
  bool mechanism = false;
  bool kl = false;  // next-token distributions against the control's: KL, top-1 agreement, p(correct)
  bool progress = false;              // progress bars on stderr
  std::function<bool()> stop;         // set by SIGINT/SIGTERM
  std::optional<documents::Confirms> confirms;  // a confirmation sweep: the result it confirms, and its dtype
};

// The JSON and CSV outputs the sweep will write, checked (distinct, not an input, --force, directory
// writable); called before the checkpoint is opened, and again by runSweep. Returns {json, csv}.
std::pair<std::string, std::string> checkSweepOutputs(const Manifest& m, const SweepOptions& o, const std::vector<std::string>& inputs);

// The sweep's memory plan, decided once for the run and for --plan: whether the activation cache is
// kept (it fits --cache-budget and no condition touches layer 0; `cache` gets its layer), and a
// UsageError when --kl's hidden states (beside the cache) would not fit the budget.
bool planMemory(const std::vector<Condition>& conditions, const GainState& gains, const eval::Evaluator& ev, int n_layers,
                const SweepOptions& o, eval::ActivationCache& cache);

// Runs (or resumes) the sweep and writes the outputs (the document's JSON from its struct, the CSV);
// returns the result document. Throws Interrupted when stopped, IntegrityError when a restore or the
// closing control fails or the checkpoint changed during the run (checked after every pass, before
// it is journaled).
documents::InterventionDocument runSweep(const Manifest& m, eval::Session& s, const SweepOptions& o);

}  // namespace omn::intervene
