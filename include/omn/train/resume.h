// What `train --resume` reads, verified before any of it is used: the run record (train.json)
// against its schema, its cross-field rules and the config and corpus given now; the checkpoint it
// resumes from and the optimizer state beside it against the digests the record holds. A resume
// never trusts a byte it did not check: a flipped byte, a doctored step or a wrong-typed field is
// exit 2 or 4 naming the file and the place, before a step is taken.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "omn/data/corpus.h"
#include "omn/documents/train_document.h"
#include "omn/train/run_files.h"
#include "omn/train/run_segments.h"
#include "omn/train/train_config.h"

namespace omn::train {

struct ResumePoint {
  bool has_checkpoint = false;                        // false: none yet (the run starts over)
  std::int64_t step = 0;                              // the last checkpoint's step (0: the step-0 checkpoint)
  std::vector<documents::RunCheckpoint> checkpoints;  // the record's /checkpoints
  std::string log;                                    // the log's verified prefix (restoreLog keeps it)
  std::vector<RunSegment> segments;                   // the record's /segments (recordedSegments): the run's past processes
};

// UsageError when there is no record or the run is not "running"; FormatError naming the pointer
// for a record that is not a valid omn-audit/train@1 document (types, ranges, checkpoint order,
// last_checkpoint_step against the checkpoints, a checkpoint path other than its step's file, segments
// out of order or whose tokens are not their steps' under the config);
// IntegrityError when the config or corpus is not the run's, when the checkpoint, its optimizer
// state or the log's first log_bytes bytes do not hash to their recorded digests (or have none
// recorded), or, for a run without a checkpoint started from /init/from, when that file is not the
// one the run started from.
ResumePoint verifyResume(const RunPaths& paths, const TrainConfig& c, const data::CorpusFiles& corpus);

// --resume of a run that already finished with this config: its record, its final checkpoint verified
// against the digest the record holds (IntegrityError otherwise): nothing is left to run, as study
// --resume keeps its finished runs. Empty when the run is not finished or was started with another
// config (verifyResume then says what is wrong).
std::optional<documents::TrainDocument> finishedRun(const RunPaths& paths, const TrainConfig& c);

}  // namespace omn::train
