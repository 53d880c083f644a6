// The processes that trained a run, one segment each: the first start and every --resume. A run
// stopped and resumed on another host, build or OpenBLAS kernel is still one record, and its
// segments say where each step was trained: the steps each covered, when, for how long, on which
// CPU, OpenBLAS build and kernels, bf16 product kernel and build revision. The run's timing and
// compute totals (train.json's /timing) add up every segment, not only the last. No libtorch: what
// a resume reads back is checked here (fuzzed with the run record, tests/fuzz/fuzz_train.cpp).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "omn/documents/train_document.h"

namespace omn::train {

// One element of train.json's /segments (docs/train.md, "Segments"): documents::RunSegment.
using RunSegment = documents::RunSegment;

// The segments of a run record checkRunRecord read (schema-valid, typed). A record written before
// segments were recorded gets one "unrecorded" segment covering steps 0 to its last checkpoint
// (tokens from `tokens_per_step`; none when it has no checkpoint). FormatError naming the pointer
// when the segments break their order: each ends at or after its start, within /steps, and starts
// at or before the previous one's end (a resume continues from a checkpoint the previous segment
// wrote); the last one reaches the last checkpoint.
std::vector<RunSegment> recordedSegments(const documents::TrainDocument& doc, const std::string& path, std::int64_t tokens_per_step);

// train.json's /timing, over every segment: seconds (the recorded segments' wall-clock), tokens
// trained (every segment's, steps trained again included), tokens_per_second (the recorded
// segments' tokens over their seconds), segments (how many), unrecorded_steps (steps of segments
// whose time is unknown).
documents::TrainTiming runTiming(const std::vector<RunSegment>& segments);

}  // namespace omn::train
