// The records a run writes and a resume reads back, checked without libtorch: the training log
// (log.jsonl, line by line), the run record (train.json) as a resume uses it, and the optimizer
// state's envelope. Fuzzed (tests/fuzz/fuzz_train.cpp): any bytes end in a record or an omn::Error
// naming the file and the place.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "omn/documents/train_document.h"

namespace omn::train {

// "checkpoints/step-NNNNNN.pt": the name train.json records for a step's checkpoint.
std::string checkpointFileName(std::int64_t step);

// Every line of `text` (the log's verified prefix) as a record: an object with an integer "step"
// after the previous one's (step 0 first), a numeric or null train_loss, an eval with a numeric or
// null heldout_loss. IntegrityError naming `path` and the line otherwise.
// `note` follows an unparsable line's message (a resume: the bytes a checkpoint's digest covers).
std::vector<nlohmann::json> parseLog(const std::string& path, const std::string& text,
                                     const std::string& note = " (within the part the checkpoint's digest covers)");

// train.json as a resume (and plot, report) reads it: an omn-audit/train@1 document (schema, ranges,
// checkpoint order), each checkpoint entry naming its own step's file, read once as its struct.
// FormatError naming the pointer otherwise.
struct RunRecord {
  documents::TrainDocument doc;
  bool has_checkpoint = false;
  std::int64_t last_step = 0;  // the last checkpoint's step (0: step 0's, or none)
};
RunRecord checkRunRecord(const nlohmann::json& doc, const std::string& path);

// A run named as its directory or as its train.json: the path of its train.json.
std::string runRecordPath(const std::string& run);

// The log a run record names in /log, beside it: its whole lines (the last one may still be in
// flight, as in a run still writing). FormatError for a /log that is not a file name beside it;
// UsageError when it cannot be read.
std::string runLogPath(const std::string& train_json, const documents::TrainDocument& record);
std::vector<documents::TrainLogRecord> readRunLog(const std::string& train_json, const documents::TrainDocument& record);

// The optimizer state's envelope (omn-audit/optimizer@1 metadata): its step must be `step` and its
// adamw_steps a count in [0, step]; returns adamw_steps. FormatError naming the file otherwise.
std::int64_t optimizerSteps(const nlohmann::json& metadata, const std::string& path, std::int64_t step);

}  // namespace omn::train
