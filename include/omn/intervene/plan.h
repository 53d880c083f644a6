// What a sweep will do, before it does it (`intervene --plan`): the expanded conditions, what each
// costs in layer passes, and the conditions that are equal by construction. Attention logits are
// bilinear in the Q and K gains (q·k, the gains before RoPE, which is linear), so a uniform scale
// α on Q equals α on K, α on Q and K together equals α² on either, and a logit factor of 1
// (scale ±1 on both, compensate) is the control. Such a condition spends a pass to measure only
// the stored dtype's rounding. No libtorch.
#pragma once
#include <cstddef>
#include <ostream>
#include <string>
#include <vector>

#include "omn/intervene/manifest.h"

namespace omn::intervene {

struct Equivalence {
  std::string id;    // the condition that adds nothing new
  std::string same;  // "control", or the id of the first condition it equals
  std::string why;
  bool sanity = false;  // compensate: meant to equal the control (a check, not waste)
};

// Conditions equal to the control or to an earlier condition by construction (uniform scales
// through their logit factor, compensate, noise 0, the same op spelled twice), in manifest order.
std::vector<Equivalence> equivalences(const std::vector<Condition>& conditions, int n_layers);

struct PlanFacts {
  int n_layers = 0;
  std::size_t rows = 0, seq_len = 0;
  std::vector<int> first_layers;  // per condition: the first layer it touches (GainState::firstLayer)
  // the time estimate: one pass over `timed_rows` rows (`timed_tokens` tokens of the `total_tokens`
  // all rows hold) took `timed_seconds` on `machine` ("AMD EPYC, 1 thread, cpu"); 0 rows: no
  // estimate. `unmeasured`: what the sweep does that the timed plain pass did not ("--kl").
  std::size_t timed_rows = 0, timed_tokens = 0, total_tokens = 0;
  double timed_seconds = 0;
  std::string machine, unmeasured;
};

// The plan as text: one line per condition (id, label, first layer touched, layers a pass runs
// without and with --cache-activations), the total, the time it would take without the cache (the
// timed pass scaled by tokens and passes) and the equivalences as warnings.
void printPlan(std::ostream& os, const Manifest& m, const std::vector<Condition>& conditions, const PlanFacts& f);

}  // namespace omn::intervene
