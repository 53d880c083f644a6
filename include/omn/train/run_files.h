// What a training run keeps in its output directory, and how it is written and read back:
//   config.json            the exact bytes of the training config (a resume must match them)
//   log.jsonl              one JSON record per logged step (train loss, grad norm, rates, held-out
//                          loss and per-layer health at evaluation steps)
//   checkpoints/step-NNNNNN.pt        weights (torch.save zip, OMN's envelope)
//   checkpoints/step-NNNNNN.optim.pt  optimizer state beside them (for --resume)
//   final.pt, train.json   the end of the run (omn-audit/train@1)
// Every file is written atomically (tmp + fsync + rename); one run holds an exclusive lock.
#pragma once
#include <ATen/ATen.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "omn/documents/train_document.h"
#include "omn/train/optimizers.h"
#include "omn/train/parameters.h"

namespace omn::train {

struct RunPaths {
  std::string dir, config, log, checkpoints, final_checkpoint, train_json, lock;
  explicit RunPaths(const std::string& out_dir);
  std::string stepCheckpoint(std::int64_t step) const;
  std::string stepOptimizer(std::int64_t step) const;
  // "checkpoints/step-NNNNNN.pt": the name train.json records, relative to the run directory as
  // written (no symbolic link resolved: a moved checkpoints/ link keeps its runs resumable)
  static std::string checkpointName(std::int64_t step);
};

// An exclusive flock on the run directory's lock file, held for the object's life. Throws
// UsageError when another process holds it.
class RunLock {
 public:
  explicit RunLock(const std::string& path);
  ~RunLock();
  RunLock(const RunLock&) = delete;
  RunLock& operator=(const RunLock&) = delete;

 private:
  int fd_ = -1;
};

// The weights in OMN's envelope: {"model": state dict, "format", "step", "tokens_seen", "seed",
// "omn_audit": JSON text of `record` (architecture, config, optimizer, corpus, code revision)}.
// Returns the file's SHA-256.
std::string writeWeights(const std::string& path, const TrainableModel& m, const nlohmann::json& record, std::int64_t step,
                         std::int64_t tokens_seen, std::uint64_t seed);

struct OptimizerState {
  AdamW* adamw = nullptr;
  Muon* muon = nullptr;  // null under "adamw"
};
// Returns the file's SHA-256 (train.json records it: a resume verifies the state before reading it).
std::string writeOptimizer(const std::string& path, const OptimizerState& s, const std::vector<std::string>& adamw_names,
                           const std::vector<std::string>& muon_names, std::int64_t step);
// Restores the moments and step count; throws FormatError naming the file and the tensor (or the
// field) when the file does not match the parameters or its adamw_steps is not a count in [0, step].
void readOptimizer(const std::string& path, const OptimizerState& s, const std::vector<at::Tensor>& adamw_params,
                   const std::vector<std::string>& adamw_names, const std::vector<at::Tensor>& muon_params,
                   const std::vector<std::string>& muon_names, std::int64_t step);

// The log as a resume continues it: `text`, what it held when the checkpoint was written (verified
// against the record's digest by verifyResume), written back in place of the file (records after
// the checkpoint and a torn tail are cut). Returns its records; a line that is not a record with
// increasing integer steps is an IntegrityError naming it.
std::vector<documents::TrainLogRecord> restoreLog(const std::string& path, const std::string& text);
// Appends the record as one line (its compact JSON); returns the line written (the trainer keeps the
// log's text for the digest each checkpoint records).
std::string appendLog(const std::string& path, const documents::TrainLogRecord& record);

}  // namespace omn::train
