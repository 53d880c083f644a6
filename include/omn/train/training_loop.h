// The training loop as llm.c writes it: per step a batch, the forward pass and the backward pass,
// the gradient clip, the optimizer step; at logged steps a record, at evaluation steps the held-out
// evaluation, at checkpoint steps the weights, the optimizer state and train.json. The state
// between steps is named here (the model, its optimizers, the run's history, the step); each step
// is one member function, taken by run() in this order, so a resumed run repeats an uninterrupted
// one's arithmetic bit for bit.
#pragma once
#include <ATen/ATen.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "omn/documents/train_document.h"
#include "omn/eval/evaluator.h"
#include "omn/output/provenance.h"
#include "omn/train/batches.h"
#include "omn/train/heldout_eval.h"
#include "omn/train/optimizer_groups.h"
#include "omn/train/run_history.h"
#include "omn/train/run_segments.h"
#include "omn/train/run_setup.h"
#include "omn/train/trainer.h"

namespace omn::train {

class Trainer {
 public:
  // Everything checked (prepareRun), the starting weights loaded, the old run cleared, the
  // optimizer state and the history restored on a resume. `o` must outlive the Trainer.
  explicit Trainer(const TrainOptions& o);

  // To the last step or a divergence; returns the train.json document written.
  documents::TrainDocument run();

  // What one training step did.
  struct StepResult {
    BatchRows batch;
    double loss = 0, grad_norm = 0, lr_multiplier = 0;
  };
  // One step: the next batch, forward and backward, the clip, the optimizer step (the gradients
  // zeroed after it). Public for the unit tests, which drive steps one by one.
  StepResult trainStep();

  std::int64_t step() const { return step_; }
  const RunHistory& history() const { return history_; }
  const TrainableModel& model() const { return m_; }

 private:
  BatchRows nextBatch() const;
  double forwardBackward(const BatchRows& b);  // the loss; gradients accumulated in .grad()
  void dumpGradients() const;                   // --dump-grads: the first step's gradients
  double clipGradients();                       // the global norm before clipping
  void zeroGradients();
  // A log record: the step's numbers, and at evaluation steps the evaluation (`evaluation`, its
  // held-out loss). Appended to the log and printed.
  void record(const StepResult& r, const std::optional<Evaluation>& evaluation);
  void checkpoint(double last_loss);  // the weights, the optimizer state, train.json "running"
  void evaluateStart();               // step 0: L0 and the starting weights' checkpoint
  // SIGINT/SIGTERM between two steps: train.json records how far this segment got, then Interrupted.
  [[noreturn]] void interrupted(double last_loss);
  // train.json, with this process's segment brought up to now (`end`: RunSegment::end), written from
  // its struct. Written at the start, at each checkpoint, when stopped, and once at the end.
  documents::TrainDocument writeRecord(const std::string& status, double last_loss, const std::string& divergence, const char* end);
  // The record as it stands: what runs (whatRuns) and how far it got (`divergence`: why it diverged).
  documents::TrainDocument runRecord(const std::string& status, double last_loss, const std::string& divergence) const;
  documents::TrainDocument whatRuns() const;

  const TrainOptions& o_;
  const TrainConfig& c_;
  output::ProvenanceInfo prov_;
  const std::chrono::steady_clock::time_point started_;  // this segment's start, before prepareRun
  RunSetup s_;
  TrainableModel m_;
  OptimizerGroups optimizers_;
  const eval::Evaluator ev_;
  const nlohmann::json checkpoint_record_;  // what every checkpoint carries (architecture, config, corpus, code)
  const std::int64_t tokens_per_step_;
  RunHistory history_;
  std::vector<RunSegment> segments_;  // the run's past processes (a resume's record), this one last
  std::int64_t step_;
  std::chrono::steady_clock::time_point last_record_time_;
  double last_heldout_, last_tokens_per_second_ = 0;
};

}  // namespace omn::train
