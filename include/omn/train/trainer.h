// omn-audit train: one run of an OMN-style model from scratch on a corpus. The forward pass is the
// shared model::Transformer (the one eval uses), the held-out loss comes from eval::Evaluator, the
// per-layer health from the same LayerMechanism that intervene --mechanism records.
#pragma once
#include <functional>
#include <string>

#include "omn/documents/train_document.h"
#include "omn/train/train_config.h"

namespace omn::train {

struct TrainOptions {
  TrainConfig config;
  std::string out_dir;
  bool resume = false, force = false, progress = false;
  int threads = 0;
  std::string dump_grads;  // write the first step's gradients here (torch.save; parity checks)
  std::function<bool()> stop;  // asked before each step (SIGINT/SIGTERM): then Interrupted, exit 130
  std::string resume_command;  // what the Interrupted message tells the user to run
};

// Runs (or resumes) the training; returns the train.json document it wrote. A diverged run ends
// normally (status "diverged", no final.pt): divergence is a result, not an error. Stopped (`stop`)
// between two steps, it throws Interrupted naming the checkpoint --resume continues from; the run
// directory stays as the last checkpoint left it. The loop itself is train::Trainer (training_loop.h).
documents::TrainDocument runTraining(const TrainOptions& options);

}  // namespace omn::train
