// The processes that trained a run, one segment each: the first start and every --resume. A run
// stopped and resumed on another host, build or OpenBLAS kernel is still one record, and its
// segments say where each step was trained: the steps each covered, when, for how long, on which
// CPU, OpenBLAS build and kernels, bf16 product kernel and build revision. The run's timing and
// compute totals (train.json's /timing) add up every segment, not only the last. No libtorch: what
// a resume reads back is checked here (fuzzed with the run record, tests/fuzz/fuzz_train.cpp).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace omn::train {

// One element of train.json's /segments (docs/train.md, "Segments"). Steps start_step + 1 to
// end_step were trained in it (the first segment also evaluated step 0); a segment stopped after
// its last checkpoint covers steps the next one trains again (its start_step below this end_step),
// and both count, as both were spent.
struct RunSegment {
  std::int64_t start_step = 0, end_step = 0;
  std::int64_t tokens = 0;  // tokens trained in it: (end_step - start_step) x batch_size x seq_len
  // "started" (the record before step 0's checkpoint), "checkpoint", "interrupted" (SIGINT or
  // SIGTERM), "finished", "diverged": when its record was last written; "unrecorded" for the one
  // segment a resume makes of a record written before segments were recorded (every field but the
  // steps and tokens null: that record cannot say how many processes trained it, nor where)
  std::string end = "started";
  std::optional<std::string> started_utc, finished_utc;
  std::optional<double> seconds;  // wall-clock, from the process's start of the run to its last record
  std::optional<int> threads;
  // as the provenance block records them: /host/cpu, /libraries/openblas (OpenBLAS's build string,
  // which names the kernels in use), /git_revision and /model_code_fingerprint; OPENBLAS_CORETYPE as
  // the process ran (null: unset); the bf16 product kernel chosen for the process (model/products.h)
  std::optional<std::string> cpu, openblas, openblas_coretype, bf16_products, git_revision, model_code_fingerprint;

  bool recorded() const { return end != "unrecorded"; }
};

nlohmann::json toJson(const RunSegment& s);
nlohmann::json segmentsJson(const std::vector<RunSegment>& segments);

// The segments of a run record checkRunRecord validated against the schema (every field typed). A
// record written before segments were recorded gets one "unrecorded" segment covering steps 0 to
// its last checkpoint (tokens from `tokens_per_step`; none when it has no checkpoint). FormatError
// naming the pointer when the segments break their order: each ends at or after its start, within
// /steps, and starts at or before the previous one's end (a resume continues from a checkpoint the
// previous segment wrote); the last one reaches the last checkpoint.
std::vector<RunSegment> recordedSegments(const nlohmann::json& doc, const std::string& path, std::int64_t tokens_per_step);

// train.json's /timing, over every segment: seconds (the recorded segments' wall-clock), tokens
// trained (every segment's, steps trained again included), tokens_per_second (the recorded
// segments' tokens over their seconds), segments (how many), unrecorded_steps (steps of segments
// whose time is unknown).
nlohmann::json timingJson(const std::vector<RunSegment>& segments);

}  // namespace omn::train
