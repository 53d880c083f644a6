// Internal to the report: the sections of a track of checkpoints (omn-audit/track@1) and of one
// training run (omn-audit/train@1): their summary rows and tables, from the documents alone.
#pragma once
#include "grid.h"
#include "omn/documents/track_document.h"
#include "omn/documents/train_document.h"

namespace omn::report {

// The findings a reader looks for first, appended to the summary.
void trackSummaryRows(Grid& g, const documents::TrackDocument& track);
void runSummaryRows(Grid& g, const documents::TrainDocument& train);

Grid trackGrid(const documents::TrackDocument& track);  // one row per checkpoint
Grid runGrid(const documents::TrainDocument& train);       // the run's record: steps, losses, time
Grid runEvalsGrid(const documents::TrainDocument& train);  // one row per held-out evaluation

}  // namespace omn::report
