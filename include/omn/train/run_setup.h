// What a training run checks and reads before its first expensive step, in one place and in this
// order: the device, the corpus, the output directory (created, locked, an old run resumed --
// verified byte for byte -- or refused without --force), that no output is an input, the thread
// count, the two token streams and the held-out rows, the token ids against the vocabulary, and
// the sizes (checkpoints under 4 GiB, one batch's logits in memory). Any failure is a UsageError,
// FormatError or IntegrityError naming the file, the flag or the JSON pointer; nothing is written
// before these pass except the run directory itself.
#pragma once
#include <ATen/ATen.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "omn/data/corpus.h"
#include "omn/eval/token_set.h"
#include "omn/train/parameters.h"
#include "omn/train/resume.h"
#include "omn/train/run_files.h"
#include "omn/train/trainer.h"

namespace omn::train {

struct RunSetup {
  explicit RunSetup(const std::string& out_dir) : paths(out_dir) {}
  RunPaths paths;
  std::unique_ptr<RunLock> lock;  // held for the run's life
  at::Device device{at::kCPU};
  data::CorpusFiles corpus;
  bool had_run = false;  // --out held a run's files before this start
  ResumePoint resume;    // under --resume: what the record and the log verified
  bool from_checkpoint = false;  // a resume with a checkpoint to continue from (step 0's included)
  std::int64_t start = 0;        // the step the run continues after
  int threads = 0;               // as set for the process
  eval::TokenSet train_set;
  std::vector<eval::Row> eval_rows;
  double parameter_count = 0;
};

RunSetup prepareRun(const TrainOptions& o);

// The weights the run starts from: the resumed checkpoint's, /init/from's, or a fresh init.
TrainableModel startingModel(const RunSetup& s, const TrainConfig& c);

// After the starting weights are loaded (/init/from may lie in the old run): a fresh start over an
// old run deletes its files (never the --config given), and a resume or --force removes what a
// killed writer left (NAME.tmp.PID; the lock is held, so nothing of this run is mid-write).
void clearOldRun(const RunSetup& s, const TrainOptions& o);

}  // namespace omn::train
