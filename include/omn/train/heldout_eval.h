// The trainer's evaluation at a step: the held-out loss over the config's eval rows (the positions
// eval scores) and the health of each layer -- the metrics of train/evaluation.h, measured by the
// forward pass's mechanism observer (eval/mechanism.h, what intervene --mechanism records), and with
// QK-norm the statistics of the Q and K gains.
#pragma once
#include "omn/eval/evaluator.h"
#include "omn/train/evaluation.h"
#include "omn/train/parameters.h"

namespace omn::train {

Evaluation evaluateHeldout(const eval::Evaluator& ev, const TrainableModel& m);

}  // namespace omn::train
